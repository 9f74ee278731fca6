package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.metadata.codec.OffsetRangeCodec;
import io.nereus.metadata.codec.WalSliceCodec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The garbage collector's metadata steps (DESIGN §6, §7): taking a sealed WAL slice out of service and forgetting
 * it, deciding whether a stream object is still referenced, forgetting retired records, purging deleted streams,
 * and counting what metadata there is. The physical deletions (BookKeeper ledgers, objects) are the caller's,
 * between these steps: a ledger only after {@link #markCollecting} and before {@link #forgetSlice}, an object only
 * after {@link #objectReference} said it is not {@link ObjectReference#LIVE} and before its records are forgotten.
 *
 * <p>A slice leaves service in two conditional steps. {@link #retireSliceRecords} retires, stream by stream, the
 * generation-0 records that target it and no longer have to serve reads (a higher generation covers them, or they
 * are trimmed); it reads the covering records with conflicts, so a quarantine of the covering object racing with
 * it makes it retry and then hold the slice. {@link #markCollecting} then moves the slice to COLLECTING in one
 * transaction that reads, for every stream of the slice, the records of the lookup and FALLBACK spaces in the
 * stream's range and refuses while any targets the slice; generation-0 repair reads the slice's state and refuses a
 * slice that is not OPEN or SEALED, so no record can target a COLLECTING slice afterwards. A stream without a head
 * or with a DELETING head holds nothing: its keys are purged whole.
 *
 * <p>Each operation is one transaction of the shared {@link TransactionRunner}, or a bounded series of them that
 * records its progress in the database, so every step resumes after a crash and may be repeated. Methods return
 * futures and never throw: argument errors fail the future. Thread-safe; holds no mutable state.
 */
public final class CollectionStore {
    /** Records read or changed per transaction by the bounded series of steps. */
    static final int RECORDS_PER_STEP = 1000;
    /** Records of one stream in one slice's range that {@link #markCollecting} reads at most per space. */
    static final int MARK_CHECK_LIMIT = 10_000;
    /** Keys read per transaction of a census. */
    static final int CENSUS_KEYS_PER_STEP = 10_000;

    private final TransactionRunner tx;
    private final NereusKeyspace ks;
    private final StoredRecords records;
    private final WalSliceStore slices;

    CollectionStore(TransactionRunner tx, NereusKeyspace ks, StoredRecords records, WalSliceStore slices) {
        this.tx = tx;
        this.ks = ks;
        this.records = records;
        this.slices = slices;
    }

    // ---- WAL slices ----

    /**
     * Retires the generation-0 records of {@code stream} that target slice {@code sliceId} ({@code range} is the
     * stream's range in the slice, {@link WalSliceStore#ranges}) and need not serve reads any more: a record of the
     * FALLBACK space whose offsets from the trim offset on are covered by COMMITTED records of higher generations in
     * the lookup space (read in the same transaction), and any such record wholly below the trim offset. A record of
     * the lookup space above the trim offset is the only copy of its offsets and holds the slice, as does a FALLBACK
     * record whose higher generation is gone or quarantined. Runs in transactions of at most
     * {@value #RECORDS_PER_STEP} records each.
     *
     * @return empty when no record of the stream targeting the slice is left in the lookup or FALLBACK space
     *         (retired now or before, or the stream is deleted); otherwise what holds the slice (records retired
     *         before it was found stay retired: their offsets are served by the higher generation)
     */
    public CompletableFuture<Optional<SliceHold>> retireSliceRecords(long sliceId, StreamId stream, OffsetRange range) {
        return guard(() -> {
            Objects.requireNonNull(stream, "stream");
            Objects.requireNonNull(range, "range");
            return retireFrom(sliceId, stream, range, range.start());
        });
    }

    private CompletableFuture<Optional<SliceHold>> retireFrom(long sliceId, StreamId stream, OffsetRange range,
            long from) {
        return tx.run(tr -> retireStep(tr, sliceId, stream, range, from)).thenCompose(step -> {
            if (step instanceof RetireStep.Next n) {
                return retireFrom(sliceId, stream, range, n.from());
            }
            return CompletableFuture.completedFuture(((RetireStep.Done) step).hold());
        });
    }

    private sealed interface RetireStep {
        record Next(long from) implements RetireStep {
        }

        record Done(Optional<SliceHold> hold) implements RetireStep {
        }
    }

    /**
     * One bounded step: every record ending at or below {@code from} is decided. Reads the FALLBACK records ending
     * in {@code (from, range.end]}, then the lookup records ending after the first one's start (or {@code from}), so
     * that every record that may cover a FALLBACK record read is read too, unless the scan's limit cuts it, in which
     * case only what ends before the cut is decided.
     */
    private CompletableFuture<RetireStep> retireStep(Transaction tr, long sliceId, StreamId stream,
            OffsetRange range, long from) {
        // The head as a snapshot: its trim offset only grows (a stale one retires less) and a deleted stream's keys
        // are purged whole; reading it with a conflict would make every commit of the stream restart the step.
        CompletableFuture<Optional<StreamHead>> head = records.head(tr.snapshot(), stream);
        CompletableFuture<List<KeyValue>> fallbackScan = tr.getRange(ks.fallbackEndOffsetRange(stream,
                ReadView.COMMITTED, new OffsetRange(from + 1, range.end() + 1)), RECORDS_PER_STEP).asList();
        return head.thenCombine(fallbackScan, FallbackScan::new).thenCompose(read -> {
            Optional<StreamHead> h = read.head();
            if (h.isEmpty() || h.get().state() == StreamState.DELETING) {
                return CompletableFuture.completedFuture(new RetireStep.Done(Optional.empty()));
            }
            List<IndexRecord> fallback = records.fallback(read.fallback());
            boolean fallbackCut = read.fallback().size() == RECORDS_PER_STEP;
            long trim = h.get().trimOffset();
            long scanFrom = fallback.isEmpty() ? from : Math.min(from, fallback.get(0).range().start());
            return tr.getRange(ks.indexCoveringRange(stream, ReadView.COMMITTED, scanFrom), RECORDS_PER_STEP)
                    .asList().thenApply(l -> decideRetire(tr, sliceId, stream, range, from, trim, fallback,
                            fallbackCut, records.index(l), l.size() == RECORDS_PER_STEP));
        });
    }

    /** The head and the FALLBACK records a retire step read first. */
    private record FallbackScan(Optional<StreamHead> head, List<KeyValue> fallback) {
    }

    private RetireStep decideRetire(Transaction tr, long sliceId, StreamId stream, OffsetRange range, long from,
            long trim, List<IndexRecord> fallback, boolean fallbackCut, List<IndexRecord> lookup, boolean lookupCut) {
        long decided = range.end();
        if (lookupCut) {
            decided = Math.min(decided, lookup.get(lookup.size() - 1).endOffset());
        }
        if (fallbackCut) {
            decided = Math.min(decided, fallback.get(fallback.size() - 1).endOffset());
        }
        for (IndexRecord r : lookup) {
            if (r.endOffset() > decided) {
                break;
            }
            if (!targets(r, sliceId)) {
                continue;
            }
            if (r.endOffset() > trim) {
                return new RetireStep.Done(Optional.of(new SliceHold(sliceId, stream, r.range(),
                        "a " + r.state() + " generation-0 record of the lookup space above the trim offset " + trim)));
            }
            records.moveToRetired(tr, r.withState(IndexRecordState.RETIRED));
        }
        List<IndexRecord> higher = lookup.stream()
                .filter(r -> !r.generation().isAppend() && r.state() == IndexRecordState.COMMITTED)
                .sorted(Comparator.comparingLong(r -> r.range().start()))
                .toList();
        for (IndexRecord r : fallback) {
            if (r.endOffset() > decided) {
                break;
            }
            if (!targets(r, sliceId)) {
                continue;
            }
            long start = Math.max(r.range().start(), trim);
            if (start < r.endOffset() && !covered(higher, start, r.endOffset())) {
                return new RetireStep.Done(Optional.of(new SliceHold(sliceId, stream, r.range(),
                        "no COMMITTED higher generation covers offsets [" + start + ", " + r.endOffset()
                                + ") of a superseded generation-0 record")));
            }
            records.moveToRetired(tr, r.withState(IndexRecordState.RETIRED));
        }
        if (decided >= range.end()) {
            return new RetireStep.Done(Optional.empty());
        }
        if (decided <= from) {
            return new RetireStep.Done(Optional.of(new SliceHold(sliceId, stream, new OffsetRange(from,
                    range.end()), "more than " + RECORDS_PER_STEP + " records overlap offset " + from)));
        }
        return new RetireStep.Next(decided);
    }

    private static boolean targets(IndexRecord r, long sliceId) {
        return r.generation().isAppend() && r.target() instanceof WalTarget w && w.sliceId() == sliceId;
    }

    /** True when {@code sortedByStart} cover {@code [start, end)} without a gap. */
    private static boolean covered(List<IndexRecord> sortedByStart, long start, long end) {
        long pos = start;
        for (IndexRecord c : sortedByStart) {
            if (c.range().start() > pos) {
                break;
            }
            pos = Math.max(pos, c.endOffset());
            if (pos >= end) {
                return true;
            }
        }
        return pos >= end;
    }

    /**
     * Moves slice {@code sliceId} from SEALED to COLLECTING when no record of the lookup or FALLBACK space targets
     * it, all read in this transaction: for each stream of the slice that has a head not DELETING, the records ending
     * inside the stream's range in the slice (at most {@value #MARK_CHECK_LIMIT} per space; more holds the slice).
     * Call it after {@link #retireSliceRecords} has retired every stream's records. Marking a COLLECTING slice
     * again writes nothing.
     */
    public CompletableFuture<SliceCollection> markCollecting(long sliceId) {
        return guard(() -> {
            byte[] sliceKey = ks.walSliceKey(sliceId);
            Range streamsRange = ks.walSliceStreamsRange(sliceId);
            return tx.run(tr -> tr.get(sliceKey).thenCompose(v -> {
                if (v == null) {
                    return CompletableFuture.completedFuture(new SliceCollection.Gone());
                }
                WalSlice slice = WalSliceCodec.INSTANCE.decode(v);
                if (slice.state() == WalSliceState.COLLECTING) {
                    return CompletableFuture.completedFuture(new SliceCollection.Collecting(slice));
                }
                if (slice.state() != WalSliceState.SEALED) {
                    return CompletableFuture.completedFuture(new SliceCollection.NotSealed(slice));
                }
                return tr.getRange(streamsRange).asList().thenCompose(kvs -> {
                    List<CompletableFuture<Optional<SliceHold>>> checks = new ArrayList<>();
                    for (KeyValue kv : kvs) {
                        StreamId stream = ks.unpackWalStreamKey(kv.getKey()).stream();
                        OffsetRange range = OffsetRangeCodec.INSTANCE.decode(kv.getValue());
                        checks.add(checkStream(tr, sliceId, stream, range));
                    }
                    return CompletableFuture.allOf(checks.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
                        for (CompletableFuture<Optional<SliceHold>> c : checks) {
                            if (c.join().isPresent()) {
                                return (SliceCollection) new SliceCollection.Held(c.join().get());
                            }
                        }
                        WalSlice collecting = slice.withState(WalSliceState.COLLECTING);
                        slices.write(tr, sliceId, Optional.of(slice.state()), collecting);
                        return new SliceCollection.Collecting(collecting);
                    });
                });
            }));
        });
    }

    private CompletableFuture<Optional<SliceHold>> checkStream(Transaction tr, long sliceId, StreamId stream,
            OffsetRange range) {
        OffsetRange ends = new OffsetRange(range.start() + 1, range.end() + 1);
        CompletableFuture<Optional<StreamHead>> head = records.head(tr.snapshot(), stream);
        CompletableFuture<List<KeyValue>> lookup = tr.getRange(ks.indexEndOffsetRange(stream, ReadView.COMMITTED,
                ends), MARK_CHECK_LIMIT).asList();
        CompletableFuture<List<KeyValue>> fallback = tr.getRange(ks.fallbackEndOffsetRange(stream,
                ReadView.COMMITTED, ends), MARK_CHECK_LIMIT).asList();
        // The stream's open run is not under its end offset: read at its own key, it holds the slice when it names it.
        // A snapshot read, as every commit of the stream rewrites that key: no commit can make it name this slice,
        // which takes no appends any more, and one moving it away from the slice writes it under its end, which the
        // lookup scan above reads with a conflict.
        CompletableFuture<Optional<IndexRecord>> openRun = records.openRun(tr.snapshot(), stream);
        return CompletableFuture.allOf(head, lookup, fallback, openRun).thenApply(ignored -> {
            Optional<StreamHead> h = head.join();
            if (h.isEmpty() || h.get().state() == StreamState.DELETING) {
                return Optional.empty();
            }
            if (lookup.join().size() == MARK_CHECK_LIMIT || fallback.join().size() == MARK_CHECK_LIMIT) {
                return Optional.of(new SliceHold(sliceId, stream, range, "more than " + MARK_CHECK_LIMIT
                        + " records in the stream's range of the slice"));
            }
            List<IndexRecord> found = new ArrayList<>(records.index(lookup.join()));
            found.addAll(records.fallback(fallback.join()));
            openRun.join().ifPresent(found::add);
            for (IndexRecord r : found) {
                if (targets(r, sliceId)) {
                    return Optional.of(new SliceHold(sliceId, stream, r.range(), "a " + r.state()
                            + " generation-0 record still targets the slice"));
                }
            }
            return Optional.empty();
        });
    }

    /**
     * Forgets COLLECTING slice {@code sliceId} once its ledger is deleted: for each of its streams the RETIRED
     * generation-0 records that target it, the stream's intent for it and the stream's range in it, then the slice
     * record itself. A bounded series of transactions; a stream's range key is narrowed as its retired records go,
     * so a repeated or resumed call continues where the last one stopped. Forgetting a slice that is gone does
     * nothing.
     *
     * @return a future failing with {@link IllegalStateException} (nothing written) when the slice is not COLLECTING
     */
    public CompletableFuture<Void> forgetSlice(long sliceId) {
        return guard(() -> tx.repeat(() -> tx.run(tr -> forgetSliceStep(tr, sliceId))));
    }

    /** One step of {@link #forgetSlice}; true while there is more to do. */
    private CompletableFuture<Boolean> forgetSliceStep(Transaction tr, long sliceId) {
        byte[] sliceKey = ks.walSliceKey(sliceId);
        return tr.get(sliceKey).thenCompose(v -> {
            if (v == null) {
                return CompletableFuture.completedFuture(false);
            }
            WalSlice slice = WalSliceCodec.INSTANCE.decode(v);
            if (slice.state() != WalSliceState.COLLECTING) {
                throw new IllegalStateException("WAL slice " + sliceId + " is " + slice.state()
                        + ", not COLLECTING: its records are not forgotten");
            }
            return tr.getRange(ks.walSliceStreamsRange(sliceId), 1).asList().thenCompose(kvs -> {
                if (kvs.isEmpty()) {
                    tr.clear(sliceKey);
                    tr.clear(ks.walStateKey(slice.state(), sliceId));
                    return CompletableFuture.completedFuture(false);
                }
                KeyValue kv = kvs.get(0);
                StreamId stream = ks.unpackWalStreamKey(kv.getKey()).stream();
                OffsetRange range = OffsetRangeCodec.INSTANCE.decode(kv.getValue());
                Range retired = ks.retiredEndOffsetRange(stream, ReadView.COMMITTED,
                        new OffsetRange(range.start() + 1, range.end() + 1));
                return tr.getRange(retired, RECORDS_PER_STEP).asList().thenApply(found -> {
                    for (IndexRecord r : records.retired(found)) {
                        if (targets(r, sliceId)) {
                            tr.clear(ks.retiredKey(IndexKey.of(r)));
                        }
                    }
                    if (found.size() == RECORDS_PER_STEP) {
                        long next = ks.unpackRetiredKey(found.get(found.size() - 1).getKey()).endOffset();
                        tr.set(kv.getKey(), OffsetRangeCodec.INSTANCE.encode(new OffsetRange(next, range.end())));
                    } else {
                        tr.clear(kv.getKey());
                        tr.clear(ks.intentKey(stream, sliceId));
                    }
                    return true;
                });
            });
        });
    }

    // ---- objects and retired records ----

    /**
     * How the index refers to the object {@code objectKey} holding offsets ending at {@code endOffset} of
     * {@code stream} in {@code view} (the parts an object's name carries): reads the records of that end offset in
     * the lookup, FALLBACK and RETIRED spaces. An object of a stream without a head is referenced by nothing.
     */
    public CompletableFuture<ObjectReference> objectReference(StreamId stream, ReadView view, long endOffset,
            String objectKey) {
        return guard(() -> {
            Objects.requireNonNull(objectKey, "objectKey");
            OffsetRange ends = new OffsetRange(endOffset, Math.addExact(endOffset, 1));
            return tx.read(tr -> {
                CompletableFuture<Optional<StreamHead>> head = records.head(tr, stream);
                CompletableFuture<List<KeyValue>> lookup = tr.getRange(ks.indexEndOffsetRange(stream, view, ends))
                        .asList();
                CompletableFuture<List<KeyValue>> fallback = tr.getRange(ks.fallbackEndOffsetRange(stream, view,
                        ends)).asList();
                CompletableFuture<List<KeyValue>> retired = tr.getRange(ks.retiredEndOffsetRange(stream, view,
                        ends)).asList();
                return CompletableFuture.allOf(head, lookup, fallback, retired).thenApply(ignored -> {
                    if (head.join().isEmpty()) {
                        return ObjectReference.NONE;
                    }
                    List<IndexRecord> live = new ArrayList<>(records.index(lookup.join()));
                    live.addAll(records.fallback(fallback.join()));
                    if (live.stream().anyMatch(r -> names(r, objectKey))) {
                        return ObjectReference.LIVE;
                    }
                    return records.retired(retired.join()).stream().anyMatch(r -> names(r, objectKey))
                            ? ObjectReference.RETIRED : ObjectReference.NONE;
                });
            });
        });
    }

    private static boolean names(IndexRecord r, String objectKey) {
        return r.target() instanceof ObjectTarget o && o.key().equals(objectKey);
    }

    /**
     * Every RETIRED record of {@code stream} (all views) whose target is a stream object, read in bounded
     * transactions: the object collector's work list for the stream.
     */
    public CompletableFuture<List<IndexRecord>> retiredObjectRecords(StreamId stream) {
        return guard(() -> objectRecords(List.of(new Space(ks.retiredRange(stream), true))));
    }

    /**
     * Forgets retired records whose physical targets the caller has deleted. Only RETIRED keys are touched; a key
     * still in the lookup space is left alone. Idempotent.
     */
    public CompletableFuture<Void> forgetRetired(List<IndexKey> keys) {
        return guard(() -> {
            List<byte[]> retiredKeys = keys.stream().map(ks::retiredKey).toList();
            return tx.run(tr -> {
                retiredKeys.forEach(tr::clear);
                return CompletableFuture.completedFuture((Void) null);
            });
        });
    }

    // ---- deleted streams ----

    /** Up to {@code limit} deleted streams still to purge (their purge marks), by stream id. */
    public CompletableFuture<List<StreamId>> purges(int limit) {
        return guard(() -> {
            if (limit < 1) {
                throw new IllegalArgumentException("limit must be >= 1: " + limit);
            }
            return tx.read(tr -> tr.getRange(ks.purgeRange(), limit).asList().thenApply(kvs -> kvs.stream()
                    .map(kv -> ks.unpackPurgeKey(kv.getKey())).toList()));
        });
    }

    /**
     * Every record of {@code stream} (lookup and RETIRED spaces, all views) that targets a stream object, read in
     * bounded transactions: the objects a purge deletes before it removes the stream's keys.
     */
    public CompletableFuture<List<IndexRecord>> objectRecords(StreamId stream) {
        return guard(() -> {
            List<Space> spaces = new ArrayList<>();
            for (ReadView view : ReadView.values()) {
                spaces.add(new Space(ks.indexViewRange(stream, view), false));
            }
            spaces.add(new Space(ks.retiredRange(stream), true));
            return objectRecords(spaces);
        });
    }

    /** A key range of index records, of the lookup space or of RETIRED. */
    private record Space(Range range, boolean retired) {
    }

    private CompletableFuture<List<IndexRecord>> objectRecords(List<Space> spaces) {
        List<IndexRecord> out = new ArrayList<>();
        return collectObjects(spaces, 0, null, out).thenApply(ignored -> out);
    }

    private CompletableFuture<Void> collectObjects(List<Space> spaces, int i, byte[] after, List<IndexRecord> out) {
        if (i >= spaces.size()) {
            return CompletableFuture.completedFuture(null);
        }
        Space space = spaces.get(i);
        Range rest = after == null ? space.range() : new Range(keyAfter(after), space.range().end);
        return tx.read(tr -> tr.getRange(rest, RECORDS_PER_STEP).asList()).thenCompose(kvs -> {
            for (IndexRecord r : space.retired() ? records.retired(kvs) : records.index(kvs)) {
                if (r.target() instanceof ObjectTarget) {
                    out.add(r);
                }
            }
            if (kvs.size() == RECORDS_PER_STEP) {
                return collectObjects(spaces, i, kvs.get(kvs.size() - 1).getKey(), out);
            }
            return collectObjects(spaces, i + 1, null, out);
        });
    }

    /** The first key after {@code key}. */
    private static byte[] keyAfter(byte[] key) {
        return ByteArrayUtil.join(key, new byte[] {0});
    }

    /**
     * Removes every key of deleted {@code stream} (head, index of every view, FALLBACK and RETIRED records,
     * generation counters, intents, cursors, properties) and its purge mark, in one transaction (a range clear);
     * call it after deleting the objects {@link #objectRecords} named. Refused (false, nothing removed) while the
     * head exists and is not DELETING. Idempotent.
     */
    public CompletableFuture<Boolean> purgeStream(StreamId stream) {
        return guard(() -> tx.run(tr -> records.head(tr, stream).thenApply(h -> {
            if (h.isPresent() && h.get().state() != StreamState.DELETING) {
                return false;
            }
            tr.clear(ks.streamRange(stream));
            tr.clear(ks.purgeKey(stream));
            return true;
        })));
    }

    // ---- census ----

    /**
     * Counts every key under the root by kind (see {@link MetadataCensus}), reading at most
     * {@value #CENSUS_KEYS_PER_STEP} keys per snapshot transaction. Its cost is proportional to the metadata there
     * is, so callers take it rarely.
     */
    public CompletableFuture<MetadataCensus> census() {
        return guard(() -> {
            Map<String, Long> byKind = new HashMap<>();
            long[] totals = new long[2];
            Range all = ks.root().range();
            return censusFrom(all, all.begin, byKind, totals)
                    .thenApply(ignored -> new MetadataCensus(totals[0], totals[1], byKind));
        });
    }

    private CompletableFuture<Void> censusFrom(Range all, byte[] begin, Map<String, Long> byKind, long[] totals) {
        Range rest = new Range(begin, all.end);
        return tx.read(tr -> tr.getRange(rest, CENSUS_KEYS_PER_STEP).asList()).thenCompose(kvs -> {
            for (KeyValue kv : kvs) {
                totals[0]++;
                totals[1] += kv.getKey().length + kv.getValue().length;
                byKind.merge(kind(kv.getKey()), 1L, Long::sum);
            }
            if (kvs.size() < CENSUS_KEYS_PER_STEP) {
                return CompletableFuture.completedFuture(null);
            }
            byte[] last = kvs.get(kvs.size() - 1).getKey();
            return censusFrom(all, keyAfter(last), byKind, totals);
        });
    }

    private String kind(byte[] key) {
        Tuple t;
        try {
            t = ks.root().unpack(key);
        } catch (RuntimeException e) {
            return "other";
        }
        if (t.size() == 0 || !(t.get(0) instanceof Long tag)) {
            return "other";
        }
        return switch (tag.intValue()) {
            case NereusKeyspace.CATALOG -> "catalog";
            case NereusKeyspace.STREAM -> t.size() > 2 && t.get(2) instanceof Long sub ? streamKind(sub.intValue())
                    : "other";
            case NereusKeyspace.WAL -> t.size() == 2 ? "walSlice" : "walStream";
            case NereusKeyspace.COUNTER -> "counter";
            case NereusKeyspace.META -> "meta";
            case NereusKeyspace.WAL_LEASE -> "walLease";
            case NereusKeyspace.WAL_STATE -> "walState";
            case NereusKeyspace.PURGE -> "purge";
            default -> "other";
        };
    }

    private static String streamKind(int sub) {
        return switch (sub) {
            case NereusKeyspace.HEAD -> "head";
            case NereusKeyspace.INDEX -> "index";
            case NereusKeyspace.RETIRED -> "retired";
            case NereusKeyspace.GENSEQ -> "genseq";
            case NereusKeyspace.INTENT -> "intent";
            case NereusKeyspace.CURSOR -> "cursor";
            case NereusKeyspace.PROPS -> "props";
            case NereusKeyspace.FALLBACK -> "fallback";
            case NereusKeyspace.PRODUCER -> "producer";
            case NereusKeyspace.PRODUCER_END -> "producerEnd";
            default -> "other";
        };
    }
}
