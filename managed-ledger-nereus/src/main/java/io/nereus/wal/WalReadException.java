package io.nereus.wal;

/** Reading a WAL batch from BookKeeper failed; {@link #missing()} tells a gone ledger or entry from a transient error. */
public final class WalReadException extends RuntimeException {
    private final boolean missing;

    public WalReadException(boolean missing, String message, Throwable cause) {
        super(message, cause);
        this.missing = missing;
    }

    /** True when the ledger or entry does not exist (evidence of loss); false for a transient failure. */
    public boolean missing() {
        return missing;
    }
}
