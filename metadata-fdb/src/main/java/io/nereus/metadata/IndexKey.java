package io.nereus.metadata;

import java.util.Objects;

/**
 * The key fields of a generation-index record: {@code (STREAM, stream, INDEX|RETIRED, view, endOffset, generation)}.
 * Keys sort by view, then end offset, then generation, so the records covering offset {@code o} in a view
 * are found by a short scan starting at end offset {@code o + 1}.
 */
public record IndexKey(StreamId stream, ReadView view, long endOffset, GenerationId generation) {
    public IndexKey {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(view, "view");
        Objects.requireNonNull(generation, "generation");
        if (endOffset <= 0) {
            throw new IllegalArgumentException("index key end offset must be > 0 (ranges are non-empty): " + endOffset);
        }
    }

    public static IndexKey of(IndexRecord record) {
        return new IndexKey(record.stream(), record.view(), record.endOffset(), record.generation());
    }
}
