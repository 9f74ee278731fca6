package io.nereus.kafka;

import java.util.List;

/**
 * The outcome of one {@link KafkaPartitionLog#append}: per batch, in the order appended, the offsets it is stored at.
 *
 * @param batches one per batch of the append, not empty
 */
public record AppendResult(List<Batch> batches) {
    public AppendResult {
        batches = List.copyOf(batches);
        if (batches.isEmpty()) {
            throw new IllegalArgumentException("an append result has at least one batch");
        }
    }

    /** The base offset of the append's first batch (Kafka's produce response offset). */
    public long baseOffset() {
        return batches.get(0).baseOffset();
    }

    /**
     * Where one batch is stored.
     *
     * @param baseOffset the offset of its first record
     * @param lastOffset the offset of its last record, {@code >= baseOffset}
     * @param duplicate  true when the batch was a producer's retry of a batch stored before (or still in flight):
     *                   these are that batch's offsets and nothing was stored again
     */
    public record Batch(long baseOffset, long lastOffset, boolean duplicate) {
        public Batch {
            if (baseOffset < 0 || lastOffset < baseOffset) {
                throw new IllegalArgumentException("batch offsets need 0 <= base <= last: " + baseOffset + ".."
                        + lastOffset);
            }
        }
    }
}
