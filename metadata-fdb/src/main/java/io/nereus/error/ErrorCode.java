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
    /**
     * Another writer holds a newer writer epoch; this writer must stop. A metadata write conditional on the epoch
     * reports the epochs it compared as {@code headEpoch} and {@code requestEpoch}; a refused WAL commit adds the
     * {@code outcome} (an {@code AppendOutcome.Fenced}).
     */
    FENCED(false, "stream is fenced by a newer writer"),
    /** Stored bytes do not match their checksum; no other usable representation was found. */
    CHECKSUM_MISMATCH(false, "stored data does not match its checksum"),
    /** The stream has no head (never created, or removed), or an offset has no data in the view read. */
    NOT_FOUND(false, "not found"),
    /** The read's start offset lies inside an entry and the read asked for an exact entry start. */
    NOT_ENTRY_BOUNDARY(false, "offset is not the first offset of an entry"),
    /** The stream does not accept appends in its state (sealed, deleting) or this handle is not its writer. */
    NOT_WRITABLE(false, "stream does not accept appends"),
    /** The storage instance (or its WAL writer, or its object store) is closed. */
    CLOSED(false, "storage is closed"),
    /** Committed data is provably gone: an invariant was violated. */
    DATA_LOSS(false, "committed data is missing"),
    /**
     * The WAL write failed (or creating the slice's ledger did); nothing was committed; the stream re-reads its head
     * before the next append.
     */
    RETRIABLE_WRITE_FAILED(true, "write-ahead log write failed"),
    /**
     * The commit outcome is unknown, or the head moved; the stream re-reads its head before the next append. A
     * commit that refused the append (the head moved) adds the {@code outcome} (an {@code AppendOutcome}).
     */
    RETRIABLE_COMMIT_FAILED(true, "commit failed or its outcome is unknown"),
    /** An earlier append of the same stream failed, so this one was not committed. */
    RETRIABLE_ABANDONED(true, "append dropped after an earlier append of the stream failed"),
    /**
     * Reading a physical target failed transiently (BookKeeper unavailable, timeout), or this engine has no reader
     * for the target's kind; says nothing about the stored data.
     */
    RETRIABLE_READ_FAILED(true, "read of stored data failed"),
    /** Generation-0 repair ran out of budget or time; nothing was cached, the read may be retried. */
    RETRIABLE_REPAIR_INCOMPLETE(true, "index repair did not finish"),
    /**
     * Materializing a stream up to an offset did not finish: part of the range is in a WAL slice that is still
     * open (by another broker), or a step failed; what was published stays published, the request may be retried.
     */
    RETRIABLE_MATERIALIZATION_INCOMPLETE(true, "materialization did not finish"),
    /**
     * Stored metadata (a FoundationDB key or value) cannot be decoded: an unknown format version, truncated or
     * trailing bytes, or content that violates the value's invariants. Context: {@code value} or {@code key} (what
     * was decoded), {@code reason} (the failed check) and its details. Reading the same bytes again cannot help.
     */
    METADATA_FORMAT(false, "stored metadata cannot be decoded"),
    /**
     * The stored bytes of a physical target (a WAL batch or one of its sections, an object) are unusable: truncated,
     * not of this format, of an unknown format version, inconsistent, or failing their checksum. Context:
     * {@code reason} (for a WAL batch a {@code WalBatchCodec.Check}, else a static phrase) and where the bytes are.
     * The stream reports CHECKSUM_MISMATCH when no other representation serves the offset.
     */
    CORRUPT_DATA(false, "stored data is corrupt"),
    /**
     * A physical target (a WAL slice's ledger or one of its entries, an object) does not exist. Context: where it
     * was looked for. The stream reports DATA_LOSS when no other representation serves the offset.
     */
    TARGET_MISSING(false, "stored data does not exist at its target"),
    /**
     * An object store refused to create an object: an object of that name exists (objects are never overwritten),
     * or, in the filesystem store, the name clashes with a directory of other objects' names. The existing object
     * is untouched. Context: {@code name}.
     */
    OBJECT_EXISTS(false, "object already exists"),
    /**
     * A ranged object read asked for bytes beyond the object's end. Context: {@code name}, {@code offset},
     * {@code length}. A reader of a recorded target reports CORRUPT_DATA: the object is not the one recorded.
     */
    RANGE_NOT_SATISFIABLE(false, "byte range is not within the object"),
    /**
     * The object store refused the request for a reason retrying cannot change until the store or its
     * configuration does: access denied, no such bucket, a request it does not support (such as a conditional
     * write). Context: {@code name} or {@code bucket}, the HTTP {@code status} and the store's {@code errorCode}.
     */
    OBJECT_STORE_REFUSED(false, "object store refused the request"),
    /**
     * An object store request failed transiently (an I/O error, a network failure or timeout, a throttled or
     * failed server); the same call may succeed later. A failed put may or may not have created the object:
     * callers put under a new name, the other is garbage. Context: {@code name} and what failed.
     */
    RETRIABLE_OBJECT_STORE_FAILED(true, "object store request failed"),
    /**
     * The Kafka adapter refused an append because a record batch in it breaks a rule of Kafka's v2 batch format
     * (magic, length, CRC-32C, record count, offsets, timestamps) or one the adapter adds; nothing of the append was
     * stored. Context: {@code batch} (its index in the append), {@code position} (its byte position), {@code rule}
     * (a {@code BatchRule} of io.nereus.kafka) and the values the rule compared.
     */
    INVALID_RECORD_BATCH(false, "record batch is invalid"),
    /**
     * The Kafka adapter refused an idempotent producer's batch whose sequence does not continue the producer's last
     * stored batch (Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER); nothing of the append was stored. Context: {@code batch},
     * {@code producerId}, {@code epoch}, {@code sequence} (the batch's first), {@code lastSequence} (the stored).
     */
    OUT_OF_ORDER_SEQUENCE(false, "producer sequence is out of order"),
    /**
     * The Kafka adapter refused an idempotent producer's batch whose producer epoch is older than the one the stream
     * has seen (Kafka's INVALID_PRODUCER_EPOCH: the producer was fenced by a newer instance); nothing of the append
     * was stored. Context: {@code batch}, {@code producerId}, {@code epoch}, {@code currentEpoch}.
     */
    INVALID_PRODUCER_EPOCH(false, "producer epoch is older than the stream's"),
    /**
     * A Kafka fetch or delete-records offset is outside the partition's log {@code [logStartOffset, highWatermark]}
     * (Kafka's OFFSET_OUT_OF_RANGE). Context: {@code offset}, {@code logStartOffset}, {@code highWatermark}.
     */
    OFFSET_OUT_OF_RANGE(false, "offset is outside the log");

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
