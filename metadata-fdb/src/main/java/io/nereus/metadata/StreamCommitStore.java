package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import io.nereus.metadata.codec.IndexRecordCodec;
import io.nereus.metadata.codec.OffsetRangeCodec;
import io.nereus.metadata.codec.StreamHeadCodec;
import io.nereus.metadata.codec.WalIntentCodec;
import io.nereus.metadata.codec.WalSliceCodec;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Stream heads and what moves them: writer acquisition (the epoch that fences earlier writers), the commit of
 * acknowledged WAL batches (head, generation-0 records, one per run of a stream's appends into a slice, the
 * stream's INTENT in each slice and its range in the slice), seal and trim; commit, seal and trim are conditional on
 * the writer epoch the caller holds. Owns {@code (STREAM, sid, HEAD)} and {@code (STREAM, sid, INTENT, slice)}; writes
 * generation-0 index records and the per-stream slice ranges {@code (WAL, slice, sid)}, reads the slice records
 * of {@link WalSliceStore}, and, when trimming, moves records below the trim offset to RETIRED.
 *
 * <p>Each operation is one transaction of the shared {@link TransactionRunner} (trim: a bounded series of
 * them) that reads the head it changes, so a racing commit, fence or trim is a conflict, not an overwrite; a
 * commit retried after an unknown result finds its appends applied and advances nothing twice. Methods return
 * futures and never throw: argument errors fail the future. Expected refusals of a commit (fenced, wrong
 * start, not accepting) are {@link CommitResult} values, not exceptions. Thread-safe; its only mutable state is
 * the table of keys kept for the streams committed lately ({@link StreamKeys}), which any thread may replace.
 */
public final class StreamCommitStore {
    /** Index records moved out of the lookup space per trim transaction. */
    static final int TRIM_BATCH = 500;
    /** What a read of the record covering an append that was not needed stands for (no record). */
    private static final CompletableFuture<Optional<IndexRecord>> NO_RECORD =
            CompletableFuture.completedFuture(Optional.empty());
    /** Keys read to find the generation-0 record over an append's end (a higher generation may end there too). */
    private static final int COVERING_SCAN = 4;

    /** How many streams' commit keys are kept ({@link StreamKeys}); a power of two. */
    static final int KEPT_STREAM_KEYS = 8192;

    private final TransactionRunner tx;
    private final NereusKeyspace ks;
    private final StoredRecords records;
    /**
     * The keys of the streams committed lately, each in the place its stream id picks: a stream whose commit finds
     * another stream's keys there replaces them. A plain array, read and written by whichever threads run commits:
     * its elements are immutable and each stands for the keys it names, so a write lost to a race, or a read that
     * finds an older element, only means keys built once more.
     */
    private final StreamKeys[] keptKeys = new StreamKeys[KEPT_STREAM_KEYS];

    StreamCommitStore(TransactionRunner tx, NereusKeyspace ks, StoredRecords records) {
        this.tx = tx;
        this.ks = ks;
        this.records = records;
    }

    // ---- heads and writers ----

    /** The stream's head as stored now; empty when the stream has none (never created, or purged). */
    public CompletableFuture<Optional<StreamHead>> head(StreamId stream) {
        return guard(() -> tx.read(tr -> records.head(tr, stream)));
    }


    /**
     * Makes {@code writerId} the stream's writer with a new, higher epoch, fencing every earlier writer. The
     * returned head's {@code writerEpoch} is the fencing token to pass with every commit.
     *
     * @return a future failing with {@link NereusException} NOT_FOUND when the stream has no head
     */
    public CompletableFuture<StreamHead> acquireWriter(StreamId stream, String writerId) {
        return guard(() -> {
            Objects.requireNonNull(writerId, "writerId");
            return tx.run(tr -> records.head(tr, stream).thenApply(h -> {
                StreamHead next = h.orElseThrow(() -> StoredRecords.unknownStream(stream)).withNewWriter(writerId);
                tr.set(ks.headKey(stream), StreamHeadCodec.INSTANCE.encode(next));
                return next;
            }));
        });
    }

    /**
     * Seals the stream (a terminated topic): no more commits; reads, trims and cursors continue. Conditional on
     * {@code writerEpoch}: a writer that was fenced cannot seal.
     *
     * @return a future failing with {@link NereusException} FENCED (context headEpoch, requestEpoch) when
     *         the head has another epoch, or NOT_FOUND when the stream has no head
     */
    public CompletableFuture<StreamHead> seal(StreamId stream, long writerEpoch) {
        return guard(() -> tx.run(tr -> records.head(tr, stream).thenApply(h -> {
            StreamHead head = h.orElseThrow(() -> StoredRecords.unknownStream(stream));
            requireEpoch(stream, head, writerEpoch);
            StreamHead next = head.withState(StreamState.SEALED);
            tr.set(ks.headKey(stream), StreamHeadCodec.INSTANCE.encode(next));
            return next;
        })));
    }

    /** Refuses, with FENCED naming the stream and both epochs, a request whose epoch is not the head's. */
    private static void requireEpoch(StreamId stream, StreamHead head, long writerEpoch) {
        if (head.writerEpoch() != writerEpoch) {
            throw new NereusException(ErrorCode.FENCED, ErrorContext.of("stream", stream,
                    "headEpoch", head.writerEpoch(), "requestEpoch", writerEpoch));
        }
    }

    // ---- commit ----

    /**
     * Commits one or more consecutive WAL batches: for every append, checks the writer epoch and that it starts
     * at the stream's committed end, advances the head, records the append in generation 0 and, on the stream's
     * first append into the slice, writes its intent; all in one transaction, all or nothing. The slice of every
     * append must be registered and OPEN ({@link WalSliceStore#register}; refused as {@link CommitResult.SliceNotOpen}
     * otherwise): its record is read, so a racing seal is a conflict.
     *
     * <p><b>Runs.</b> A stream's consecutive appends into one slice share one generation-0 record of up to
     * {@code runSections} sections ({@link IndexRecord#continuesWith}; 1: a record per append). The stream's last
     * run is its open run, stored at the fixed key {@link IndexKey#openRun} with its end in the value: the commit
     * reads it (with a conflict range, so a publication or trim moving it meanwhile is a conflict, not an overwrite)
     * and, when the append continues it, writes it again, longer, at the same key; appends of one stream within the
     * commit extend it further. An append that does not continue it (another slice, a full run, a run no longer
     * COMMITTED) closes it, writing it under its own end offset, and starts the new open run. The index therefore
     * holds one key per run, not one per append, while every section stays individually addressable; and an append
     * that extends the open run changes the value of a key that exists, adding none.
     *
     * <p>For every stream and slice the commit advances, the stream's range in the slice {@code (WAL, slice, sid)} is
     * set to run from the first offset the stream committed into the slice (its intent's, or this commit's first) to
     * the end of its last append there, a blind write derived from the intent the transaction reads anyway. The
     * intent is a snapshot read, since only a commit of the same stream writes it and it writes the head too. When
     * the stored head already covers an append (a retry whose first attempt may have succeeded), the generation-0
     * record over the append's end is read too, and the append counts as applied when that record lists its section.
     * A stream may have several appends (one per coalesced batch), listed in offset order: the first must start at
     * the head's committed end, each next one at the previous one's end, all with the stream's epoch. A refusal of
     * any append refuses the whole commit and names that append. Retrying after an unknown result finds the appends
     * already applied and reports them committed without advancing anything twice.
     *
     * @param runSections the most sections one generation-0 record lists, {@code 1..}{@link WalTarget#MAX_SECTIONS}
     * @return on success, one head per append in append order: the head after that append (for an append an
     *         earlier attempt already applied, the stored head)
     */
    public CompletableFuture<CommitResult> commit(List<StreamAppend> appends, int runSections) {
        return guard(() -> {
            List<StreamAppend> batch = List.copyOf(appends);
            if (batch.isEmpty()) {
                throw new IllegalArgumentException("a commit needs at least one append");
            }
            if (runSections < 1 || runSections > WalTarget.MAX_SECTIONS) {
                throw new IllegalArgumentException("sections per generation-0 record must be in 1.."
                        + WalTarget.MAX_SECTIONS + ": " + runSections);
            }
            return tx.run(tr -> commitBody(tr, batch, runSections));
        });
    }

    /** {@link #commit(List, int)} with runs of up to {@link WalTarget#MAX_SECTIONS} sections. */
    public CompletableFuture<CommitResult> commit(List<StreamAppend> appends) {
        return commit(appends, WalTarget.MAX_SECTIONS);
    }

    private CompletableFuture<CommitResult> commitBody(Transaction tr, List<StreamAppend> batch, int runSections) {
        // sized for one append per stream, the usual shape, so that no map grows while a commit is built
        Map<StreamId, StreamCommit> streams = new LinkedHashMap<>(capacity(batch.size()));
        Map<Long, CompletableFuture<byte[]>> slices = new HashMap<>();
        List<CompletableFuture<byte[]>> all = new ArrayList<>(3 * batch.size() + 1);
        for (StreamAppend a : batch) {
            StreamCommit sc = streams.get(a.stream());
            if (sc == null) {
                sc = new StreamCommit(keysOf(a.stream()), tr);
                all.add(sc.headRead);
                all.add(sc.runRead);
                streams.put(a.stream(), sc);
            }
            long sliceId = a.target().sliceId();
            if (sc.slice(sliceId) == null) {
                // A snapshot read: only a commit of the same stream writes its intents, and that commit also writes
                // the head read above, so the head's conflict already covers them.
                SliceKeys keys = sliceKeysOf(sc, sliceId);
                InSlice in = sc.add(new InSlice(keys, tr.snapshot().get(keys.intent)));
                all.add(in.intentRead);
            }
            if (!slices.containsKey(sliceId)) {
                CompletableFuture<byte[]> slice = tr.get(ks.walSliceKey(sliceId));
                slices.put(sliceId, slice);
                all.add(slice);
            }
        }
        return allCompleted(all).thenCompose(ignored -> {
            // decoded once; a stream without a head (unknown) keeps none, and the decision reports it in batch order
            for (StreamCommit sc : streams.values()) {
                byte[] bytes = sc.headRead.join();
                if (bytes != null) {
                    sc.stored = StreamHeadCodec.INSTANCE.decode(bytes);
                }
            }
            return coveringRecords(tr, batch, streams)
                    .thenApply(covering -> decideAndWrite(tr, batch, streams, covering, slices, runSections));
        });
    }

    /**
     * Completes when every read of {@code reads} (not empty) has, as {@link CompletableFuture#allOf} does, failing
     * when one failed; but waits on the last one first. The embedded engine completes a transaction's reads in the
     * order they were issued, so by then the others have completed, and no tree of completions is built: allOf's
     * costs three objects per read (a commit at a thousand streams reads about three keys per stream, every read
     * still pending when the commit body asks). A cluster's reads, which may complete in any order, are then waited
     * on by allOf.
     */
    static CompletableFuture<Void> allCompleted(List<CompletableFuture<byte[]>> reads) {
        return reads.get(reads.size() - 1).handle((value, error) -> null).thenCompose(ignored -> {
            for (int i = 0; i < reads.size(); i++) {
                CompletableFuture<byte[]> f = reads.get(i);
                if (!f.isDone() || f.isCompletedExceptionally()) {
                    return CompletableFuture.allOf(reads.toArray(new CompletableFuture<?>[0]));
                }
            }
            return CompletableFuture.completedFuture(null);
        });
    }

    /** The keys of {@code stream}'s commits: those kept for it, else new ones, kept from now on. */
    private StreamKeys keysOf(StreamId stream) {
        int at = place(stream);
        StreamKeys kept = keptKeys[at];
        if (kept != null && kept.stream.equals(stream)) {
            return kept;
        }
        IndexKey openRun = IndexKey.openRun(stream);
        StreamKeys keys = new StreamKeys(stream, ks.headKey(stream), openRun, ks.indexKey(openRun), null);
        keptKeys[at] = keys;
        return keys;
    }

    /**
     * The keys of {@code sc}'s stream in WAL slice {@code sliceId}: those kept with its stream's keys when they are of
     * that slice, else new ones, kept from now on in place of the previous slice's.
     */
    private SliceKeys sliceKeysOf(StreamCommit sc, long sliceId) {
        SliceKeys kept = sc.keys.slice;
        if (kept != null && kept.sliceId == sliceId) {
            return kept;
        }
        StreamId stream = sc.keys.stream;
        SliceKeys keys = new SliceKeys(sliceId, ks.intentKey(stream, sliceId), ks.walStreamKey(sliceId, stream));
        keptKeys[place(stream)] = sc.keys.inSlice(keys);
        return keys;
    }

    /** The place of {@code stream}'s keys in {@link #keptKeys}. */
    private static int place(StreamId stream) {
        // ids are allocated from a counter: their low bits tell consecutive streams apart
        return (int) stream.value() & (KEPT_STREAM_KEYS - 1);
    }

    /**
     * The keys a commit reads and writes for one stream: its head and its open run, and its intent and range in the
     * WAL slice it appended into last. Kept from commit to commit ({@link #keptKeys}) rather than packed anew: a
     * commit at a thousand topics appends to hundreds of streams, each of whose keys was packed into a new array per
     * commit; and where the embedded engine's stored key is this very array (the key first written through these),
     * its comparison of keys ends on identity. The arrays are never written after they are built. Immutable.
     */
    private static final class StreamKeys {
        final StreamId stream;
        final byte[] head;
        final IndexKey openRun;
        final byte[] openRunKey;
        /** The keys in the slice appended into last; null before the first append. */
        final SliceKeys slice;

        StreamKeys(StreamId stream, byte[] head, IndexKey openRun, byte[] openRunKey, SliceKeys slice) {
            this.stream = stream;
            this.head = head;
            this.openRun = openRun;
            this.openRunKey = openRunKey;
            this.slice = slice;
        }

        StreamKeys inSlice(SliceKeys keys) {
            return new StreamKeys(stream, head, openRun, openRunKey, keys);
        }
    }

    /** A stream's keys in one WAL slice: its intent and its range in the slice ({@code (WAL, slice, sid)}). */
    private static final class SliceKeys {
        final long sliceId;
        final byte[] intent;
        final byte[] range;

        SliceKeys(long sliceId, byte[] intent, byte[] range) {
            this.sliceId = sliceId;
            this.intent = intent;
            this.range = range;
        }
    }

    /**
     * One stream of a commit: its keys (kept from earlier commits, or built once for the reads and the writes), what
     * the reads found, and what the commit writes for it. Used by the one thread running the commit's body at a time.
     */
    private static final class StreamCommit {
        final StreamKeys keys;
        final CompletableFuture<byte[]> headRead;
        final CompletableFuture<byte[]> runRead;
        /** The slices the stream appends into in this commit, in the order first met (usually one). */
        InSlice slices;
        /** The stored head; null when the stream has none (unknown). */
        StreamHead stored;
        /** The head after the appends decided so far; null before the first. */
        StreamHead current;
        /** The open run's value after the appends applied so far; only once {@link #runWritten}. */
        byte[] runValue;
        boolean runWritten;

        /** Issues the stream's reads in {@code tr}: its head, and its open run, which its first append may continue. */
        StreamCommit(StreamKeys keys, Transaction tr) {
            this.keys = keys;
            this.headRead = tr.get(keys.head);
            // with a conflict range: a publication moving the open run to FALLBACK or a trim retiring it must not be
            // overwritten
            this.runRead = tr.get(keys.openRunKey);
        }

        InSlice slice(long sliceId) {
            for (InSlice in = slices; in != null; in = in.next) {
                if (in.sliceId == sliceId) {
                    return in;
                }
            }
            return null;
        }

        InSlice add(InSlice in) {
            if (slices == null) {
                slices = in;
            } else {
                InSlice last = slices;
                while (last.next != null) {
                    last = last.next;
                }
                last.next = in;
            }
            return in;
        }
    }

    /** A stream's appends into one WAL slice within a commit: its keys there, its intent's read, the range advanced. */
    private static final class InSlice {
        final long sliceId;
        final SliceKeys keys;
        final CompletableFuture<byte[]> intentRead;
        InSlice next;
        /** The first offset the stream committed into the slice, once an append into it is applied; else -1. */
        long first = -1;
        /** The end of the stream's last append applied into the slice. */
        long end;

        InSlice(SliceKeys keys, CompletableFuture<byte[]> intentRead) {
            this.sliceId = keys.sliceId;
            this.keys = keys;
            this.intentRead = intentRead;
        }
    }

    /**
     * The generation-0 record stored over each append's end offset (the first ending at or after it), read only for
     * an append whose stream's stored head already covers that end: a retried commit whose first attempt succeeded
     * ({@link AppendOutcome#decide} needs the record only then; the append may have been merged into a run that
     * ends later). Every other append gets an empty value, so a first attempt reads nothing more. Snapshot reads:
     * only a commit of the same stream writes these records, and it writes the head read before them too.
     */
    private CompletableFuture<List<Optional<IndexRecord>>> coveringRecords(Transaction tr, List<StreamAppend> batch,
            Map<StreamId, StreamCommit> streams) {
        List<CompletableFuture<Optional<IndexRecord>>> reads = null;
        for (int i = 0; i < batch.size(); i++) {
            StreamAppend a = batch.get(i);
            StreamHead head = streams.get(a.stream()).stored;
            if (head == null || head.committedEnd() < a.range().end()) {
                continue;
            }
            if (reads == null) {
                reads = new ArrayList<>(batch.size());
                for (int j = 0; j < batch.size(); j++) {
                    reads.add(NO_RECORD);
                }
            }
            reads.set(i, tr.snapshot().getRange(ks.indexCoveringRange(a.stream(), ReadView.COMMITTED,
                    a.range().end() - 1), COVERING_SCAN).asList().thenApply(kvs -> records.index(kvs).stream()
                    .filter(r -> r.generation().isAppend()).findFirst()));
        }
        if (reads == null) {
            return CompletableFuture.completedFuture(Collections.nCopies(batch.size(), Optional.empty()));
        }
        List<CompletableFuture<Optional<IndexRecord>>> all = reads;
        return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]))
                .thenApply(ignored -> all.stream().map(CompletableFuture::join).toList());
    }

    private CommitResult decideAndWrite(Transaction tr, List<StreamAppend> batch, Map<StreamId, StreamCommit> streams,
            List<Optional<IndexRecord>> covering, Map<Long, CompletableFuture<byte[]>> slices, int runSections) {
        int n = batch.size();
        Map<Long, Optional<WalSliceState>> sliceStates = new HashMap<>();
        List<AppendOutcome> outcomes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            StreamAppend a = batch.get(i);
            StreamCommit sc = streams.get(a.stream());
            StreamHead head = sc.current != null ? sc.current : sc.stored;
            if (head == null) {
                return new CommitResult.UnknownStream(a.stream());
            }
            AppendOutcome o = AppendOutcome.decide(head, covering.get(i), a);
            if (!o.permitsCommit()) {
                return new CommitResult.Rejected(a, o);
            }
            if (o instanceof AppendOutcome.Apply) {
                Optional<WalSliceState> slice = sliceStates.computeIfAbsent(a.target().sliceId(), id -> Optional
                        .ofNullable(slices.get(id).join()).map(b -> WalSliceCodec.INSTANCE.decode(b).state()));
                if (slice.isEmpty() || slice.get() != WalSliceState.OPEN) {
                    return new CommitResult.SliceNotOpen(a.target().sliceId(), slice);
                }
            }
            sc.current = o instanceof AppendOutcome.Apply apply ? apply.next() : head;
            outcomes.add(o);
        }
        List<StreamHead> result = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            StreamAppend a = batch.get(i);
            AppendOutcome o = outcomes.get(i);
            if (!(o instanceof AppendOutcome.Apply apply)) {
                result.add(((AppendOutcome.AlreadyApplied) o).head());
                continue;
            }
            StreamCommit sc = streams.get(a.stream());
            IndexRecord record = apply.record();
            byte[] run = sc.runWritten ? sc.runValue : sc.runRead.join();
            byte[] extended = run == null ? null
                    : IndexRecordCodec.INSTANCE.extendRun(sc.keys.openRun, run, record, runSections);
            if (extended == null && run != null) {
                // extendRun checked the value as decode does; closing it moves its bytes under its end
                Map.Entry<IndexKey, byte[]> closed = IndexRecordCodec.INSTANCE.closeOpenRun(sc.keys.openRun, run);
                tr.set(ks.indexKey(closed.getKey()), closed.getValue());
            }
            sc.runValue = extended != null ? extended : IndexRecordCodec.INSTANCE.encode(record.storedOpen(true));
            sc.runWritten = true;
            InSlice in = sc.slice(a.target().sliceId());
            if (in.first < 0) {
                byte[] intent = in.intentRead.join();
                if (intent == null) {
                    tr.set(in.keys.intent, WalIntentCodec.INSTANCE.encode(a.intent()));
                }
                in.first = intent == null ? a.range().start()
                        : Math.min(WalIntentCodec.INSTANCE.decode(intent).firstOffset(), a.range().start());
            }
            in.end = a.range().end();
            result.add(apply.next());
        }
        for (StreamCommit sc : streams.values()) {
            if (!sc.runWritten) {
                continue; // no append of the stream applied: nothing of it changes
            }
            tr.set(sc.keys.openRunKey, sc.runValue);
            tr.set(sc.keys.head, StreamHeadCodec.INSTANCE.encode(sc.current));
            for (InSlice in = sc.slices; in != null; in = in.next) {
                if (in.first >= 0) {
                    tr.set(in.keys.range, OffsetRangeCodec.INSTANCE.encode(
                            OffsetRange.of(in.first, in.end)));
                }
            }
        }
        return new CommitResult.Committed(result);
    }

    /** A hash map capacity that holds {@code entries} without resizing. */
    private static int capacity(int entries) {
        return (int) (entries / 0.75f) + 1;
    }

    /** The intent of {@code stream} in WAL slice {@code sliceId}, if the stream ever wrote into it. */
    public CompletableFuture<Optional<WalIntent>> intent(StreamId stream, long sliceId) {
        return guard(() -> {
            byte[] key = ks.intentKey(stream, sliceId);
            return tx.read(tr -> tr.get(key).thenApply(v -> Optional.ofNullable(v)
                    .map(WalIntentCodec.INSTANCE::decode)));
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
            return tx.read(tr -> tr.getRange(range).asList().thenApply(kvs -> {
                SortedMap<Long, WalIntent> out = new TreeMap<>();
                for (KeyValue kv : kvs) {
                    out.put(ks.unpackIntentKey(kv.getKey()).walSliceId(), WalIntentCodec.INSTANCE.decode(kv.getValue()));
                }
                return out;
            }));
        });
    }

    // ---- trim ----

    /**
     * Advances the trim offset to {@code trimOffset} (never lowers it) and moves every {@link ReadView#COMMITTED}
     * record lying wholly below it, in the lookup and FALLBACK spaces, to RETIRED so its target is listed for garbage
     * collection; {@link ReadView#TOPIC_COMPACTED} records stay, since the compacted view outlives the trimming of
     * the offsets it was made from. The head moves in the first transaction, so readers see the offsets trimmed at once; records move
     * in bounded batches. Conditional on {@code writerEpoch}, like {@link #seal}: every transaction of the series
     * reads the head and refuses when it holds another epoch, so a writer that was fenced moves nothing. A writer
     * fenced between two transactions of one trim stops there: the head it moved stays moved (it held the stream
     * then), and the records still below the trim offset are moved by the next trim of the stream.
     *
     * @return a future of the head after the trim; failing with {@link NereusException} FENCED (context stream,
     *         headEpoch, requestEpoch) when the head has another writer epoch, NOT_FOUND when the stream has no
     *         head, or {@link IllegalArgumentException} when {@code trimOffset} is beyond the committed end
     */
    public CompletableFuture<StreamHead> trim(StreamId stream, long trimOffset, long writerEpoch) {
        return guard(() -> {
            if (trimOffset < 0) {
                throw new IllegalArgumentException("trim offset must be >= 0: " + trimOffset);
            }
            AtomicReference<StreamHead> last = new AtomicReference<>();
            return tx.repeat(() -> tx.run(tr -> trimStep(tr, stream, trimOffset, writerEpoch, last)))
                    .thenApply(ignored -> last.get());
        });
    }

    private CompletableFuture<Boolean> trimStep(Transaction tr, StreamId stream, long trimOffset, long writerEpoch,
            AtomicReference<StreamHead> last) {
        return records.head(tr, stream).thenCompose(h -> {
            StreamHead head = h.orElseThrow(() -> StoredRecords.unknownStream(stream));
            requireEpoch(stream, head, writerEpoch);
            StreamHead next = head.withTrimOffset(trimOffset);
            if (!next.equals(head)) {
                tr.set(ks.headKey(stream), StreamHeadCodec.INSTANCE.encode(next));
            }
            last.set(next);
            List<CompletableFuture<List<KeyValue>>> scans = new ArrayList<>();
            List<CompletableFuture<List<KeyValue>>> fallbackScans = new ArrayList<>();
            // TOPIC_COMPACTED records stay: the compacted view survives the trimming of the offsets it was made from
            ReadView view = ReadView.COMMITTED;
            scans.add(tr.getRange(ks.indexBelowRange(stream, view, next.trimOffset()), TRIM_BATCH).asList());
            fallbackScans.add(tr.getRange(ks.fallbackBelowRange(stream, view, next.trimOffset()), TRIM_BATCH)
                    .asList());
            // the open run sorts after every end offset: a trim to its end (the committed end) retires it too
            CompletableFuture<Optional<IndexRecord>> openRun = records.openRun(tr, stream);
            List<CompletableFuture<?>> all = new ArrayList<>(scans);
            all.addAll(fallbackScans);
            all.add(openRun);
            return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
                boolean more = false;
                Optional<IndexRecord> open = openRun.join();
                if (open.isPresent() && open.get().endOffset() <= next.trimOffset()) {
                    records.moveToRetired(tr, open.get().withState(IndexRecordState.RETIRED));
                }
                for (int i = 0; i < scans.size() * 2; i++) {
                    List<KeyValue> kvs = (i < scans.size() ? scans.get(i) : fallbackScans.get(i - scans.size())).join();
                    List<IndexRecord> found = i < scans.size() ? records.index(kvs) : records.fallback(kvs);
                    for (IndexRecord r : found) {
                        records.moveToRetired(tr,
                                r.state() == IndexRecordState.RETIRED ? r : r.withState(IndexRecordState.RETIRED));
                    }
                    more |= kvs.size() == TRIM_BATCH;
                }
                return more;
            });
        });
    }
}
