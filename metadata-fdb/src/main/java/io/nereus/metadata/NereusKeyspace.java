package io.nereus.metadata;

import com.apple.foundationdb.Range;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The one definition of Nereus's FoundationDB keys. All keys are Tuple-encoded under a root subspace, the
 * DirectoryLayer directory {@code ("nereus", clusterName)} opened by the caller. The first element of
 * every key is a small stable integer tag; stream keys carry a second tag after the stream id. Tags are
 * constants here, never enum ordinals, and never change meaning.
 *
 * <pre>
 * key                                                    value (codec)
 * (CATALOG=1, managedLedgerName)                          CatalogEntryCodec
 * (STREAM=2, sid, HEAD=1)                                 StreamHeadCodec
 * (STREAM=2, sid, INDEX=2, viewCode, endOffset, gen)      IndexRecordCodec   lookup space
 * (STREAM=2, sid, INDEX=2, COMMITTED, 2^63-1, 0)          IndexRecordCodec   the stream's open run (end in the value)
 * (STREAM=2, sid, RETIRED=3, viewCode, endOffset, gen)    IndexRecordCodec   left the lookup space, kept for GC
 * (STREAM=2, sid, GENSEQ=4, viewCode)                     GenerationSeqCodec
 * (STREAM=2, sid, INTENT=5, walSliceId)                   WalIntentCodec
 * (STREAM=2, sid, CURSOR=6, cursorName, chunk)            CursorStateCodec   chunk 0 = header, 1..N = data
 * (STREAM=2, sid, PROPS=7)                                LedgerPropertiesCodec
 * (STREAM=2, sid, FALLBACK=8, viewCode, endOffset, gen)   IndexRecordCodec   superseded, still serving as fallback
 * (STREAM=2, sid, PRODUCER=9, producerId)                 ProducerStateCodec idempotent producer (Kafka adapter)
 * (STREAM=2, sid, PRODUCER_END=10)                        ProducerStateEndCodec  the producer entries reflect batches below it
 * (WAL=3, sliceId)                                        WalSliceCodec
 * (WAL=3, sliceId, sid)                                   OffsetRangeCodec   range of sid in the slice
 * (COUNTER=4, name)                                       CounterCodec
 * (META=5, "format")                                      FormatVersion
 * (WAL_LEASE=6, incarnation)                              WalWriterLeaseCodec  a live WAL writer's lease
 * (WAL_STATE=7, stateCode, sliceId)                       WalSliceCodec      slices by state (a copy of the slice)
 * (PURGE=8, sid)                                          (empty)            a deleted stream still to purge
 * </pre>
 *
 * <p>Index keys sort by view, end offset, generation. The records that may cover offset {@code o} in view
 * {@code v} are those with {@code endOffset > o}, read by {@link #indexCoveringRange} starting at
 * {@code (…, INDEX, v, o + 1)}; because superseded records move to RETIRED (or, generation-0 records, to the
 * FALLBACK space, read by a second short scan {@link #fallbackCoveringRange}) in the transaction that supersedes
 * them, the first few keys of that scan are the answer. A stream's open run ({@link IndexKey#openRun}), its last
 * generation-0 record, sorts after every end offset and still ends after every other record of the view, so the scan
 * meets it last, in order; a scan of end offsets in a bounded range ({@link #indexEndOffsetRange}) does not meet it,
 * and the stores that need it read it by its key. Unpack methods refuse keys of another
 * kind with a {@link NereusException} of code {@link ErrorCode#METADATA_FORMAT}, whose context names the key
 * kind ({@code key}) and the failed check ({@code reason}). Immutable and thread-safe.
 */
public final class NereusKeyspace {
    public static final int CATALOG = 1;
    public static final int STREAM = 2;
    public static final int WAL = 3;
    public static final int COUNTER = 4;
    public static final int META = 5;
    public static final int WAL_LEASE = 6;
    public static final int WAL_STATE = 7;
    public static final int PURGE = 8;

    public static final int HEAD = 1;
    public static final int INDEX = 2;
    public static final int RETIRED = 3;
    public static final int GENSEQ = 4;
    public static final int INTENT = 5;
    public static final int CURSOR = 6;
    public static final int PROPS = 7;
    public static final int FALLBACK = 8;
    public static final int PRODUCER = 9;
    public static final int PRODUCER_END = 10;

    /** The META key holding the layout version. */
    public static final String FORMAT = "format";
    /** Counter allocating stream ids. */
    public static final String STREAM_ID_COUNTER = "streamId";
    /** Counter allocating virtual ledger ids. */
    public static final String VIRTUAL_LEDGER_ID_COUNTER = "virtualLedgerId";
    /** Counter allocating WAL writer incarnations (one per lease a writer takes). */
    public static final String WAL_INCARNATION_COUNTER = "walIncarnation";

    /** The chunk index of a cursor's header. */
    public static final int CURSOR_HEADER_CHUNK = 0;

    private final Subspace root;
    /** {@code root}'s packed prefix; never handed out. */
    private final byte[] prefix;

    public NereusKeyspace(Subspace root) {
        this.root = Objects.requireNonNull(root, "root");
        this.prefix = root.getKey();
    }

    public Subspace root() {
        return root;
    }

    // ---- catalog ----

    public byte[] catalogKey(String managedLedgerName) {
        requireNonEmpty(managedLedgerName, "managed-ledger name");
        return FdbLimits.checkKey("catalog", root.pack(Tuple.from(CATALOG, managedLedgerName)));
    }

    public String unpackCatalogKey(byte[] key) {
        Tuple t = unpack(key, "catalog", 2);
        expectTag(t, 0, CATALOG, "catalog", key);
        return string(t, 1, "catalog", key);
    }

    /** Every catalog entry. */
    public Range catalogRange() {
        return root.range(Tuple.from(CATALOG));
    }

    // ---- streams ----

    /** Every key of one stream (head, index, retired, genseq, intents, cursors, properties). */
    public Range streamRange(StreamId stream) {
        return root.range(Tuple.from(STREAM, stream.value()));
    }

    public byte[] headKey(StreamId stream) {
        return packIntegers(STREAM, stream.value(), HEAD);
    }

    public StreamId unpackHeadKey(byte[] key) {
        Tuple t = streamKey(key, HEAD, 3, "head");
        return streamId(t, key, "head");
    }

    public byte[] indexKey(IndexKey k) {
        return indexLikeKey(INDEX, k);
    }

    public IndexKey unpackIndexKey(byte[] key) {
        return unpackIndexLike(key, INDEX, "index");
    }

    /** Every index record of {@code stream} in {@code view}. */
    public Range indexViewRange(StreamId stream, ReadView view) {
        return root.range(Tuple.from(STREAM, stream.value(), INDEX, view.code()));
    }

    /**
     * The index keys of {@code stream} in {@code view} whose end offset is above {@code offset}: the records
     * covering {@code offset} are at the start of this range (read it with a small limit and stop at the
     * first record starting after {@code offset}).
     */
    public Range indexCoveringRange(StreamId stream, ReadView view, long offset) {
        if (offset < 0 || offset == Long.MAX_VALUE) {
            throw new IllegalArgumentException("lookup offset out of range: " + offset);
        }
        Tuple viewPrefix = Tuple.from(STREAM, stream.value(), INDEX, view.code());
        return new Range(root.pack(viewPrefix.add(offset + 1)), root.range(viewPrefix).end);
    }

    /** The index keys of {@code stream} in {@code view} whose end offset lies in {@code endOffsets}. */
    public Range indexEndOffsetRange(StreamId stream, ReadView view, OffsetRange endOffsets) {
        Tuple viewPrefix = Tuple.from(STREAM, stream.value(), INDEX, view.code());
        return new Range(root.pack(viewPrefix.add(endOffsets.start())), root.pack(viewPrefix.add(endOffsets.end())));
    }

    /** The index keys of records wholly below {@code trimOffset} (end offset {@code <= trimOffset}). */
    public Range indexBelowRange(StreamId stream, ReadView view, long trimOffset) {
        return indexEndOffsetRange(stream, view, new OffsetRange(0, Math.addExact(trimOffset, 1)));
    }

    public byte[] retiredKey(IndexKey k) {
        return indexLikeKey(RETIRED, k);
    }

    public IndexKey unpackRetiredKey(byte[] key) {
        return unpackIndexLike(key, RETIRED, "retired");
    }

    /** The RETIRED keys of {@code stream} in {@code view} whose end offset lies in {@code endOffsets}. */
    public Range retiredEndOffsetRange(StreamId stream, ReadView view, OffsetRange endOffsets) {
        Tuple viewPrefix = Tuple.from(STREAM, stream.value(), RETIRED, view.code());
        return new Range(root.pack(viewPrefix.add(endOffsets.start())), root.pack(viewPrefix.add(endOffsets.end())));
    }

    /** Every retired record of {@code stream}, all views. */
    public Range retiredRange(StreamId stream) {
        return root.range(Tuple.from(STREAM, stream.value(), RETIRED));
    }

    public byte[] fallbackKey(IndexKey k) {
        return indexLikeKey(FALLBACK, k);
    }

    public IndexKey unpackFallbackKey(byte[] key) {
        return unpackIndexLike(key, FALLBACK, "fallback");
    }

    /** The FALLBACK keys of {@code stream} in {@code view} whose end offset is above {@code offset}. */
    public Range fallbackCoveringRange(StreamId stream, ReadView view, long offset) {
        if (offset < 0 || offset == Long.MAX_VALUE) {
            throw new IllegalArgumentException("lookup offset out of range: " + offset);
        }
        Tuple viewPrefix = Tuple.from(STREAM, stream.value(), FALLBACK, view.code());
        return new Range(root.pack(viewPrefix.add(offset + 1)), root.range(viewPrefix).end);
    }

    /** The FALLBACK keys of {@code stream} in {@code view} whose end offset lies in {@code endOffsets}. */
    public Range fallbackEndOffsetRange(StreamId stream, ReadView view, OffsetRange endOffsets) {
        Tuple viewPrefix = Tuple.from(STREAM, stream.value(), FALLBACK, view.code());
        return new Range(root.pack(viewPrefix.add(endOffsets.start())), root.pack(viewPrefix.add(endOffsets.end())));
    }

    /** Every FALLBACK record of {@code stream} in {@code view}. */
    public Range fallbackViewRange(StreamId stream, ReadView view) {
        return root.range(Tuple.from(STREAM, stream.value(), FALLBACK, view.code()));
    }

    /** The FALLBACK keys of records wholly below {@code trimOffset} (end offset {@code <= trimOffset}). */
    public Range fallbackBelowRange(StreamId stream, ReadView view, long trimOffset) {
        Tuple viewPrefix = Tuple.from(STREAM, stream.value(), FALLBACK, view.code());
        return new Range(root.pack(viewPrefix.add(0)), root.pack(viewPrefix.add(Math.addExact(trimOffset, 1))));
    }

    public byte[] genSeqKey(StreamId stream, ReadView view) {
        return packIntegers(STREAM, stream.value(), GENSEQ, view.code());
    }

    public GenSeqKey unpackGenSeqKey(byte[] key) {
        Tuple t = streamKey(key, GENSEQ, 4, "genseq");
        return new GenSeqKey(streamId(t, key, "genseq"), view(t, 3, key, "genseq"));
    }

    public byte[] intentKey(StreamId stream, long walSliceId) {
        return packIntegers(STREAM, stream.value(), INTENT, walSliceId);
    }

    public IntentKey unpackIntentKey(byte[] key) {
        Tuple t = streamKey(key, INTENT, 4, "intent");
        StreamId sid = streamId(t, key, "intent");
        long slice = nonNegative(t, 3, key, "intent", "slice id");
        return new IntentKey(sid, slice);
    }

    /** Every intent of {@code stream}, by slice id. */
    public Range intentRange(StreamId stream) {
        return root.range(Tuple.from(STREAM, stream.value(), INTENT));
    }

    public byte[] cursorChunkKey(StreamId stream, String cursorName, int chunk) {
        requireNonEmpty(cursorName, "cursor name");
        if (chunk < 0) {
            throw new IllegalArgumentException("cursor chunk index must be >= 0: " + chunk);
        }
        return FdbLimits.checkKey("cursor", root.pack(Tuple.from(STREAM, stream.value(), CURSOR, cursorName, chunk)));
    }

    public CursorChunkKey unpackCursorChunkKey(byte[] key) {
        Tuple t = streamKey(key, CURSOR, 5, "cursor");
        StreamId sid = streamId(t, key, "cursor");
        String name = string(t, 3, "cursor", key);
        long chunk = nonNegative(t, 4, key, "cursor", "chunk");
        if (chunk > Integer.MAX_VALUE) {
            throw formatError("cursor", "chunk index too large", "chunk", chunk);
        }
        return new CursorChunkKey(sid, name, (int) chunk);
    }

    /** The header and every chunk of one cursor, in chunk order. */
    public Range cursorRange(StreamId stream, String cursorName) {
        requireNonEmpty(cursorName, "cursor name");
        return root.range(Tuple.from(STREAM, stream.value(), CURSOR, cursorName));
    }

    /** Every chunk of every cursor of {@code stream}, grouped by cursor name. */
    public Range cursorsRange(StreamId stream) {
        return root.range(Tuple.from(STREAM, stream.value(), CURSOR));
    }

    public byte[] propsKey(StreamId stream) {
        return packIntegers(STREAM, stream.value(), PROPS);
    }

    public StreamId unpackPropsKey(byte[] key) {
        Tuple t = streamKey(key, PROPS, 3, "props");
        return streamId(t, key, "props");
    }

    /** The state of idempotent producer {@code producerId} of {@code stream} (the Kafka adapter's). */
    public byte[] producerKey(StreamId stream, long producerId) {
        requireNonNegative(producerId, "producer id");
        return packIntegers(STREAM, stream.value(), PRODUCER, producerId);
    }

    public ProducerKey unpackProducerKey(byte[] key) {
        Tuple t = streamKey(key, PRODUCER, 4, "producer");
        return new ProducerKey(streamId(t, key, "producer"), nonNegative(t, 3, key, "producer", "producer id"));
    }

    /** Every producer state of {@code stream}, by producer id. */
    public Range producerRange(StreamId stream) {
        return root.range(Tuple.from(STREAM, stream.value(), PRODUCER));
    }

    /** The end offset of {@code stream}'s stored producer state. */
    public byte[] producerEndKey(StreamId stream) {
        return packIntegers(STREAM, stream.value(), PRODUCER_END);
    }

    public StreamId unpackProducerEndKey(byte[] key) {
        Tuple t = streamKey(key, PRODUCER_END, 3, "producer end");
        return streamId(t, key, "producer end");
    }

    // ---- WAL ----

    public byte[] walSliceKey(long sliceId) {
        requireNonNegative(sliceId, "WAL slice id");
        return packIntegers(WAL, sliceId);
    }

    public long unpackWalSliceKey(byte[] key) {
        Tuple t = unpack(key, "WAL slice", 2);
        expectTag(t, 0, WAL, "WAL slice", key);
        return nonNegative(t, 1, key, "WAL slice", "slice id");
    }

    public byte[] walStreamKey(long sliceId, StreamId stream) {
        requireNonNegative(sliceId, "WAL slice id");
        return packIntegers(WAL, sliceId, stream.value());
    }

    public WalStreamKey unpackWalStreamKey(byte[] key) {
        Tuple t = unpack(key, "WAL stream", 3);
        expectTag(t, 0, WAL, "WAL stream", key);
        long slice = nonNegative(t, 1, key, "WAL stream", "slice id");
        return new WalStreamKey(slice, new StreamId(positive(t, 2, key, "WAL stream", "stream id")));
    }

    /** The per-stream range keys of one slice (not the slice key itself). */
    public Range walSliceStreamsRange(long sliceId) {
        requireNonNegative(sliceId, "WAL slice id");
        return root.range(Tuple.from(WAL, sliceId));
    }

    /** Every WAL slice and per-stream range key. */
    public Range walRange() {
        return root.range(Tuple.from(WAL));
    }

    /** The lease of WAL writer incarnation {@code incarnation}. */
    public byte[] walLeaseKey(long incarnation) {
        requirePositive(incarnation, "WAL writer incarnation");
        return root.pack(Tuple.from(WAL_LEASE, incarnation));
    }

    public long unpackWalLeaseKey(byte[] key) {
        Tuple t = unpack(key, "WAL lease", 2);
        expectTag(t, 0, WAL_LEASE, "WAL lease", key);
        return positive(t, 1, key, "WAL lease", "incarnation");
    }

    /** Every WAL writer lease, by incarnation. */
    public Range walLeaseRange() {
        return root.range(Tuple.from(WAL_LEASE));
    }

    /** The entry of slice {@code sliceId} in the by-state listing of {@code state}. */
    public byte[] walStateKey(WalSliceState state, long sliceId) {
        requireNonNegative(sliceId, "WAL slice id");
        return root.pack(Tuple.from(WAL_STATE, state.code(), sliceId));
    }

    public WalStateKey unpackWalStateKey(byte[] key) {
        Tuple t = unpack(key, "WAL state", 3);
        expectTag(t, 0, WAL_STATE, "WAL state", key);
        long code = integer(t, 1, key, "WAL state", "state");
        WalSliceState state;
        try {
            state = WalSliceState.fromCode(Math.toIntExact(code));
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw formatError(e, "WAL state", "unknown WAL slice state code", "code", code, "tuple", t);
        }
        return new WalStateKey(state, nonNegative(t, 2, key, "WAL state", "slice id"));
    }

    /** The by-state listing of {@code state}, by slice id. */
    public Range walStateRange(WalSliceState state) {
        return root.range(Tuple.from(WAL_STATE, state.code()));
    }

    /** The by-state listing of {@code state} from slice {@code fromSliceId} on. */
    public Range walStateRange(WalSliceState state, long fromSliceId) {
        requireNonNegative(fromSliceId, "WAL slice id");
        Tuple prefix = Tuple.from(WAL_STATE, state.code());
        return new Range(root.pack(prefix.add(fromSliceId)), root.range(prefix).end);
    }

    // ---- purges ----

    /** The mark of deleted stream {@code stream} whose keys and objects the garbage collector still has to purge. */
    public byte[] purgeKey(StreamId stream) {
        return root.pack(Tuple.from(PURGE, stream.value()));
    }

    public StreamId unpackPurgeKey(byte[] key) {
        Tuple t = unpack(key, "purge", 2);
        expectTag(t, 0, PURGE, "purge", key);
        return new StreamId(positive(t, 1, key, "purge", "stream id"));
    }

    /** Every purge mark, by stream id. */
    public Range purgeRange() {
        return root.range(Tuple.from(PURGE));
    }

    // ---- counters and meta ----

    public byte[] counterKey(String name) {
        requireNonEmpty(name, "counter name");
        return FdbLimits.checkKey("counter", root.pack(Tuple.from(COUNTER, name)));
    }

    public String unpackCounterKey(byte[] key) {
        Tuple t = unpack(key, "counter", 2);
        expectTag(t, 0, COUNTER, "counter", key);
        return string(t, 1, "counter", key);
    }

    public byte[] formatKey() {
        return root.pack(Tuple.from(META, FORMAT));
    }

    // ---- key records ----

    /** Key fields of {@code (STREAM, sid, GENSEQ, view)}. */
    public record GenSeqKey(StreamId stream, ReadView view) {
        public GenSeqKey {
            Objects.requireNonNull(stream, "stream");
            Objects.requireNonNull(view, "view");
        }
    }

    /** Key fields of {@code (STREAM, sid, INTENT, walSliceId)}. */
    public record IntentKey(StreamId stream, long walSliceId) {
        public IntentKey {
            Objects.requireNonNull(stream, "stream");
            requireNonNegative(walSliceId, "WAL slice id");
        }
    }

    /** Key fields of {@code (STREAM, sid, CURSOR, name, chunk)}; chunk 0 is the header. */
    public record CursorChunkKey(StreamId stream, String cursorName, int chunk) {
        public CursorChunkKey {
            Objects.requireNonNull(stream, "stream");
            requireNonEmpty(cursorName, "cursor name");
            if (chunk < 0) {
                throw new IllegalArgumentException("cursor chunk index must be >= 0: " + chunk);
            }
        }

        public boolean isHeader() {
            return chunk == CURSOR_HEADER_CHUNK;
        }
    }

    /** Key fields of {@code (STREAM, sid, PRODUCER, producerId)}. */
    public record ProducerKey(StreamId stream, long producerId) {
        public ProducerKey {
            Objects.requireNonNull(stream, "stream");
            requireNonNegative(producerId, "producer id");
        }
    }

    /** Key fields of {@code (WAL_STATE, stateCode, sliceId)}. */
    public record WalStateKey(WalSliceState state, long walSliceId) {
        public WalStateKey {
            Objects.requireNonNull(state, "state");
            requireNonNegative(walSliceId, "WAL slice id");
        }
    }

    /** Key fields of {@code (WAL, sliceId, sid)}. */
    public record WalStreamKey(long walSliceId, StreamId stream) {
        public WalStreamKey {
            requireNonNegative(walSliceId, "WAL slice id");
            Objects.requireNonNull(stream, "stream");
        }
    }

    // ---- helpers ----

    private byte[] indexLikeKey(int tag, IndexKey k) {
        return packIntegers(STREAM, k.stream().value(), tag, k.view().code(), k.endOffset(), k.generation().value());
    }

    /**
     * {@code root.pack(Tuple.from(values))} for non-negative integers, without building a tuple: the root's prefix,
     * then each value in the tuple layer's integer encoding (0 as the single byte 0x14; a positive value as 0x14 + n
     * and its n significant bytes, big-endian). The keys of every commit are made here, several per stream append,
     * and the general tuple code (a list, a versionstamp scan, a size pass) cost more than the rest of building them.
     * A negative value falls back to the tuple layer.
     */
    private byte[] packIntegers(long... values) {
        int size = prefix.length;
        for (long v : values) {
            if (v < 0) {
                return root.pack(Tuple.fromItems(java.util.Arrays.stream(values).boxed().toList()));
            }
            size += 1 + significantBytes(v);
        }
        byte[] key = java.util.Arrays.copyOf(prefix, size);
        int at = prefix.length;
        for (long v : values) {
            int n = significantBytes(v);
            key[at++] = (byte) (0x14 + n);
            for (int shift = 8 * (n - 1); shift >= 0; shift -= 8) {
                key[at++] = (byte) (v >>> shift);
            }
        }
        return key;
    }

    private static int significantBytes(long v) {
        return (64 - Long.numberOfLeadingZeros(v) + 7) / 8;
    }

    private IndexKey unpackIndexLike(byte[] key, int tag, String kind) {
        Tuple t = streamKey(key, tag, 6, kind);
        StreamId sid = streamId(t, key, kind);
        ReadView view = view(t, 3, key, kind);
        long end = positive(t, 4, key, kind, "end offset");
        long gen = nonNegative(t, 5, key, kind, "generation");
        return new IndexKey(sid, view, end, GenerationId.of(gen));
    }

    private Tuple unpack(byte[] key, String kind, int size) {
        if (!root.contains(key)) {
            throw formatError(kind, "outside the Nereus root", "bytes", printable(key));
        }
        Tuple t;
        try {
            t = root.unpack(key);
        } catch (IllegalArgumentException e) {
            throw formatError(e, kind, "not a valid tuple", "bytes", printable(key));
        }
        if (t.size() != size) {
            throw formatError(kind, "wrong number of elements", "expected", size, "found", t.size(), "tuple", t);
        }
        return t;
    }

    private Tuple streamKey(byte[] key, int tag, int size, String kind) {
        Tuple t = unpack(key, kind, size);
        expectTag(t, 0, STREAM, kind, key);
        expectTag(t, 2, tag, kind, key);
        return t;
    }

    private static void expectTag(Tuple t, int index, int tag, String kind, byte[] key) {
        Object o = t.get(index);
        if (!(o instanceof Long l) || l != tag) {
            throw formatError(kind, "element is not the kind's tag", "element", index, "expected", tag, "found", o,
                    "tuple", t);
        }
    }

    private static long integer(Tuple t, int index, byte[] key, String kind, String field) {
        Object o = t.get(index);
        if (!(o instanceof Long l)) {
            throw formatError(kind, "not an integer", "field", field, "tuple", t);
        }
        return l;
    }

    private static long nonNegative(Tuple t, int index, byte[] key, String kind, String field) {
        long v = integer(t, index, key, kind, field);
        if (v < 0) {
            throw formatError(kind, "negative", "field", field, "tuple", t);
        }
        return v;
    }

    private static long positive(Tuple t, int index, byte[] key, String kind, String field) {
        long v = integer(t, index, key, kind, field);
        if (v <= 0) {
            throw formatError(kind, "not positive", "field", field, "tuple", t);
        }
        return v;
    }

    private static StreamId streamId(Tuple t, byte[] key, String kind) {
        return new StreamId(positive(t, 1, key, kind, "stream id"));
    }

    private static ReadView view(Tuple t, int index, byte[] key, String kind) {
        long code = integer(t, index, key, kind, "view");
        try {
            return ReadView.fromCode(code);
        } catch (IllegalArgumentException e) {
            throw formatError(e, kind, "unknown read view code", "code", code, "tuple", t);
        }
    }

    private static String string(Tuple t, int index, String kind, byte[] key) {
        Object o = t.get(index);
        if (!(o instanceof String s) || s.isEmpty()) {
            throw formatError(kind, "not a non-empty string", "element", index, "tuple", t);
        }
        return s;
    }

    private static void requireNonEmpty(String s, String what) {
        Objects.requireNonNull(s, what);
        if (s.isEmpty()) {
            throw new IllegalArgumentException(what + " must not be empty");
        }
    }

    private static void requirePositive(long v, String what) {
        if (v <= 0) {
            throw new IllegalArgumentException(what + " must be > 0: " + v);
        }
    }

    private static void requireNonNegative(long v, String what) {
        if (v < 0) {
            throw new IllegalArgumentException(what + " must be >= 0: " + v);
        }
    }

    private static NereusException formatError(String kind, String reason, Object... more) {
        return formatError(null, kind, reason, more);
    }

    /** The METADATA_FORMAT failure of unpacking a key of {@code kind}: context key, reason, then {@code more}. */
    private static NereusException formatError(Throwable cause, String kind, String reason, Object... more) {
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("key", kind);
        context.put("reason", reason);
        context.putAll(ErrorContext.of(more));
        return new NereusException(ErrorCode.METADATA_FORMAT, context, cause);
    }

    private static String printable(byte[] key) {
        return ByteArrayUtil.printable(key);
    }
}
