package io.nereus.metadata;

/**
 * Lifecycle of a generation-index record.
 *
 * <pre>
 *   COMMITTED ──quarantine──▶ QUARANTINED ──retire──▶ RETIRED
 *       │                                              ▲
 *       └──────────────────retire──────────────────────┘
 * </pre>
 *
 * <p>A record is born COMMITTED when it is published; only COMMITTED records serve reads. Nothing returns
 * to COMMITTED: a repaired representation is a new generation. QUARANTINED and RETIRED may go to
 * themselves so that a retried quarantine or retirement is a no-op. {@link #code()} is stored and never
 * changes.
 */
public enum IndexRecordState {
    /** Published and readable. */
    COMMITTED(1),
    /** Evidence showed the target unusable (missing or corrupt); kept out of reads, kept for diagnosis. */
    QUARANTINED(2),
    /** Superseded, trimmed or quarantined for good; its target is garbage once no reader can hold it. */
    RETIRED(3);

    private final int code;

    IndexRecordState(int code) {
        this.code = code;
    }

    /** The stable stored code. */
    public int code() {
        return code;
    }

    public static IndexRecordState fromCode(int code) {
        for (IndexRecordState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown index record state code " + code);
    }

    /** True when a record in this state may serve reads. */
    public boolean isReadable() {
        return this == COMMITTED;
    }

    /** Whether a record in this state may move to {@code next}. */
    public boolean canTransitionTo(IndexRecordState next) {
        return switch (this) {
            case COMMITTED -> next == QUARANTINED || next == RETIRED;
            case QUARANTINED -> next == QUARANTINED || next == RETIRED;
            case RETIRED -> next == RETIRED;
        };
    }

    /**
     * Returns {@code next} when the transition is allowed.
     *
     * @throws IllegalStateException naming both states when it is not
     */
    public IndexRecordState transitionTo(IndexRecordState next) {
        if (!canTransitionTo(next)) {
            throw new IllegalStateException("index record state cannot go from " + this + " to " + next);
        }
        return next;
    }
}
