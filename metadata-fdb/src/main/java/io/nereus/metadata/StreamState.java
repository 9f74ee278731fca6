package io.nereus.metadata;

/**
 * Lifecycle of a stream, stored in its head.
 *
 * <pre>
 *   OPEN ──seal──▶ SEALED
 *     │              │
 *     └───delete─────┴──▶ DELETING
 * </pre>
 *
 * <p>OPEN accepts commits. SEALED (a terminated Pulsar topic) accepts no commits but serves reads and
 * keeps its cursors. DELETING is terminal: metadata and data are being removed in bounded steps. Every
 * state may go to itself (retried operations). {@link #code()} is stored and never changes.
 */
public enum StreamState {
    OPEN(1),
    SEALED(2),
    DELETING(3);

    private final int code;

    StreamState(int code) {
        this.code = code;
    }

    /** The stable stored code. */
    public int code() {
        return code;
    }

    public static StreamState fromCode(int code) {
        for (StreamState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown stream state code " + code);
    }

    /** True when commits may advance the head. */
    public boolean acceptsCommits() {
        return this == OPEN;
    }

    public boolean canTransitionTo(StreamState next) {
        return switch (this) {
            case OPEN -> true;
            case SEALED -> next == SEALED || next == DELETING;
            case DELETING -> next == DELETING;
        };
    }

    /**
     * Returns {@code next} when the transition is allowed.
     *
     * @throws IllegalStateException naming both states when it is not
     */
    public StreamState transitionTo(StreamState next) {
        if (!canTransitionTo(next)) {
            throw new IllegalStateException("stream state cannot go from " + this + " to " + next);
        }
        return next;
    }
}
