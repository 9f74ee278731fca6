package io.nereus.generation;

/** Reading the physical target of an index record failed. */
public final class PhysicalReadException extends RuntimeException {
    /** What the failure shows about the target. */
    public enum Reason {
        /** The target (ledger, entry, object) does not exist. */
        MISSING,
        /** The bytes do not match their checksum or do not describe the record's range. */
        CORRUPT,
        /** A transient failure; says nothing about the target. */
        TRANSIENT,
        /** This engine has no reader for the target's kind. */
        UNSUPPORTED
    }

    private final Reason reason;

    public PhysicalReadException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
