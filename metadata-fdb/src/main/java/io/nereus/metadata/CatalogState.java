package io.nereus.metadata;

/**
 * Lifecycle of a catalog entry (one managed-ledger name).
 *
 * <pre>
 *   ACTIVE ──delete──▶ DELETING ──done──▶ DELETED
 * </pre>
 *
 * <p>A DELETED entry is kept so that the name's next incarnation number is known; creating the name again
 * replaces it with a new ACTIVE entry (new incarnation, stream id and ledger id), which is a new entry,
 * not a transition. Every state may go to itself. {@link #code()} is stored and never changes.
 */
public enum CatalogState {
    ACTIVE(1),
    DELETING(2),
    DELETED(3);

    private final int code;

    CatalogState(int code) {
        this.code = code;
    }

    /** The stable stored code. */
    public int code() {
        return code;
    }

    public static CatalogState fromCode(int code) {
        for (CatalogState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown catalog state code " + code);
    }

    public boolean canTransitionTo(CatalogState next) {
        return switch (this) {
            case ACTIVE -> next == ACTIVE || next == DELETING;
            case DELETING -> next == DELETING || next == DELETED;
            case DELETED -> next == DELETED;
        };
    }

    /**
     * Returns {@code next} when the transition is allowed.
     *
     * @throws IllegalStateException naming both states when it is not
     */
    public CatalogState transitionTo(CatalogState next) {
        if (!canTransitionTo(next)) {
            throw new IllegalStateException("catalog state cannot go from " + this + " to " + next);
        }
        return next;
    }
}
