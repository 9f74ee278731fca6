package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import io.nereus.error.NereusException;
import io.nereus.metadata.codec.GenerationSeqCodec;
import io.nereus.metadata.codec.IndexRecordCodec;
import io.nereus.metadata.codec.WalSliceCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The generation index: which physical representation serves each offset of a stream in a view. Looks records
 * up for readers, writes the generation-0 records that WAL evidence repairs, publishes higher generations
 * (allocating their ids from {@code GENSEQ}), quarantines and retires records. Owns
 * {@code (STREAM, sid, INDEX | FALLBACK | RETIRED | GENSEQ, ...)}; commits and trims, which also write the index, are in
 * {@link StreamCommitStore}.
 *
 * <p>Each operation is one transaction of the shared {@link TransactionRunner}. Changes are conditional: they
 * read the head and the records they depend on in the same transaction, so a racing commit, trim or
 * publication is a conflict that the runner retries, and every body is idempotent for retries after an unknown
 * result. Methods return futures and never throw: argument errors fail the future. Expected refusals
 * (trimmed, not yet committed, source changed, already covered, ...) are {@link RepairOutcome} and
 * {@link PublicationOutcome} values, not exceptions. Thread-safe; holds no mutable state.
 */
public final class GenerationIndexStore {
    /** Records read by one lookup; the lookup space keeps the covering records at the front of the scan. */
    static final int LOOKUP_SCAN_LIMIT = 16;
    /** Records read from the FALLBACK space by one lookup: generation-0 records there do not overlap. */
    static final int FALLBACK_SCAN_LIMIT = 2;

    private final TransactionRunner tx;
    private final NereusKeyspace ks;
    private final StoredRecords records;

    GenerationIndexStore(TransactionRunner tx, NereusKeyspace ks, StoredRecords records) {
        this.tx = tx;
        this.ks = ks;
        this.records = records;
    }

    // ---- lookup ----

    /**
     * The records that may serve {@code offset} in {@code view}, decided with the head from one snapshot:
     * one head read, one range read of at most {@value #LOOKUP_SCAN_LIMIT} keys of the lookup space and one of
     * at most {@value #FALLBACK_SCAN_LIMIT} keys of the FALLBACK space (the generation-0 records a higher
     * generation superseded), whatever the number of generations or appends.
     *
     * @return a future failing with {@link NereusException} NOT_FOUND when the stream has no head
     */
    public CompletableFuture<IndexLookup> lookup(StreamId stream, ReadView view, long offset) {
        return guard(() -> {
            var range = ks.indexCoveringRange(stream, view, offset);
            var fallbackRange = ks.fallbackCoveringRange(stream, view, offset);
            return tx.read(tr -> {
                CompletableFuture<Optional<StreamHead>> head = records.head(tr, stream);
                CompletableFuture<List<KeyValue>> scan =
                        tr.getRange(range, LOOKUP_SCAN_LIMIT).asList();
                CompletableFuture<List<KeyValue>> fallback =
                        tr.getRange(fallbackRange, FALLBACK_SCAN_LIMIT).asList();
                return CompletableFuture.allOf(head, scan, fallback).thenApply(ignored -> {
                    List<IndexRecord> scanned = new ArrayList<>(records.index(scan.join()));
                    scanned.addAll(records.fallback(fallback.join()));
                    return IndexLookup.decide(head.join().orElseThrow(() -> StoredRecords.unknownStream(stream)),
                            view, offset, scanned);
                });
            });
        });
    }


    /** Every record of {@code stream} in {@code view} still in the lookup space, in key order (tests, tools). */
    public CompletableFuture<List<IndexRecord>> indexRecords(StreamId stream, ReadView view) {
        return guard(() -> tx.read(tr -> tr.getRange(ks.indexViewRange(stream, view)).asList()
                .thenApply(records::index)));
    }

    /**
     * Up to {@code limit} records of {@code stream} in {@code view} still in the lookup space whose end offset is
     * above {@code fromOffset}, in key order: the materializer's scan of what is still to do.
     */
    public CompletableFuture<List<IndexRecord>> indexRecords(StreamId stream, ReadView view, long fromOffset,
            int limit) {
        return guard(() -> {
            var range = ks.indexCoveringRange(stream, view, fromOffset);
            // the open run sorts after every end offset: a scan from at or past its end meets it, and drops it
            return tx.read(tr -> tr.getRange(range, limit).asList().thenApply(kvs -> {
                List<IndexRecord> found = records.index(kvs);
                return found.isEmpty() || found.get(found.size() - 1).endOffset() > fromOffset ? found
                        : found.subList(0, found.size() - 1);
            }));
        });
    }

    /** Every record of {@code stream} in {@code view} in the FALLBACK space, in key order (tests, tools). */
    public CompletableFuture<List<IndexRecord>> fallbackRecords(StreamId stream, ReadView view) {
        return guard(() -> tx.read(tr -> tr.getRange(ks.fallbackViewRange(stream, view)).asList()
                .thenApply(records::fallback)));
    }

    /** Up to {@code limit} retired records of {@code stream}, all views, in key order (tests, tools). */
    public CompletableFuture<List<IndexRecord>> retiredRecords(StreamId stream, int limit) {
        return guard(() -> tx.read(tr -> tr.getRange(ks.retiredRange(stream), limit).asList()
                .thenApply(records::retired)));
    }

    // ---- generation-0 repair ----

    /**
     * Writes a missing generation-0 record rebuilt from WAL evidence, only if, in the same transaction, the
     * head still holds the range (not wholly trimmed, within the committed end) and no readable COMMITTED-view
     * record overlaps it (see {@link RepairOutcome#decide}). Reads the head and every COMMITTED-view record
     * that may overlap, so a racing commit, trim or publication is a conflict, not an overwrite. Retrying
     * after an unknown result finds the record in place and reports {@link RepairOutcome.Repaired} again.
     *
     * @return a future failing with {@link NereusException} NOT_FOUND when the stream has no head
     */
    public CompletableFuture<RepairOutcome> repairGenerationZero(RepairRequest request) {
        return guard(() -> {
            Objects.requireNonNull(request, "request");
            StreamId stream = request.stream();
            OffsetRange range = request.range();
            // records ending inside (start, end] overlap; of those ending after end, the first few of the
            // lookup space are the ones that may start below end (superseded records leave the space)
            var endingInside = ks.indexEndOffsetRange(stream, ReadView.COMMITTED,
                    new OffsetRange(range.start() + 1, range.end() + 1));
            var endingAfter = ks.indexCoveringRange(stream, ReadView.COMMITTED, range.end());
            long sliceId = request.target().sliceId();
            byte[] sliceKey = ks.walSliceKey(sliceId);
            return tx.run(tr -> {
                CompletableFuture<Optional<StreamHead>> head = records.head(tr, stream);
                CompletableFuture<List<KeyValue>> inside = tr.getRange(endingInside).asList();
                CompletableFuture<List<KeyValue>> after = tr.getRange(endingAfter, LOOKUP_SCAN_LIMIT).asList();
                CompletableFuture<byte[]> slice = tr.get(sliceKey);
                return CompletableFuture.allOf(head, inside, after, slice).thenApply(ignored -> {
                    StreamHead h = head.join().orElseThrow(() -> StoredRecords.unknownStream(stream));
                    byte[] sv = slice.join();
                    if (sv == null || WalSliceCodec.INSTANCE.decode(sv).state() == WalSliceState.COLLECTING) {
                        return new RepairOutcome.SliceCollected(sliceId);
                    }
                    List<IndexRecord> overlapping = new ArrayList<>(records.index(inside.join()));
                    overlapping.addAll(records.index(after.join()));
                    RepairOutcome o = RepairOutcome.decide(h, overlapping, request);
                    if (o instanceof RepairOutcome.Repaired repaired) {
                        // the wanted record under its end, or as found (a retry, or the stream's open run): in place
                        IndexRecord r = repaired.record();
                        tr.set(ks.indexKey(IndexKey.of(r)), IndexRecordCodec.INSTANCE.encode(r));
                    }
                    return o;
                });
            });
        });
    }

    // ---- publication, quarantine, retirement ----

    /**
     * Publishes a materialized representation in one transaction (see {@link PublicationOutcome#decide}):
     * validates head and sources, allocates the next generation id of (stream, view), writes the COMMITTED
     * record and moves same-view sources and superseded records of the view out of the lookup space (generation-0
     * records to FALLBACK, still COMMITTED; higher generations to RETIRED). The head is read without a conflict
     * (see the body), so appends to the stream never make a publication retry; a trim reaching into the range
     * conflicts through the source records it retires. At most {@link PublicationRequest#MAX_SOURCES} sources. Of two publications
     * racing for the same sources exactly one commits; the other is retried by the runner and then sees
     * {@link PublicationOutcome.SourceChanged}.
     *
     * @return a future failing with {@link NereusException} NOT_FOUND when the stream has no head
     */
    public CompletableFuture<PublicationOutcome> publish(PublicationRequest request) {
        return guard(() -> {
            Objects.requireNonNull(request, "request");
            StreamId stream = request.stream();
            var inRange = ks.indexEndOffsetRange(stream, request.view(),
                    new OffsetRange(request.range().start() + 1, request.range().end() + 1));
            return tx.run(tr -> {
                // The head is read as a snapshot: every commit of the stream rewrites it, so a conflicting read
                // would make a publication of a stream under load retry until its appends pause. What the head
                // decides needs no conflict: the committed end only grows, a trim that reaches the range retires
                // source records (read below, with conflicts), and a deleted stream's keys are purged whole, a
                // record published meanwhile with them (its object is then unreferenced garbage).
                CompletableFuture<Optional<StreamHead>> head = records.head(tr.snapshot(), stream);
                CompletableFuture<byte[]> genSeq = tr.get(ks.genSeqKey(stream, request.view()));
                CompletableFuture<List<KeyValue>> sameView = tr.getRange(inRange).asList();
                List<CompletableFuture<byte[]>> sources = new ArrayList<>();
                for (PublicationRequest.SourceRef s : request.sources()) {
                    sources.add(tr.get(ks.indexKey(s.key())));
                }
                // The stream's open run may be the last source, not yet closed under its end. A snapshot read, as every
                // commit of the stream rewrites that key; a conflict is added below only when a source is found there.
                CompletableFuture<Optional<IndexRecord>> openRun = records.openRun(tr.snapshot(), stream);
                List<CompletableFuture<?>> all = new ArrayList<>(sources);
                all.add(head);
                all.add(genSeq);
                all.add(sameView);
                all.add(openRun);
                return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
                    StreamHead h = head.join().orElseThrow(() -> StoredRecords.unknownStream(stream));
                    Optional<GenerationId> seq = Optional.ofNullable(genSeq.join())
                            .map(GenerationSeqCodec.INSTANCE::decode);
                    List<Optional<IndexRecord>> current = new ArrayList<>();
                    for (int i = 0; i < sources.size(); i++) {
                        IndexKey k = request.sources().get(i).key();
                        Optional<IndexRecord> r = Optional.ofNullable(sources.get(i).join())
                                .map(b -> IndexRecordCodec.INSTANCE.decode(k, b));
                        if (r.isEmpty() && openRun.join().filter(o -> IndexKey.atEnd(o).equals(k)).isPresent()) {
                            // a commit closing or extending it meanwhile must make this publication retry
                            tr.addReadConflictKey(ks.indexKey(IndexKey.openRun(stream)));
                            r = openRun.join();
                        }
                        current.add(r);
                    }
                    PublicationOutcome o =
                            PublicationOutcome.decide(h, seq, current, records.index(sameView.join()), request);
                    if (o instanceof PublicationOutcome.Publish p) {
                        tr.set(ks.indexKey(IndexKey.of(p.record())), IndexRecordCodec.INSTANCE.encode(p.record()));
                        tr.set(ks.genSeqKey(stream, request.view()),
                                GenerationSeqCodec.INSTANCE.encode(p.nextGeneration()));
                        for (IndexRecord r : p.retire()) {
                            records.moveToRetired(tr, r);
                        }
                        for (IndexRecord r : p.fallback()) {
                            records.moveToFallback(tr, r);
                        }
                    }
                    return o;
                });
            });
        });
    }


    // ---- the compacted view ----

    /**
     * The readable {@link ReadView#TOPIC_COMPACTED} generation of {@code stream}, whose range {@code [0, horizon)} is
     * the compaction horizon; empty when the stream was never compacted. One short range read (the lookup space holds
     * one compacted generation: a publication retires the one before).
     */
    public CompletableFuture<Optional<IndexRecord>> compactedRecord(StreamId stream) {
        return guard(() -> tx.read(tr -> tr.getRange(ks.indexViewRange(stream, ReadView.TOPIC_COMPACTED)).asList()
                .thenApply(kvs -> CompactionOutcome.readable(records.index(kvs)))));
    }

    /**
     * Publishes a compacted generation and with it the horizon, in one transaction (see
     * {@link CompactionOutcome#decide}): the record covering {@code [0, horizon)}, the next TOPIC_COMPACTED
     * generation id, and the earlier compacted records moved to RETIRED (their objects become garbage). Conditional on
     * the compacted view being the one the compaction read ({@link CompactionRequest#previous}, read here with a
     * conflict, so of two racing compactions one commits and the other is refused) and on the horizon moving
     * forward: the horizon never moves backwards. The head is read as a snapshot, as {@link #publish} does: its
     * committed end only grows. Idempotent for a retry after an unknown result.
     *
     * @return a future failing with {@link NereusException} NOT_FOUND when the stream has no head
     */
    public CompletableFuture<CompactionOutcome> publishCompaction(CompactionRequest request) {
        return guard(() -> {
            Objects.requireNonNull(request, "request");
            StreamId stream = request.stream();
            return tx.run(tr -> {
                CompletableFuture<Optional<StreamHead>> head = records.head(tr.snapshot(), stream);
                CompletableFuture<byte[]> genSeq = tr.get(ks.genSeqKey(stream, ReadView.TOPIC_COMPACTED));
                CompletableFuture<List<KeyValue>> compacted =
                        tr.getRange(ks.indexViewRange(stream, ReadView.TOPIC_COMPACTED)).asList();
                return CompletableFuture.allOf(head, genSeq, compacted).thenApply(ignored -> {
                    StreamHead h = head.join().orElseThrow(() -> StoredRecords.unknownStream(stream));
                    Optional<GenerationId> seq = Optional.ofNullable(genSeq.join())
                            .map(GenerationSeqCodec.INSTANCE::decode);
                    CompactionOutcome o = CompactionOutcome.decide(h, seq, records.index(compacted.join()), request);
                    if (o instanceof CompactionOutcome.Publish p) {
                        for (IndexRecord r : p.retire()) {
                            records.moveToRetired(tr, r);
                        }
                        tr.set(ks.indexKey(IndexKey.of(p.record())), IndexRecordCodec.INSTANCE.encode(p.record()));
                        tr.set(ks.genSeqKey(stream, ReadView.TOPIC_COMPACTED),
                                GenerationSeqCodec.INSTANCE.encode(p.nextGeneration()));
                    }
                    return o;
                });
            });
        });
    }

    /**
     * Removes the compacted view of {@code stream} (compaction disabled: Pulsar's {@code __compaction} subscription
     * was deleted), in one transaction: every TOPIC_COMPACTED record of the lookup space moves to RETIRED (its object
     * becomes garbage for the collector). Afterwards the stream has no horizon; a later compaction starts again from
     * the oldest committed offset. A compaction that read one of these records is refused at its publication
     * ({@link CompactionOutcome.Superseded}). Idempotent.
     *
     * @return the records retired (empty when the stream had no compacted view)
     */
    public CompletableFuture<List<IndexRecord>> dropCompaction(StreamId stream) {
        return guard(() -> {
            Objects.requireNonNull(stream, "stream");
            return tx.run(tr -> tr.getRange(ks.indexViewRange(stream, ReadView.TOPIC_COMPACTED)).asList()
                    .thenApply(kvs -> {
                        List<IndexRecord> retired = new java.util.ArrayList<>();
                        for (IndexRecord r : records.index(kvs)) {
                            IndexRecord gone = r.state() == IndexRecordState.RETIRED ? r
                                    : r.withState(IndexRecordState.RETIRED);
                            records.moveToRetired(tr, gone);
                            retired.add(gone);
                        }
                        return List.copyOf(retired);
                    }));
        });
    }

    /**
     * Marks a record QUARANTINED (evidence showed its target unusable): it stays where it is (the lookup or the
     * FALLBACK space) and serves no reads. The record is named by its key under its own end ({@link IndexKey#atEnd});
     * a stream's open run is found at {@link IndexKey#openRun} too, by that key or by its own. Returns the record as
     * stored afterwards, or empty when it is in neither space. Idempotent; a RETIRED record is never brought back.
     */
    public CompletableFuture<Optional<IndexRecord>> quarantine(IndexKey key) {
        return guard(() -> tx.run(tr -> located(tr, key).thenApply(found -> found.map(l -> {
            IndexRecord r = l.record();
            if (r.state() == IndexRecordState.QUARANTINED) {
                return r;
            }
            IndexRecord q = r.withState(IndexRecordState.QUARANTINED);
            tr.set(l.storedAt(), IndexRecordCodec.INSTANCE.encode(q));
            return q;
        }))));
    }

    /**
     * Retires a record: moves it from the lookup or FALLBACK space to RETIRED, kept for garbage collection. The record
     * is named as {@link #quarantine} names it. Returns the retired record, or empty when it exists in no space.
     * Idempotent, except that by the open-run key a repeated call finds nothing: the retired run is stored under its
     * own end.
     */
    public CompletableFuture<Optional<IndexRecord>> retire(IndexKey key) {
        return guard(() -> {
            byte[] rk = ks.retiredKey(key);
            return tx.run(tr -> located(tr, key).thenCompose(found -> {
                if (found.isPresent()) {
                    IndexRecord r = found.get().record().withState(IndexRecordState.RETIRED);
                    records.moveToRetired(tr, r);
                    return CompletableFuture.completedFuture(Optional.of(r));
                }
                return key.isOpenRun() ? CompletableFuture.completedFuture(Optional.<IndexRecord>empty())
                        : tr.get(rk).thenApply(rv -> Optional.ofNullable(rv)
                                .map(b -> IndexRecordCodec.INSTANCE.decode(key, b)));
            }));
        });
    }

    /**
     * The record {@code key} names in the lookup space (at that key, or, for a generation-0 key of the COMMITTED
     * view, as the stream's open run ending there) or else in FALLBACK, with the key it is stored under.
     */
    private CompletableFuture<Optional<Located>> located(Transaction tr, IndexKey key) {
        byte[] k = ks.indexKey(key);
        CompletableFuture<byte[]> primary = tr.get(k);
        boolean mayBeOpen = !key.isOpenRun() && key.view() == ReadView.COMMITTED && key.generation().isAppend();
        byte[] fk = key.isOpenRun() ? null : ks.fallbackKey(key);
        CompletableFuture<byte[]> fallback = fk == null ? CompletableFuture.completedFuture(null) : tr.get(fk);
        IndexKey openKey = IndexKey.openRun(key.stream());
        CompletableFuture<Optional<IndexRecord>> open = mayBeOpen ? records.openRun(tr, key.stream())
                : CompletableFuture.completedFuture(Optional.empty());
        return CompletableFuture.allOf(primary, fallback, open).thenApply(ignored -> {
            if (primary.join() != null) {
                return Optional.of(new Located(k, IndexRecordCodec.INSTANCE.decode(key, primary.join())));
            }
            Optional<IndexRecord> o = open.join().filter(r -> IndexKey.atEnd(r).equals(key));
            if (o.isPresent()) {
                return Optional.of(new Located(ks.indexKey(openKey), o.get()));
            }
            return Optional.ofNullable(fallback.join())
                    .map(v -> new Located(fk, IndexRecordCodec.INSTANCE.decode(key, v)));
        });
    }

    /** A record and the key it is stored under. */
    private record Located(byte[] storedAt, IndexRecord record) {
    }
}
