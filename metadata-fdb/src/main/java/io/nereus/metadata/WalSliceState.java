package io.nereus.metadata;

/**
 * Lifecycle of a WAL slice (one BookKeeper ledger of the multi-stream WAL), recorded by {@link WalSliceStore}.
 *
 * <pre>
 *   OPEN ──roll over, writer close, or recovery──▶ SEALED ──every range superseded, trimmed or deleted──▶ COLLECTING
 * </pre>
 *
 * <p>OPEN receives WAL batches; only commits into an OPEN slice are accepted. SEALED is closed for writes (its
 * ledger closed by its writer, or fenced and closed by slice recovery), its per-stream ranges are final, and it
 * may be materialized. COLLECTING means no record of the lookup or FALLBACK spaces targets it any more (see
 * {@link CollectionStore#markCollecting}) and generation-0 repair refuses it: the ledger is deleted after the read
 * grace period and then the slice's keys are removed, which is the slice's end. Every state may go to itself.
 * {@link #code()} is stored and never changes.
 */
public enum WalSliceState {
    OPEN(1),
    SEALED(2),
    COLLECTING(3);

    private final int code;

    WalSliceState(int code) {
        this.code = code;
    }

    /** The stable stored code. */
    public int code() {
        return code;
    }

    public static WalSliceState fromCode(int code) {
        for (WalSliceState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown WAL slice state code " + code);
    }

    public boolean canTransitionTo(WalSliceState next) {
        return switch (this) {
            case OPEN -> next == OPEN || next == SEALED;
            case SEALED -> next == SEALED || next == COLLECTING;
            case COLLECTING -> next == COLLECTING;
        };
    }

    /**
     * Returns {@code next} when the transition is allowed.
     *
     * @throws IllegalStateException naming both states when it is not
     */
    public WalSliceState transitionTo(WalSliceState next) {
        if (!canTransitionTo(next)) {
            throw new IllegalStateException("WAL slice state cannot go from " + this + " to " + next);
        }
        return next;
    }
}
