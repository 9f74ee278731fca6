package io.nereus.metadata;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a compaction's publication transaction does, decided from what it read in the same transaction: the head, the
 * next generation id of (stream, TOPIC_COMPACTED) and every TOPIC_COMPACTED record of the stream in the lookup space.
 *
 * <ul>
 *   <li>{@link Publish}: write {@code record} (coverage {@code [0, horizon)}), store {@code nextGeneration} and move
 *       every earlier TOPIC_COMPACTED record to RETIRED, so the lookup space holds one compacted generation;</li>
 *   <li>{@link AlreadyPublished}: a retried attempt finds its own earlier success (error 1021);</li>
 *   <li>{@link Superseded}: the compacted view is not the one the compaction read (another compaction published
 *       meanwhile); the object is garbage;</li>
 *   <li>{@link HorizonNotAhead}: the horizon would not move forward; it never moves backwards;</li>
 *   <li>{@link NotCommitted}: the horizon is beyond the committed end;</li>
 *   <li>{@link NotAccepting}: the stream is being deleted.</li>
 * </ul>
 */
public sealed interface CompactionOutcome {

    record Publish(IndexRecord record, List<IndexRecord> retire, GenerationId nextGeneration)
            implements CompactionOutcome {
        public Publish {
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(nextGeneration, "nextGeneration");
            retire = List.copyOf(retire);
        }
    }

    record AlreadyPublished(IndexRecord record) implements CompactionOutcome {
    }

    /** The readable compacted record now is {@code current} (empty: none), not the one the compaction read. */
    record Superseded(Optional<IndexRecord> current) implements CompactionOutcome {
    }

    record HorizonNotAhead(long horizon) implements CompactionOutcome {
    }

    record NotCommitted(long committedEnd) implements CompactionOutcome {
    }

    record NotAccepting(StreamState state) implements CompactionOutcome {
    }

    /**
     * The readable compacted generation among {@code records} (TOPIC_COMPACTED records of the lookup space): the
     * COMMITTED one with the highest horizon, then generation; empty when there is none.
     */
    static Optional<IndexRecord> readable(List<IndexRecord> records) {
        return records.stream()
                .filter(r -> r.view() == ReadView.TOPIC_COMPACTED && r.state().isReadable())
                .max(Comparator.comparingLong(IndexRecord::endOffset).thenComparing(IndexRecord::generation));
    }

    /**
     * Decides a compaction's publication.
     *
     * @param head      the stream head
     * @param genSeq    the stored next generation id of (stream, TOPIC_COMPACTED), empty when none was allocated
     * @param compacted every TOPIC_COMPACTED record of the stream in the lookup space, any state
     */
    static CompactionOutcome decide(StreamHead head, Optional<GenerationId> genSeq, List<IndexRecord> compacted,
            CompactionRequest request) {
        Objects.requireNonNull(head, "head");
        Objects.requireNonNull(genSeq, "genSeq");
        Objects.requireNonNull(request, "request");
        for (IndexRecord r : compacted) {
            if (r.range().equals(request.coverage()) && r.target().equals(request.target())
                    && r.checksum().equals(request.checksum())) {
                return new AlreadyPublished(r);
            }
        }
        if (head.state() == StreamState.DELETING) {
            return new NotAccepting(head.state());
        }
        if (request.horizon() > head.committedEnd()) {
            return new NotCommitted(head.committedEnd());
        }
        Optional<IndexRecord> live = readable(compacted);
        boolean asRead = request.previous().isEmpty() ? live.isEmpty()
                : live.isPresent() && IndexKey.of(live.get()).equals(request.previous().get().key())
                        && live.get().metadataVersion() == request.previous().get().metadataVersion();
        if (!asRead) {
            return new Superseded(live);
        }
        long horizon = 0;
        for (IndexRecord r : compacted) {
            horizon = Math.max(horizon, r.endOffset());
        }
        if (request.horizon() <= horizon) {
            return new HorizonNotAhead(horizon);
        }
        List<IndexRecord> retire = new ArrayList<>();
        for (IndexRecord r : compacted) {
            retire.add(r.state() == IndexRecordState.RETIRED ? r : r.withState(IndexRecordState.RETIRED));
        }
        GenerationId generation = genSeq.orElse(PublicationOutcome.FIRST_MATERIALIZED);
        if (generation.value() < PublicationOutcome.FIRST_MATERIALIZED.value()) {
            generation = PublicationOutcome.FIRST_MATERIALIZED;
        }
        IndexRecord record = new IndexRecord(request.stream(), ReadView.TOPIC_COMPACTED, request.coverage(),
                generation, IndexRecordState.COMMITTED, request.target(), request.checksum(), request.entryCount(),
                request.bytes(), 0);
        return new Publish(record, retire, generation.next());
    }
}
