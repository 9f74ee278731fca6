package io.nereus.wal;

/**
 * A stored WAL batch cannot be decoded: truncated, not a WAL batch, of an unknown format version, or its
 * checksum does not match. The batch is unusable evidence; the message says which check failed.
 */
public final class WalFormatException extends RuntimeException {
    /** Which check failed. */
    public enum Reason { TRUNCATED, BAD_MAGIC, UNKNOWN_VERSION, MALFORMED, CHECKSUM_MISMATCH }

    private final Reason reason;

    public WalFormatException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
