package io.nereus.metadata;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a publication transaction does, decided from what it read in the same transaction: the head, the
 * next generation id of (stream, view) and the current state of each source record.
 *
 * <ul>
 *   <li>{@link Publish}: write {@code record}, store {@code nextGeneration} as the new GENSEQ value, and move
 *       the records it supersedes out of the lookup space: the sources when the publication is in their
 *       (COMMITTED) view, and any record of the publication's view lying wholly inside its range. Superseded
 *       generation-0 records ({@code fallback}) move to the FALLBACK space still COMMITTED, so a reader whose
 *       object is missing or corrupt falls back to the WAL (DESIGN §6); superseded higher generations
 *       ({@code retire}, a merge) move to RETIRED. A TOPIC_COMPACTED publication leaves its COMMITTED sources
 *       in place;</li>
 *   <li>{@link AlreadyPublished}: a retried attempt finds its own earlier success;</li>
 *   <li>{@link SourceChanged}: a source is gone, not COMMITTED or changed since the materializer read it,
 *       or the sources do not exactly cover the range; the object is garbage;</li>
 *   <li>{@link NotCommitted}, {@link Trimmed}: the range is no longer (or not yet) committed and untrimmed;</li>
 *   <li>{@link NotAccepting}: the stream is being deleted.</li>
 * </ul>
 */
public sealed interface PublicationOutcome {

    record Publish(IndexRecord record, List<IndexRecord> retire, List<IndexRecord> fallback,
            GenerationId nextGeneration) implements PublicationOutcome {
        public Publish {
            Objects.requireNonNull(record, "record");
            Objects.requireNonNull(nextGeneration, "nextGeneration");
            retire = List.copyOf(retire);
            fallback = List.copyOf(fallback);
        }
    }

    /**
     * This exact publication is already in the index (an earlier attempt committed but its result was
     * unknown, error 1021); nothing to write.
     */
    record AlreadyPublished(IndexRecord record) implements PublicationOutcome {
    }

    record SourceChanged(IndexKey source, String reason) implements PublicationOutcome {
    }

    record NotCommitted(long committedEnd) implements PublicationOutcome {
    }

    record Trimmed(long trimOffset) implements PublicationOutcome {
    }

    record NotAccepting(StreamState state) implements PublicationOutcome {
    }

    /** The first generation id allocated by materialization in any view; 0 is the append-time WAL. */
    GenerationId FIRST_MATERIALIZED = GenerationId.of(1);

    /**
     * Decides a publication.
     *
     * @param head          the stream head
     * @param genSeq        the stored next generation id of (stream, request.view), empty when none was allocated
     * @param currentSources the records now stored under each source key of the request, in the same order
     *                      (empty when the key is gone from the lookup space)
     * @param sameViewInRange the records of (stream, request.view) in the lookup space whose end offset lies in
     *                      {@code (range.start, range.end]}: used to recognise a retried publication that already
     *                      committed, and to retire the records of that view the new one supersedes (those lying
     *                      wholly inside the range, e.g. an older TOPIC_COMPACTED projection of it)
     */
    static PublicationOutcome decide(StreamHead head, Optional<GenerationId> genSeq,
            List<Optional<IndexRecord>> currentSources, List<IndexRecord> sameViewInRange, PublicationRequest request) {
        Objects.requireNonNull(head, "head");
        Objects.requireNonNull(genSeq, "genSeq");
        Objects.requireNonNull(request, "request");
        if (currentSources.size() != request.sources().size()) {
            throw new IllegalArgumentException("expected " + request.sources().size() + " source reads, got "
                    + currentSources.size());
        }
        for (IndexRecord r : sameViewInRange) {
            if (!r.generation().isAppend() && r.view() == request.view() && r.range().equals(request.range())
                    && r.target().equals(request.target()) && r.checksum().equals(request.checksum())) {
                return new AlreadyPublished(r);
            }
        }
        if (head.state() == StreamState.DELETING) {
            return new NotAccepting(head.state());
        }
        if (request.range().end() > head.committedEnd()) {
            return new NotCommitted(head.committedEnd());
        }
        if (request.range().start() < head.trimOffset()) {
            return new Trimmed(head.trimOffset());
        }
        long expectedStart = request.range().start();
        List<IndexRecord> retire = new ArrayList<>();
        List<IndexRecord> fallback = new ArrayList<>();
        for (int i = 0; i < currentSources.size(); i++) {
            PublicationRequest.SourceRef ref = request.sources().get(i);
            Optional<IndexRecord> current = currentSources.get(i);
            if (current.isEmpty()) {
                return new SourceChanged(ref.key(), "gone from the lookup space");
            }
            IndexRecord r = current.get();
            if (!IndexKey.atEnd(r).equals(ref.key())) {
                throw new IllegalArgumentException("source read " + i + " is " + IndexKey.atEnd(r) + ", not "
                        + ref.key());
            }
            if (r.state() != IndexRecordState.COMMITTED) {
                return new SourceChanged(ref.key(), "is " + r.state());
            }
            if (r.metadataVersion() != ref.metadataVersion()) {
                return new SourceChanged(ref.key(), "metadata version " + r.metadataVersion() + " != "
                        + ref.metadataVersion() + " read by the materializer");
            }
            if (r.range().start() != expectedStart) {
                return new SourceChanged(ref.key(), "starts at " + r.range().start() + ", expected " + expectedStart
                        + ": sources do not exactly cover " + request.range());
            }
            expectedStart = r.range().end();
            if (request.view() == ReadView.COMMITTED) {
                supersede(r, retire, fallback);
            }
        }
        if (expectedStart != request.range().end()) {
            return new SourceChanged(request.sources().get(request.sources().size() - 1).key(),
                    "sources end at " + expectedStart + ", not at " + request.range().end());
        }
        java.util.Set<IndexKey> sourceKeys = new java.util.HashSet<>();
        request.sources().forEach(ref -> sourceKeys.add(ref.key()));
        for (IndexRecord r : sameViewInRange) {
            if (r.view() == request.view() && request.range().contains(r.range())
                    && !sourceKeys.contains(IndexKey.atEnd(r))) {
                supersede(r, retire, fallback);
            }
        }
        GenerationId generation = genSeq.orElse(FIRST_MATERIALIZED);
        if (generation.value() < FIRST_MATERIALIZED.value()) {
            generation = FIRST_MATERIALIZED;
        }
        IndexRecord record = new IndexRecord(request.stream(), request.view(), request.range(), generation,
                IndexRecordState.COMMITTED, request.target(), request.checksum(), request.entryCount(),
                request.bytes(), 0);
        return new Publish(record, retire, fallback, generation.next());
    }

    /** A superseded generation-0 COMMITTED-view record stays as it is, as fallback; anything else retires. */
    private static void supersede(IndexRecord r, List<IndexRecord> retire, List<IndexRecord> fallback) {
        if (r.view() == ReadView.COMMITTED && r.generation().isAppend()) {
            fallback.add(r);
        } else {
            retire.add(r.state() == IndexRecordState.RETIRED ? r : r.withState(IndexRecordState.RETIRED));
        }
    }
}
