package io.nereus.metadata;

import java.util.List;
import java.util.Objects;

/**
 * What a stream remembers of one idempotent producer: its current epoch and its last few batches in that epoch (at
 * most {@link #MAX_BATCHES}, oldest first, in offset order), enough to acknowledge a retried batch with its original
 * offsets and to check that the next batch continues the sequence. Stored under
 * {@code (STREAM, sid, PRODUCER, producerId)} by {@link io.nereus.metadata.codec.ProducerStateCodec}.
 *
 * @param producerId the producer id, {@code >= 0}
 * @param epoch      the producer epoch of the batches, {@code 0..Short.MAX_VALUE}
 * @param batches    1..{@link #MAX_BATCHES} batches, offsets strictly increasing
 */
public record ProducerState(long producerId, int epoch, List<ProducerBatch> batches) {
    /** Batches remembered per producer: Kafka's producer keeps at most five requests in flight per partition. */
    public static final int MAX_BATCHES = 5;

    public ProducerState {
        if (producerId < 0) {
            throw new IllegalArgumentException("producer id must be >= 0: " + producerId);
        }
        if (epoch < 0 || epoch > Short.MAX_VALUE) {
            throw new IllegalArgumentException("producer epoch must be 0.." + Short.MAX_VALUE + ": " + epoch);
        }
        batches = List.copyOf(Objects.requireNonNull(batches, "batches"));
        if (batches.isEmpty() || batches.size() > MAX_BATCHES) {
            throw new IllegalArgumentException("producer state needs 1.." + MAX_BATCHES + " batches: " + batches.size());
        }
        for (int i = 1; i < batches.size(); i++) {
            if (batches.get(i).firstOffset() <= batches.get(i - 1).lastOffset()) {
                throw new IllegalArgumentException("producer batches must be in offset order: " + batches);
            }
        }
    }

    /** The last batch appended. */
    public ProducerBatch last() {
        return batches.get(batches.size() - 1);
    }

    /**
     * This producer after appending {@code batch} in {@code batchEpoch}: a new epoch forgets the earlier batches; the
     * oldest batch is dropped beyond {@link #MAX_BATCHES}.
     */
    public ProducerState with(int batchEpoch, ProducerBatch batch) {
        if (batchEpoch != epoch) {
            return new ProducerState(producerId, batchEpoch, List.of(batch));
        }
        int from = batches.size() == MAX_BATCHES ? 1 : 0;
        java.util.ArrayList<ProducerBatch> next = new java.util.ArrayList<>(batches.subList(from, batches.size()));
        next.add(batch);
        return new ProducerState(producerId, epoch, next);
    }

    /** The first state of a producer: its first batch. */
    public static ProducerState first(long producerId, int epoch, ProducerBatch batch) {
        return new ProducerState(producerId, epoch, List.of(batch));
    }
}
