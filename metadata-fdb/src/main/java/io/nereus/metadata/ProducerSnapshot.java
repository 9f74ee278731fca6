package io.nereus.metadata;

import java.util.Map;
import java.util.Objects;

/**
 * The idempotent-producer state of a stream as stored: every producer's state reflecting exactly the batches below
 * {@code endOffset} (batches at or above it are replayed from the stream by its reader). Producers whose entries a
 * series of save transactions wrote ahead of its last one may already reflect later batches; replaying such a batch
 * again must be a no-op (see {@link io.nereus.metadata.ProducerStateStore#save}).
 *
 * @param endOffset the first offset not reflected, {@code >= 0}; 0 when nothing was ever saved
 * @param producers producer id to state
 */
public record ProducerSnapshot(long endOffset, Map<Long, ProducerState> producers) {
    public ProducerSnapshot {
        if (endOffset < 0) {
            throw new IllegalArgumentException("producer snapshot end offset must be >= 0: " + endOffset);
        }
        producers = Map.copyOf(Objects.requireNonNull(producers, "producers"));
        producers.forEach((id, state) -> {
            if (id != state.producerId()) {
                throw new IllegalArgumentException("producer " + id + " keyed under another id: " + state);
            }
        });
    }

    /** The snapshot of a stream that never saved one. */
    public static ProducerSnapshot empty() {
        return new ProducerSnapshot(0, Map.of());
    }
}
