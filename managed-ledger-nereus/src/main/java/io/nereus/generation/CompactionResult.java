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
     * @param keys              live keys in it
     * @param entriesRead       entries read by each phase (the previous generation's and the committed ones)
     * @param keptBytes         payload bytes of the entries it keeps
     * @param peakBufferedBytes the most bytes of the object being written the compactor held in memory at once (its
     *                          spill's write buffer and block index and the entry being added), however large the
     *                          object
     */
    record Published(IndexRecord record, int keys, long entriesRead, long keptBytes, long peakBufferedBytes)
            implements CompactionResult {
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
