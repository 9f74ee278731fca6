package io.nereus.kafka;

/**
 * The answer to a ListOffsets query by time ({@link KafkaPartitionLog#offsetForTimestamp}): the first record, in
 * offset order from the log start, whose timestamp is at or after the one asked for.
 *
 * @param timestamp that record's timestamp
 * @param offset    its offset
 */
public record TimestampOffset(long timestamp, long offset) {
    public TimestampOffset {
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0: " + offset);
        }
    }
}
