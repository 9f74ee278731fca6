package io.nereus.error;

/**
 * What went wrong, and whether the same call may succeed if retried. Messages are static per code; what varies
 * (stream, offset, slice, epochs, the failed check) is in the {@link NereusException}'s context. Callers decide on
 * the code: the facade maps it to a Pulsar exception ({@code io.nereus.pulsar.PulsarErrors}), the stream re-reads
 * its head after a retriable append failure, the resolver falls back after a physical read failure.
 */
public enum ErrorCode {
    /** The offset is below the stream's trim point; it will never be readable again. */
    OFFSET_TRIMMED(false, "offset is below the trim point"),
    /** Another writer holds a newer writer epoch; this writer must stop. */
    FENCED(false, "stream is fenced by a newer writer"),
    /** Stored bytes do not match their checksum; no other usable representation was found. */
    CHECKSUM_MISMATCH(false, "stored data does not match its checksum"),
    /** The stream (or a committed offset's data) does not exist. */
    NOT_FOUND(false, "not found"),
    /** The read's start offset lies inside an entry and the read asked for an exact entry start. */
    NOT_ENTRY_BOUNDARY(false, "offset is not the first offset of an entry"),
    /** The stream does not accept appends in its state (sealed, deleting) or this handle is not its writer. */
    NOT_WRITABLE(false, "stream does not accept appends"),
    /** The storage instance is closed. */
    CLOSED(false, "storage is closed"),
    /** Committed data is provably gone: an invariant was violated. */
    DATA_LOSS(false, "committed data is missing"),
    /** The WAL write failed; nothing was committed; the stream re-reads its head before the next append. */
    RETRIABLE_WRITE_FAILED(true, "write-ahead log write failed"),
    /** The commit outcome is unknown, or the head moved; the stream re-reads its head before the next append. */
    RETRIABLE_COMMIT_FAILED(true, "commit failed or its outcome is unknown"),
    /** An earlier append of the same stream failed, so this one was not committed. */
    RETRIABLE_ABANDONED(true, "append dropped after an earlier append of the stream failed"),
    /** Reading a physical target failed transiently (BookKeeper unavailable, timeout). */
    RETRIABLE_READ_FAILED(true, "read of stored data failed"),
    /** Generation-0 repair ran out of budget or time; nothing was cached, the read may be retried. */
    RETRIABLE_REPAIR_INCOMPLETE(true, "index repair did not finish");

    private final boolean retriable;
    private final String message;

    ErrorCode(boolean retriable, String message) {
        this.retriable = retriable;
        this.message = message;
    }

    public boolean retriable() {
        return retriable;
    }

    public String message() {
        return message;
    }
}
