package io.nereus.fdb.embedded;

import com.apple.foundationdb.KeyArrayResult;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.StreamingMode;
import io.nereus.fdb.FdbErrors;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The read side of one transaction: its read version, taken lazily at the first read, and its view of the
 * database at that version with its own writes merged over it (read-your-writes, unless option 51 turned it
 * off, or snapshot RYW is off for a snapshot read). It answers point reads, key selectors and range batches,
 * and records the read conflicts of non-snapshot reads in {@link ConflictRanges}, covering only the keys that
 * decided each answer.
 *
 * <p>Threading: guarded by the owning transaction's monitor; every method expects the caller to hold it and
 * to have checked that the transaction is still usable. Its answers are plain values: the transaction turns
 * them into futures. Lifecycle: one per transaction attempt; {@code onError} starts the next attempt with a
 * new one (and so a new read version).
 */
final class TransactionReads {
    private final EmbeddedEngine engine;
    private final TransactionSettings settings;
    private final WriteMap writes;
    private final ConflictRanges conflicts;
    private long readVersion = -1;
    private EmbeddedEngine.ReadPin pin;
    private boolean ended;

    TransactionReads(EmbeddedEngine engine, TransactionSettings settings, WriteMap writes, ConflictRanges conflicts) {
        this.engine = engine;
        this.settings = settings;
        this.writes = writes;
        this.conflicts = conflicts;
    }

    /** The read version, taken from the engine now if no read has taken it yet. */
    long readVersion() {
        if (readVersion < 0) {
            if (ended) {
                readVersion = engine.readVersion();
            } else {
                pin = engine.pinReadVersion();
                readVersion = pin.version;
            }
        }
        return readVersion;
    }

    /**
     * The attempt can neither read nor commit any more (committed, failed, cancelled, timed out, closed,
     * replaced by {@code onError}): the engine may forget the conflicts its read version needed. Idempotent.
     */
    void end() {
        ended = true;
        if (pin != null) {
            pin.release();
            pin = null;
        }
    }

    /** The read version as it stands: {@code -1} until a read takes one (the commit then uses its own version). */
    long readVersionIfTaken() {
        return readVersion;
    }

    /** {@code setReadVersion}: allowed only before the first read, and only with a positive version. */
    void setReadVersion(long version) {
        if (readVersion >= 0) {
            throw new EmbeddedFdbException(FdbErrors.CLIENT_INVALID_OPERATION,
                    "The read version must be set before the transaction's first read");
        }
        if (version <= 0) {
            throw new EmbeddedFdbException(FdbErrors.CLIENT_INVALID_OPERATION, "Read version must be positive");
        }
        readVersion = version;
        if (!ended) {
            pin = engine.pinExplicitReadVersion(version);
        }
    }

    private boolean readYourWrites(boolean snapshot) {
        return !settings.readYourWritesDisabled && (!snapshot || settings.snapshotReadYourWrites > 0);
    }

    /** {@code get}: the value of {@code key} in this transaction's view, {@code null} when absent. */
    byte[] value(byte[] key, boolean snapshot) {
        KeyRules.checkReadKey(key, settings);
        long rv = readVersion();
        WriteMap.Entry pending = null;
        if (readYourWrites(snapshot)) {
            if (writes.touchesUnreadable(key)) {
                throw new EmbeddedFdbException(FdbErrors.ACCESSED_UNREADABLE);
            }
            pending = writes.lookup(key);
        }
        if (!snapshot) {
            conflicts.addRead(KeyRange.single(key));
        }
        if (pending != null && pending.baseKnown()) {
            engine.checkReadable(rv);
            return pending.base();
        }
        byte[] committed = engine.get(key, rv);
        return pending == null ? committed : pending.valueOver(committed);
    }

    /** {@code getKey}: the key {@code selector} resolves to in this transaction's view. */
    byte[] key(KeySelector selector, boolean snapshot) {
        long rv = readVersion();
        byte[] r = resolve(selector, snapshot);
        engine.checkReadable(rv);
        return r;
    }

    /**
     * The next batch of at most {@code maxRows} rows of the range read {@code c}, advancing it; resolves its
     * selectors (and checks its limit and mode) on the first batch.
     */
    RangeRead.Batch batch(RangeRead.Cursor c, int maxRows) {
        if (!c.resolved) {
            resolveCursor(c);
        }
        int n = c.limited() ? Math.min(maxRows, c.rowsRemaining) : maxRows;
        if (Bytes.compare(c.begin, c.end) >= 0 || n <= 0) {
            return new RangeRead.Batch(List.of(), true);
        }
        Iterator<Map.Entry<byte[], byte[]>> it = view(c.begin, c.end, c.reverse, c.snapshot);
        List<KeyValue> rows = new ArrayList<>(Math.min(n, 256));
        while (rows.size() < n && it.hasNext()) {
            Map.Entry<byte[], byte[]> kv = it.next();
            rows.add(new KeyValue(kv.getKey(), kv.getValue()));
        }
        boolean exhausted = !it.hasNext();
        KeyRange decided;
        if (exhausted) {
            decided = new KeyRange(c.begin, c.end);
            c.begin = c.end;
        } else {
            byte[] last = rows.get(rows.size() - 1).getKey();
            if (c.reverse) {
                decided = new KeyRange(last, c.end);
                c.end = last;
            } else {
                decided = new KeyRange(c.begin, Bytes.keyAfter(last));
                c.begin = Bytes.keyAfter(last);
            }
        }
        if (!c.snapshot) {
            conflicts.addRead(decided);
        }
        if (c.limited()) {
            c.rowsRemaining -= rows.size();
        }
        engine.checkReadable(readVersion);
        boolean done = exhausted || (c.limited() && c.rowsRemaining <= 0) || rows.isEmpty();
        return new RangeRead.Batch(rows, done);
    }

    /** {@code getEstimatedRangeSizeBytes}: key and value bytes committed in {@code [begin, end)}. */
    long estimatedRangeSize(byte[] begin, byte[] end) {
        long rv = readVersion();
        long size = 0;
        for (Iterator<Map.Entry<byte[], byte[]>> it = engine.range(begin, end, rv, false); it.hasNext(); ) {
            Map.Entry<byte[], byte[]> kv = it.next();
            size += kv.getKey().length + kv.getValue().length;
        }
        return size;
    }

    /**
     * {@code getRangeSplitPoints}: {@code begin}, then a committed key each time about {@code chunkSize} bytes
     * have accumulated, then {@code end}.
     */
    KeyArrayResult splitPoints(byte[] begin, byte[] end, long chunkSize) {
        long rv = readVersion();
        ByteArrayOutputStream keys = new ByteArrayOutputStream();
        List<Integer> lengths = new ArrayList<>();
        keys.writeBytes(begin);
        lengths.add(begin.length);
        long accumulated = 0;
        for (Iterator<Map.Entry<byte[], byte[]>> it = engine.range(begin, end, rv, false); it.hasNext(); ) {
            Map.Entry<byte[], byte[]> kv = it.next();
            if (accumulated >= chunkSize && Bytes.compare(kv.getKey(), begin) > 0) {
                keys.writeBytes(kv.getKey());
                lengths.add(kv.getKey().length);
                accumulated = 0;
            }
            accumulated += kv.getKey().length + kv.getValue().length;
        }
        keys.writeBytes(end);
        lengths.add(end.length);
        return new KeyArrayResult(keys.toByteArray(), lengths.stream().mapToInt(Integer::intValue).toArray());
    }

    /**
     * The value a watch on {@code key} starts from: the transaction's own pending write over the committed
     * value. Adds no read conflict.
     */
    byte[] watchedValue(byte[] key) {
        WriteMap.Entry pending = writes.lookup(key);
        long rv = readVersion();
        return pending != null && pending.baseKnown() ? pending.base()
                : pending != null ? pending.valueOver(engine.get(key, rv)) : engine.get(key, rv);
    }

    /** The transaction's view of {@code [begin, end)}. */
    private Iterator<Map.Entry<byte[], byte[]>> view(byte[] begin, byte[] end, boolean reverse, boolean snapshot) {
        long rv = readVersion();
        Iterator<Map.Entry<byte[], byte[]>> committed = engine.range(begin, end, rv, reverse);
        if (!readYourWrites(snapshot)) {
            return committed;
        }
        if (writes.touchesUnreadable(begin, end)) {
            throw new EmbeddedFdbException(FdbErrors.ACCESSED_UNREADABLE);
        }
        return writes.overlay(committed, begin, end, reverse);
    }

    /**
     * Resolves {@code selector} against this transaction's view: the last key below (or at, with orEqual)
     * the reference key, moved by the offset; off the beginning is the empty key, off the end the first key
     * past the readable key space. Records the span it inspected as a read conflict unless snapshot.
     */
    private byte[] resolve(KeySelector selector, boolean snapshot) {
        byte[] ref = selector.getKey();
        byte[] maxKey = KeyRules.maxReadKey(settings);
        if (Bytes.compare(ref, maxKey) > 0) {
            throw new EmbeddedFdbException(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
        }
        int offset = selector.getOffset();
        byte[] result;
        KeyRange inspected;
        if (offset > 0) {
            byte[] from = selector.orEqual() ? Bytes.keyAfter(ref) : ref;
            byte[] found = Bytes.compare(from, maxKey) < 0 ? nth(view(from, maxKey, false, snapshot), offset) : null;
            result = found != null ? found : maxKey;
            inspected = new KeyRange(from, found != null ? Bytes.keyAfter(found) : maxKey);
        } else {
            byte[] to = Bytes.min(selector.orEqual() ? Bytes.keyAfter(ref) : ref, maxKey);
            byte[] found = nth(view(Bytes.EMPTY, to, true, snapshot), 1 - offset);
            result = found != null ? found : Bytes.EMPTY;
            inspected = new KeyRange(result, to);
        }
        if (!snapshot) {
            conflicts.addRead(inspected);
        }
        return result;
    }

    private static byte[] nth(Iterator<Map.Entry<byte[], byte[]>> it, int n) {
        for (int i = 1; it.hasNext(); i++) {
            byte[] k = it.next().getKey();
            if (i == n) {
                return k;
            }
        }
        return null;
    }

    private void resolveCursor(RangeRead.Cursor c) {
        int limit = c.rowsRemaining;
        if (limit < 0 && limit != -1) {
            throw new EmbeddedFdbException(FdbErrors.RANGE_LIMITS_INVALID);
        }
        if (c.mode == StreamingMode.EXACT && limit <= 0) {
            throw new EmbeddedFdbException(FdbErrors.EXACT_MODE_WITHOUT_LIMITS);
        }
        c.limited = limit > 0;
        byte[] maxKey = KeyRules.maxReadKey(settings);
        if (Bytes.compare(c.beginSelector.getKey(), maxKey) > 0 || Bytes.compare(c.endSelector.getKey(), maxKey) > 0) {
            throw new EmbeddedFdbException(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
        }
        c.begin = isFirstGreaterOrEqual(c.beginSelector) ? c.beginSelector.getKey() : resolve(c.beginSelector, c.snapshot);
        c.end = isFirstGreaterOrEqual(c.endSelector) ? c.endSelector.getKey() : resolve(c.endSelector, c.snapshot);
        c.resolved = true;
    }

    private static boolean isFirstGreaterOrEqual(KeySelector s) {
        return !s.orEqual() && s.getOffset() == 1;
    }
}
