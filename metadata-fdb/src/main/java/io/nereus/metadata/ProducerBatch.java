package io.nereus.metadata;

/**
 * One record batch that an idempotent producer appended to a stream, as the stream's producer state remembers it to
 * recognise a retry: the batch's sequence range and the offsets it was stored at. Sequences are Kafka's: non-negative
 * ints that wrap from {@code Integer.MAX_VALUE} to 0, so {@code lastSequence} may be below {@code firstSequence}.
 *
 * @param firstSequence the batch's base sequence, {@code >= 0}
 * @param lastSequence  the sequence of its last record, {@code >= 0}
 * @param firstOffset   the stream offset of its first record, {@code >= 0}
 * @param lastOffset    the stream offset of its last record, {@code >= firstOffset}
 * @param maxTimestamp  the batch's max timestamp (milliseconds), as stored in the batch
 */
public record ProducerBatch(int firstSequence, int lastSequence, long firstOffset, long lastOffset,
        long maxTimestamp) {
    public ProducerBatch {
        if (firstSequence < 0 || lastSequence < 0) {
            throw new IllegalArgumentException("producer batch sequences must be >= 0: " + firstSequence + ".."
                    + lastSequence);
        }
        if (firstOffset < 0 || lastOffset < firstOffset) {
            throw new IllegalArgumentException("producer batch needs 0 <= firstOffset <= lastOffset: " + firstOffset
                    + ".." + lastOffset);
        }
    }
}
