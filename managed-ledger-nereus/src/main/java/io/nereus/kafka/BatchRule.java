package io.nereus.kafka;

/**
 * The rules an appended record batch must keep; an INVALID_RECORD_BATCH failure names the one broken in its
 * {@code rule} context. Each is checked with kafka-clients' own record-batch classes.
 */
public enum BatchRule {
    /** The append holds at least one batch. */
    NOT_EMPTY,
    /**
     * The bytes are whole batches: every batch's length field covers at least a v2 batch header and no more than the
     * bytes left, and no bytes trail the last batch; a batch is at most the configured maximum size.
     */
    LENGTH,
    /** Every batch is of magic 2 (Kafka's v2 record batch format; older message formats are refused). */
    MAGIC,
    /** The CRC-32C stored in the batch matches its bytes from the attributes on. */
    CRC,
    /** The batch's record count is {@code lastOffsetDelta + 1}, at least 1, and its records are that many. */
    RECORD_COUNT,
    /** Each record's offset delta is its index in the batch (offsets dense from the base offset). */
    OFFSETS,
    /**
     * Timestamps are create times, each record's is -1 (none) or non-negative, and the batch's max timestamp is the
     * largest of its records'.
     */
    TIMESTAMPS,
    /** A batch with a producer id has a producer epoch and a base sequence (idempotent producers). */
    PRODUCER,
    /** Transactional and control batches are not supported by this adapter. */
    NOT_TRANSACTIONAL,
    /** The records can be read (decompressed and decoded) at all. */
    READABLE
}
