package io.nereus.metadata;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Nereus metadata operations on a FoundationDB {@link Database}: the catalog, stream heads and writer
 * fencing, batch commits, the generation index (lookup, publication, quarantine, retirement, trim).
 * Cursors and managed-ledger properties are in {@link CursorStore}.
 *
 * <p>Every operation is one transaction run by {@link Database#runAsync(java.util.function.Function, Executor)}
 * (or {@code readAsync}), which owns retries; bodies read what they depend on in the same transaction and
 * are idempotent, because a commit may be retried after an unknown result (1021). Every method returns a
 * future and never throws: argument errors fail the future. Expected refusals (fenced, wrong start, source
 * changed, ...) are sealed results, not exceptions. Thread-safe; holds no mutable state.
 */
public final class MetadataStore {
    /** Records read by one lookup; the lookup space keeps the covering records at the front of the scan. */
    static final int LOOKUP_SCAN_LIMIT = 16;
    /** Index records moved out of the lookup space per trim transaction. */
    static final int TRIM_BATCH = 500;

    private final Database db;
    private final NereusKeyspace ks;
    private final Executor executor;

    private MetadataStore(Database db, NereusKeyspace ks, Executor executor) {
        this.db = db;
        this.ks = ks;
        this.executor = executor;
    }

    /**
     * Opens the metadata under {@code keyspace}: writes the current layout version on first use and fails
     * with {@link FormatVersion.UnsupportedFormatVersionException} when the stored layout is unknown.
     */
    public static CompletableFuture<MetadataStore> open(Database db, NereusKeyspace keyspace, Executor executor) {
        return guard(() -> {
            MetadataStore store = new MetadataStore(Objects.requireNonNull(db, "db"),
                    Objects.requireNonNull(keyspace, "keyspace"), Objects.requireNonNull(executor, "executor"));
            byte[] key = keyspace.formatKey();
            return db.runAsync(tr -> tr.get(key).thenApply(v -> {
                if (v == null) {
                    tr.set(key, FormatVersion.encodeCurrent());
                } else {
                    FormatVersion.check(v);
                }
                return store;
            }), executor);
        });
    }

    public NereusKeyspace keyspace() {
        return ks;
    }

    public Database database() {
        return db;
    }

    public Executor executor() {
        return executor;
    }

    // ---- catalog ----

    /**
     * The ACTIVE catalog entry of {@code managedLedgerName}, creating it (stream id, virtual ledger id from the
     * reserved range, an OPEN head) when the name is new or was deleted; a re-created name gets the next
     * incarnation and new ids.
     */
    public CompletableFuture<CatalogEntry> openStream(String managedLedgerName) {
        return guard(() -> {
            byte[] key = ks.catalogKey(managedLedgerName);
            return db.runAsync(tr -> tr.get(key).thenCompose(v -> {
                Optional<CatalogEntry> existing = Optional.ofNullable(v)
                        .map(b -> CatalogEntryCodec.INSTANCE.decode(managedLedgerName, b));
                if (existing.isPresent() && existing.get().state() == CatalogState.ACTIVE) {
                    return CompletableFuture.completedFuture(existing.get());
                }
                if (existing.isPresent() && existing.get().state() == CatalogState.DELETING) {
                    throw new IllegalStateException("managed ledger " + managedLedgerName + " is being deleted");
                }
                return allocateIds(tr).thenApply(ids -> {
                    CatalogEntry entry = existing.map(e -> e.reincarnate(ids.stream, ids.ledger))
                            .orElseGet(() -> new CatalogEntry(managedLedgerName, ids.stream, ids.ledger, 1,
                                    CatalogState.ACTIVE));
                    tr.set(key, CatalogEntryCodec.INSTANCE.encode(entry));
                    tr.set(ks.headKey(ids.stream), StreamHeadCodec.INSTANCE.encode(StreamHead.initial()));
                    return entry;
                });
            }), executor);
        });
    }

    private record Ids(StreamId stream, long ledger) {
    }

    private CompletableFuture<Ids> allocateIds(Transaction tr) {
        byte[] streamKey = ks.counterKey(NereusKeyspace.STREAM_ID_COUNTER);
        byte[] ledgerKey = ks.counterKey(NereusKeyspace.VIRTUAL_LEDGER_ID_COUNTER);
        CompletableFuture<byte[]> s = tr.get(streamKey);
        CompletableFuture<byte[]> l = tr.get(ledgerKey);
        return s.thenCombine(l, (sv, lv) -> {
            long sid = sv == null ? 1 : CounterCodec.INSTANCE.decode(sv);
            long lid = lv == null ? CatalogEntry.MIN_VIRTUAL_LEDGER_ID : CounterCodec.INSTANCE.decode(lv);
            tr.set(streamKey, CounterCodec.INSTANCE.encode(Math.addExact(sid, 1)));
            tr.set(ledgerKey, CounterCodec.INSTANCE.encode(Math.addExact(lid, 1)));
            return new Ids(new StreamId(sid), lid);
        });
    }

    /** The catalog entry of {@code managedLedgerName} in whatever state, if the name was ever created. */
    public CompletableFuture<Optional<CatalogEntry>> catalogEntry(String managedLedgerName) {
        return guard(() -> {
            byte[] key = ks.catalogKey(managedLedgerName);
            return db.readAsync(tr -> tr.get(key).thenApply(v -> Optional.ofNullable(v)
                    .map(b -> CatalogEntryCodec.INSTANCE.decode(managedLedgerName, b))), executor);
        });
    }

    /**
     * Deletes {@code managedLedgerName}: its catalog entry becomes DELETED (the name is free for a new
     * incarnation) and its stream's head DELETING, which stops commits; the stream's records stay for garbage
     * collection. Returns the DELETED entry, or empty when the name does not exist. Idempotent.
     */
    public CompletableFuture<Optional<CatalogEntry>> deleteStream(String managedLedgerName) {
        return guard(() -> {
            byte[] key = ks.catalogKey(managedLedgerName);
            return db.runAsync(tr -> tr.get(key).thenCompose(v -> {
                if (v == null) {
                    return CompletableFuture.completedFuture(Optional.<CatalogEntry>empty());
                }
                CatalogEntry entry = CatalogEntryCodec.INSTANCE.decode(managedLedgerName, v);
                if (entry.state() == CatalogState.DELETED) {
                    return CompletableFuture.completedFuture(Optional.of(entry));
                }
                CatalogEntry deleted = entry.withState(CatalogState.DELETING).withState(CatalogState.DELETED);
                tr.set(key, CatalogEntryCodec.INSTANCE.encode(deleted));
                byte[] headKey = ks.headKey(entry.streamId());
                return tr.get(headKey).thenApply(h -> {
                    if (h != null) {
                        StreamHead head = StreamHeadCodec.INSTANCE.decode(h);
                        tr.set(headKey, StreamHeadCodec.INSTANCE.encode(head.withState(StreamState.DELETING)));
                    }
                    return Optional.of(deleted);
                });
            }), executor);
        });
    }

    // ---- heads and writers ----

    public CompletableFuture<Optional<StreamHead>> head(StreamId stream) {
        return guard(() -> db.readAsync(tr -> readHead(tr, stream), executor));
    }

    private CompletableFuture<Optional<StreamHead>> readHead(ReadTransaction tr, StreamId stream) {
        return tr.get(ks.headKey(stream)).thenApply(v -> Optional.ofNullable(v).map(StreamHeadCodec.INSTANCE::decode));
    }

    /**
     * Makes {@code writerId} the stream's writer with a new, higher epoch, fencing every earlier writer. The
     * returned head's {@code writerEpoch} is the fencing token to pass with every commit.
     *
     * @return a future failing with {@link UnknownStreamException} when the stream has no head
     */
    public CompletableFuture<StreamHead> acquireWriter(StreamId stream, String writerId) {
        return guard(() -> {
            Objects.requireNonNull(writerId, "writerId");
            return db.runAsync(tr -> readHead(tr, stream).thenApply(h -> {
                StreamHead next = h.orElseThrow(() -> new UnknownStreamException(stream)).withNewWriter(writerId);
                tr.set(ks.headKey(stream), StreamHeadCodec.INSTANCE.encode(next));
                return next;
            }), executor);
        });
    }

    /**
     * Seals the stream (a terminated topic): no more commits; reads, trims and cursors continue. Conditional on
     * {@code writerEpoch}: a writer that was fenced cannot seal.
     *
     * @return a future failing with {@link WriterFencedException} when the head has another epoch, or
     *         {@link UnknownStreamException} when the stream has no head
     */
    public CompletableFuture<StreamHead> seal(StreamId stream, long writerEpoch) {
        return guard(() -> db.runAsync(tr -> readHead(tr, stream).thenApply(h -> {
            StreamHead head = h.orElseThrow(() -> new UnknownStreamException(stream));
            if (head.writerEpoch() != writerEpoch) {
                throw new WriterFencedException(stream, head.writerEpoch(), writerEpoch);
            }
            StreamHead next = head.withState(StreamState.SEALED);
            tr.set(ks.headKey(stream), StreamHeadCodec.INSTANCE.encode(next));
            return next;
        }), executor));
    }

    // ---- commit ----

    /**
     * Commits one or more consecutive WAL batches: for every append, checks the writer epoch and that it starts
     * at the stream's committed end, advances the head, writes the generation-0 record and, on the stream's
     * first append into the slice, its intent; all in one transaction, all or nothing. A stream may have
     * several appends (one per coalesced batch), listed in offset order: the first must start at the head's
     * committed end, each next one at the previous one's end, all with the stream's epoch; the head advances
     * through all of them and each writes its own record. A refusal of any append refuses the whole commit
     * and names that append. Retrying after an unknown result finds the appends already applied and reports
     * them committed without advancing anything twice.
     *
     * @return on success, one head per append in append order: the head after that append (for an append an
     *         earlier attempt already applied, the stored head)
     */
    public CompletableFuture<CommitResult> commit(List<StreamAppend> appends) {
        return guard(() -> {
            List<StreamAppend> batch = List.copyOf(appends);
            if (batch.isEmpty()) {
                throw new IllegalArgumentException("a commit needs at least one append");
            }
            return db.runAsync(tr -> commitBody(tr, batch), executor);
        });
    }

    private CompletableFuture<CommitResult> commitBody(Transaction tr, List<StreamAppend> batch) {
        Map<StreamId, CompletableFuture<byte[]>> heads = new LinkedHashMap<>();
        List<CompletableFuture<byte[]>> atEnd = new ArrayList<>();
        Map<List<Object>, CompletableFuture<byte[]>> intents = new HashMap<>();
        for (StreamAppend a : batch) {
            heads.computeIfAbsent(a.stream(), s -> tr.get(ks.headKey(s)));
            atEnd.add(tr.get(ks.indexKey(IndexKey.of(a.generationZeroRecord()))));
            intents.computeIfAbsent(intentSlot(a), k -> tr.get(ks.intentKey(a.stream(), a.target().sliceId())));
        }
        List<CompletableFuture<byte[]>> all = new ArrayList<>(heads.values());
        all.addAll(atEnd);
        all.addAll(intents.values());
        return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
            Map<StreamId, StreamHead> current = new HashMap<>();
            List<AppendOutcome> outcomes = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                StreamAppend a = batch.get(i);
                StreamHead head = current.get(a.stream());
                if (head == null) {
                    byte[] h = heads.get(a.stream()).join();
                    if (h == null) {
                        return new CommitResult.UnknownStream(a.stream());
                    }
                    head = StreamHeadCodec.INSTANCE.decode(h);
                }
                IndexKey endKey = IndexKey.of(a.generationZeroRecord());
                Optional<IndexRecord> existing = Optional.ofNullable(atEnd.get(i).join())
                        .map(b -> IndexRecordCodec.INSTANCE.decode(endKey, b));
                AppendOutcome o = AppendOutcome.decide(head, existing, a);
                if (!o.permitsCommit()) {
                    return new CommitResult.Rejected(a, o);
                }
                current.put(a.stream(), o instanceof AppendOutcome.Apply apply ? apply.next() : head);
                outcomes.add(o);
            }
            List<StreamHead> result = new ArrayList<>();
            Set<StreamId> advanced = new HashSet<>();
            Set<List<Object>> intentWritten = new HashSet<>();
            for (int i = 0; i < batch.size(); i++) {
                StreamAppend a = batch.get(i);
                AppendOutcome o = outcomes.get(i);
                if (o instanceof AppendOutcome.Apply apply) {
                    advanced.add(a.stream());
                    tr.set(ks.indexKey(IndexKey.of(apply.record())), IndexRecordCodec.INSTANCE.encode(apply.record()));
                    List<Object> slot = intentSlot(a);
                    if (intents.get(slot).join() == null && intentWritten.add(slot)) {
                        tr.set(ks.intentKey(a.stream(), a.target().sliceId()), WalIntentCodec.INSTANCE.encode(a.intent()));
                    }
                    result.add(apply.next());
                } else {
                    result.add(((AppendOutcome.AlreadyApplied) o).head());
                }
            }
            for (StreamId s : advanced) {
                tr.set(ks.headKey(s), StreamHeadCodec.INSTANCE.encode(current.get(s)));
            }
            return new CommitResult.Committed(result);
        });
    }

    private static List<Object> intentSlot(StreamAppend a) {
        return List.of(a.stream(), a.target().sliceId());
    }

    /** The intent of {@code stream} in WAL slice {@code sliceId}, if the stream ever wrote into it. */
    public CompletableFuture<Optional<WalIntent>> intent(StreamId stream, long sliceId) {
        return guard(() -> {
            byte[] key = ks.intentKey(stream, sliceId);
            return db.readAsync(tr -> tr.get(key).thenApply(v -> Optional.ofNullable(v)
                    .map(WalIntentCodec.INSTANCE::decode)), executor);
        });
    }

    /**
     * Every intent of {@code stream}: WAL slice id to the first offset the stream wrote into that slice and
     * the writer epoch of that commit, by slice id. Generation-0 repair uses it to find the slice holding an
     * offset.
     */
    public CompletableFuture<SortedMap<Long, WalIntent>> intents(StreamId stream) {
        return guard(() -> {
            var range = ks.intentRange(stream);
            return db.readAsync(tr -> tr.getRange(range).asList().thenApply(kvs -> {
                SortedMap<Long, WalIntent> out = new TreeMap<>();
                for (KeyValue kv : kvs) {
                    out.put(ks.unpackIntentKey(kv.getKey()).walSliceId(), WalIntentCodec.INSTANCE.decode(kv.getValue()));
                }
                return out;
            }), executor);
        });
    }

    // ---- generation-0 repair ----

    /**
     * Writes a missing generation-0 record rebuilt from WAL evidence, only if, in the same transaction, the
     * head still holds the range (not wholly trimmed, within the committed end) and no readable COMMITTED-view
     * record overlaps it (see {@link RepairOutcome#decide}). Reads the head and every COMMITTED-view record
     * that may overlap, so a racing commit, trim or publication is a conflict, not an overwrite. Retrying
     * after an unknown result finds the record in place and reports {@link RepairOutcome.Repaired} again.
     *
     * @return a future failing with {@link UnknownStreamException} when the stream has no head
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
            IndexRecord wanted = request.record();
            byte[] key = ks.indexKey(IndexKey.of(wanted));
            return db.runAsync(tr -> {
                CompletableFuture<Optional<StreamHead>> head = readHead(tr, stream);
                CompletableFuture<List<KeyValue>> inside = tr.getRange(endingInside).asList();
                CompletableFuture<List<KeyValue>> after = tr.getRange(endingAfter, LOOKUP_SCAN_LIMIT).asList();
                return CompletableFuture.allOf(head, inside, after).thenApply(ignored -> {
                    StreamHead h = head.join().orElseThrow(() -> new UnknownStreamException(stream));
                    List<IndexRecord> overlapping = new ArrayList<>(decodeIndex(inside.join()));
                    overlapping.addAll(decodeIndex(after.join()));
                    RepairOutcome o = RepairOutcome.decide(h, overlapping, request);
                    if (o instanceof RepairOutcome.Repaired) {
                        tr.set(key, IndexRecordCodec.INSTANCE.encode(wanted));
                    }
                    return o;
                });
            }, executor);
        });
    }

    // ---- lookup ----

    /**
     * The records that may serve {@code offset} in {@code view}, decided with the head from one snapshot:
     * one head read and one range read of at most {@value #LOOKUP_SCAN_LIMIT} keys, whatever the number of
     * generations or appends.
     *
     * @return a future failing with {@link UnknownStreamException} when the stream has no head
     */
    public CompletableFuture<IndexLookup> lookup(StreamId stream, ReadView view, long offset) {
        return guard(() -> {
            var range = ks.indexCoveringRange(stream, view, offset);
            return db.readAsync(tr -> {
                CompletableFuture<Optional<StreamHead>> head = readHead(tr, stream);
                CompletableFuture<List<KeyValue>> scan =
                        tr.getRange(range, LOOKUP_SCAN_LIMIT).asList();
                return head.thenCombine(scan, (h, kvs) -> IndexLookup.decide(
                        h.orElseThrow(() -> new UnknownStreamException(stream)), view, offset, decodeIndex(kvs)));
            }, executor);
        });
    }

    private List<IndexRecord> decodeIndex(List<KeyValue> kvs) {
        List<IndexRecord> records = new ArrayList<>(kvs.size());
        for (KeyValue kv : kvs) {
            records.add(IndexRecordCodec.INSTANCE.decode(ks.unpackIndexKey(kv.getKey()), kv.getValue()));
        }
        return records;
    }

    /** Every record of {@code stream} in {@code view} still in the lookup space, in key order (tests, tools). */
    public CompletableFuture<List<IndexRecord>> indexRecords(StreamId stream, ReadView view) {
        return guard(() -> db.readAsync(tr -> tr.getRange(ks.indexViewRange(stream, view)).asList()
                .thenApply(this::decodeIndex), executor));
    }

    /** Up to {@code limit} retired records of {@code stream}, all views: the garbage collector's work list. */
    public CompletableFuture<List<IndexRecord>> retiredRecords(StreamId stream, int limit) {
        return guard(() -> db.readAsync(tr -> tr.getRange(ks.retiredRange(stream), limit).asList()
                .thenApply(kvs -> {
                    List<IndexRecord> out = new ArrayList<>(kvs.size());
                    for (KeyValue kv : kvs) {
                        out.add(IndexRecordCodec.INSTANCE.decode(ks.unpackRetiredKey(kv.getKey()), kv.getValue()));
                    }
                    return out;
                }), executor));
    }

    // ---- publication, quarantine, retirement ----

    /**
     * Publishes a materialized representation in one transaction (see {@link PublicationOutcome#decide}):
     * validates head and sources, allocates the next generation id of (stream, view), writes the COMMITTED
     * record and moves same-view sources and superseded records of the view to RETIRED. Of two publications racing for the same sources exactly
     * one commits; the other is retried by the runner and then sees {@link PublicationOutcome.SourceChanged}.
     *
     * @return a future failing with {@link UnknownStreamException} when the stream has no head
     */
    public CompletableFuture<PublicationOutcome> publish(PublicationRequest request) {
        return guard(() -> {
            Objects.requireNonNull(request, "request");
            StreamId stream = request.stream();
            var inRange = ks.indexEndOffsetRange(stream, request.view(),
                    new OffsetRange(request.range().start() + 1, request.range().end() + 1));
            return db.runAsync(tr -> {
                CompletableFuture<Optional<StreamHead>> head = readHead(tr, stream);
                CompletableFuture<byte[]> genSeq = tr.get(ks.genSeqKey(stream, request.view()));
                CompletableFuture<List<KeyValue>> sameView = tr.getRange(inRange).asList();
                List<CompletableFuture<byte[]>> sources = new ArrayList<>();
                for (PublicationRequest.SourceRef s : request.sources()) {
                    sources.add(tr.get(ks.indexKey(s.key())));
                }
                List<CompletableFuture<?>> all = new ArrayList<>(sources);
                all.add(head);
                all.add(genSeq);
                all.add(sameView);
                return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
                    StreamHead h = head.join().orElseThrow(() -> new UnknownStreamException(stream));
                    Optional<GenerationId> seq = Optional.ofNullable(genSeq.join())
                            .map(GenerationSeqCodec.INSTANCE::decode);
                    List<Optional<IndexRecord>> current = new ArrayList<>();
                    for (int i = 0; i < sources.size(); i++) {
                        IndexKey k = request.sources().get(i).key();
                        current.add(Optional.ofNullable(sources.get(i).join())
                                .map(b -> IndexRecordCodec.INSTANCE.decode(k, b)));
                    }
                    PublicationOutcome o = PublicationOutcome.decide(h, seq, current, decodeIndex(sameView.join()), request);
                    if (o instanceof PublicationOutcome.Publish p) {
                        tr.set(ks.indexKey(IndexKey.of(p.record())), IndexRecordCodec.INSTANCE.encode(p.record()));
                        tr.set(ks.genSeqKey(stream, request.view()), GenerationSeqCodec.INSTANCE.encode(p.nextGeneration()));
                        for (IndexRecord r : p.retire()) {
                            moveToRetired(tr, r);
                        }
                    }
                    return o;
                });
            }, executor);
        });
    }

    private void moveToRetired(Transaction tr, IndexRecord retired) {
        IndexKey k = IndexKey.of(retired);
        tr.clear(ks.indexKey(k));
        tr.set(ks.retiredKey(k), IndexRecordCodec.INSTANCE.encode(retired));
    }

    /**
     * Marks a record QUARANTINED (evidence showed its target unusable): it stays in the lookup space, serves
     * no reads. Returns the record as stored afterwards, or empty when it is not in the lookup space.
     * Idempotent; a RETIRED record is never brought back.
     */
    public CompletableFuture<Optional<IndexRecord>> quarantine(IndexKey key) {
        return guard(() -> {
            byte[] k = ks.indexKey(key);
            return db.runAsync(tr -> tr.get(k).thenApply(v -> {
                if (v == null) {
                    return Optional.<IndexRecord>empty();
                }
                IndexRecord r = IndexRecordCodec.INSTANCE.decode(key, v);
                if (r.state() == IndexRecordState.QUARANTINED) {
                    return Optional.of(r);
                }
                IndexRecord q = r.withState(IndexRecordState.QUARANTINED);
                tr.set(k, IndexRecordCodec.INSTANCE.encode(q));
                return Optional.of(q);
            }), executor);
        });
    }

    /**
     * Retires a record: moves it from the lookup space to RETIRED, kept for garbage collection. Returns the
     * retired record, or empty when it exists in neither space. Idempotent.
     */
    public CompletableFuture<Optional<IndexRecord>> retire(IndexKey key) {
        return guard(() -> {
            byte[] k = ks.indexKey(key);
            byte[] rk = ks.retiredKey(key);
            return db.runAsync(tr -> tr.get(k).thenCompose(v -> {
                if (v != null) {
                    IndexRecord r = IndexRecordCodec.INSTANCE.decode(key, v).withState(IndexRecordState.RETIRED);
                    moveToRetired(tr, r);
                    return CompletableFuture.completedFuture(Optional.of(r));
                }
                return tr.get(rk).thenApply(rv -> Optional.ofNullable(rv)
                        .map(b -> IndexRecordCodec.INSTANCE.decode(key, b)));
            }), executor);
        });
    }

    // ---- trim ----

    /**
     * Advances the trim offset to {@code trimOffset} (never lowers it) and moves every record lying wholly
     * below it, in every view, to RETIRED so its target is listed for garbage collection. The head moves in the
     * first transaction, so readers see the offsets trimmed at once; records move in bounded batches.
     *
     * @return a future of the head after the trim; failing with {@link UnknownStreamException} when the
     *         stream has no head, or {@link IllegalArgumentException} when {@code trimOffset} is beyond the
     *         committed end
     */
    public CompletableFuture<StreamHead> trim(StreamId stream, long trimOffset) {
        return guard(() -> {
            if (trimOffset < 0) {
                throw new IllegalArgumentException("trim offset must be >= 0: " + trimOffset);
            }
            AtomicReference<StreamHead> last = new AtomicReference<>();
            return AsyncUtil.whileTrue(() -> db.runAsync(tr -> trimStep(tr, stream, trimOffset, last), executor), executor)
                    .thenApply(ignored -> last.get());
        });
    }

    private CompletableFuture<Boolean> trimStep(Transaction tr, StreamId stream, long trimOffset,
            AtomicReference<StreamHead> last) {
        return readHead(tr, stream).thenCompose(h -> {
            StreamHead head = h.orElseThrow(() -> new UnknownStreamException(stream));
            StreamHead next = head.withTrimOffset(trimOffset);
            if (!next.equals(head)) {
                tr.set(ks.headKey(stream), StreamHeadCodec.INSTANCE.encode(next));
            }
            last.set(next);
            List<CompletableFuture<List<KeyValue>>> scans = new ArrayList<>();
            for (ReadView view : ReadView.values()) {
                scans.add(tr.getRange(ks.indexBelowRange(stream, view, next.trimOffset()), TRIM_BATCH).asList());
            }
            return CompletableFuture.allOf(scans.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
                boolean more = false;
                for (CompletableFuture<List<KeyValue>> scan : scans) {
                    List<KeyValue> kvs = scan.join();
                    for (IndexRecord r : decodeIndex(kvs)) {
                        moveToRetired(tr, r.state() == IndexRecordState.RETIRED ? r : r.withState(IndexRecordState.RETIRED));
                    }
                    more |= kvs.size() == TRIM_BATCH;
                }
                return more;
            });
        });
    }

    // ---- garbage collection ----

    /**
     * Forgets retired records whose physical targets the garbage collector has deleted. Only RETIRED keys are
     * touched; a key still in the lookup space is left alone. Idempotent.
     */
    public CompletableFuture<Void> forgetRetired(List<IndexKey> keys) {
        return guard(() -> {
            List<byte[]> retiredKeys = keys.stream().map(ks::retiredKey).toList();
            return db.runAsync(tr -> {
                retiredKeys.forEach(tr::clear);
                return CompletableFuture.completedFuture((Void) null);
            }, executor);
        });
    }

    /**
     * Removes every key of a deleted stream (head, index, retired records, intents, cursors, properties)
     * once its data is gone. Refused (false, nothing removed) unless the head is DELETING and no retired
     * record is left for the garbage collector.
     */
    public CompletableFuture<Boolean> purgeStream(StreamId stream) {
        return guard(() -> db.runAsync(tr -> {
            CompletableFuture<Optional<StreamHead>> head = readHead(tr, stream);
            CompletableFuture<List<KeyValue>> retired = tr.getRange(ks.retiredRange(stream), 1).asList();
            return head.thenCombine(retired, (h, r) -> {
                if (h.isEmpty()) {
                    return true;
                }
                if (h.get().state() != StreamState.DELETING || !r.isEmpty()) {
                    return false;
                }
                tr.clear(ks.streamRange(stream));
                return true;
            });
        }, executor));
    }

    // ---- helpers ----

    /** Runs {@code body}, turning a synchronous exception into a failed future. */
    static <T> CompletableFuture<T> guard(Supplier<CompletableFuture<T>> body) {
        try {
            return body.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
