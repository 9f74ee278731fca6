package io.nereus.metadata;

import java.util.Objects;

/**
 * The state of one WAL slice, stored under {@code (WAL, sliceId)}. The per-stream ranges a slice covers
 * are stored beside it under {@code (WAL, sliceId, sid)} as {@link OffsetRange}s.
 *
 * @param state    lifecycle state
 * @param writerId the broker whose WAL writer created the slice; non-empty
 */
public record WalSlice(WalSliceState state, String writerId) {
    public WalSlice {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(writerId, "writerId");
        if (writerId.isEmpty()) {
            throw new IllegalArgumentException("WAL slice writer id must not be empty");
        }
    }

    public WalSlice withState(WalSliceState next) {
        return new WalSlice(state.transitionTo(next), writerId);
    }
}
