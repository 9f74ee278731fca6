package io.nereus.metadata;

import java.util.Objects;

/**
 * The record of one WAL slice (one BookKeeper ledger of the multi-stream WAL; the slice id is the ledger id),
 * stored under {@code (WAL, sliceId)} and, as a copy, under {@code (WAL_STATE, state, sliceId)} for listing by
 * state. The per-stream ranges a slice covers are stored beside it under {@code (WAL, sliceId, sid)} as
 * {@link OffsetRange}s (see {@link WalSliceStore}).
 *
 * @param state       lifecycle state
 * @param writerId    the storage instance whose WAL writer created the slice; non-empty
 * @param incarnation the lease of that writer the slice was registered under ({@link WalWriterLease}), {@code > 0};
 *                    the slice counts as abandoned once that lease is gone or expired
 */
public record WalSlice(WalSliceState state, String writerId, long incarnation) {
    public WalSlice {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(writerId, "writerId");
        if (writerId.isEmpty()) {
            throw new IllegalArgumentException("WAL slice writer id must not be empty");
        }
        if (incarnation <= 0) {
            throw new IllegalArgumentException("WAL slice writer incarnation must be > 0: " + incarnation);
        }
    }

    /** A new slice of writer {@code writerId} under lease {@code incarnation}: OPEN. */
    public static WalSlice open(String writerId, long incarnation) {
        return new WalSlice(WalSliceState.OPEN, writerId, incarnation);
    }

    /**
     * This slice in state {@code next}.
     *
     * @throws IllegalStateException when {@link WalSliceState#canTransitionTo} forbids it
     */
    public WalSlice withState(WalSliceState next) {
        return new WalSlice(state.transitionTo(next), writerId, incarnation);
    }
}
