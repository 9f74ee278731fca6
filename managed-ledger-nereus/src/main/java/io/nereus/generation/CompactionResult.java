package io.nereus.generation;

import io.nereus.metadata.CompactionOutcome;
import io.nereus.metadata.IndexRecord;
import java.util.Objects;
import java.util.Optional;

/** What one {@link TopicCompactor#compact} did. */
public sealed interface CompactionResult {
    /**
     * A new compacted generation is published: {@code record} covers {@code [0, horizon)}.
     *
     * @param keys        live keys in it
     * @param entriesRead entries read by each phase (the previous generation's and the committed ones)
     */
    record Published(IndexRecord record, int keys, long entriesRead) implements CompactionResult {
        public Published {
            Objects.requireNonNull(record, "record");
        }
    }

    /** Nothing was committed since the horizon of {@code current} (empty: an empty stream never compacted). */
    record UpToDate(Optional<IndexRecord> current) implements CompactionResult {
    }

    /** The index refused the publication ({@code outcome} says why); the object written is deleted. */
    record Refused(CompactionOutcome outcome) implements CompactionResult {
    }
}
