package io.nereus.fdb.embedded;

import com.apple.foundationdb.MutationType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * A transaction's uncommitted writes, kept in a form that answers reads (read-your-writes) and yields the
 * commit's effects.
 *
 * <p>Range clears are held as disjoint ranges; every later write to a single key is a point {@link Entry}
 * that overrides them. A point entry either knows its value outright (set, clear, or an atomic operation
 * folded onto a known value) or holds atomic operations to evaluate on the committed value (at commit, on
 * the newest value; for reads, on the snapshot value). The effects therefore apply as: range clears, then
 * point entries, then versionstamped keys.
 *
 * <p>Threading: guarded by the owning transaction's monitor.
 */
final class WriteMap {
    record AtomicOp(MutationType type, byte[] param) {
    }

    /** One key's pending write. */
    record Entry(boolean baseKnown, byte[] base, List<AtomicOp> ops, int versionstampOffset) {
        static Entry known(byte[] value) {
            return new Entry(true, value, List.of(), -1);
        }

        boolean unreadable() {
            return versionstampOffset >= 0;
        }

        byte[] valueOver(byte[] committed) {
            if (baseKnown) {
                return base;
            }
            byte[] v = committed;
            for (AtomicOp op : ops) {
                v = Atomics.apply(op.type, v, op.param);
            }
            return v;
        }
    }

    /** A key whose final bytes include the commit's versionstamp at {@code offset}. */
    record VersionstampedKey(byte[] template, int offset, byte[] value) {
    }

    private final TreeMap<byte[], Entry> points = new TreeMap<>(Bytes.ORDER);
    private final TreeMap<byte[], byte[]> clears = new TreeMap<>(Bytes.ORDER);
    private final List<VersionstampedKey> stampedKeys = new ArrayList<>();
    private final List<KeyRange> unreadable = new ArrayList<>();
    /** Whether a versionstamped value was ever written (until then no point entry can be unreadable). */
    private boolean stampedValues;

    boolean isEmpty() {
        return points.isEmpty() && clears.isEmpty() && stampedKeys.isEmpty();
    }

    void set(byte[] key, byte[] value) {
        points.put(key, Entry.known(value));
    }

    void setVersionstampedValue(byte[] key, byte[] template, int offset) {
        points.put(key, new Entry(true, template, List.of(), offset));
        stampedValues = true;
    }

    void setVersionstampedKey(byte[] template, int offset, byte[] value, KeyRange possibleKeys) {
        stampedKeys.add(new VersionstampedKey(template, offset, value));
        unreadable.add(possibleKeys);
    }

    void clear(byte[] key) {
        points.put(key, Entry.known(null));
    }

    void clearRange(byte[] begin, byte[] end) {
        if (Bytes.compare(begin, end) >= 0) {
            return;
        }
        points.subMap(begin, end).clear();
        byte[] b = begin;
        byte[] e = end;
        Map.Entry<byte[], byte[]> before = clears.floorEntry(b);
        if (before != null && Bytes.compare(before.getValue(), b) >= 0) {
            b = before.getKey();
            e = Bytes.max(e, before.getValue());
        }
        NavigableMap<byte[], byte[]> overlapping = clears.subMap(b, true, e, true);
        for (byte[] end2 : overlapping.values()) {
            e = Bytes.max(e, end2);
        }
        overlapping.clear();
        clears.put(b, e);
    }

    void mutate(MutationType type, byte[] key, byte[] param) {
        Entry e = points.get(key);
        if (e == null && inClearedRange(key)) {
            e = Entry.known(null);
        }
        if (e == null) {
            points.put(key, new Entry(false, null, List.of(new AtomicOp(type, param)), -1));
        } else if (e.baseKnown && !e.unreadable()) {
            points.put(key, Entry.known(Atomics.apply(type, e.base, param)));
        } else if (e.unreadable()) {
            // An atomic operation on a versionstamped value: the result depends on the stamp, so it stays
            // unreadable; apply it at commit on the stamped value.
            List<AtomicOp> ops = new ArrayList<>(e.ops);
            ops.add(new AtomicOp(type, param));
            points.put(key, new Entry(true, e.base, List.copyOf(ops), e.versionstampOffset));
        } else {
            List<AtomicOp> ops = new ArrayList<>(e.ops);
            ops.add(new AtomicOp(type, param));
            points.put(key, new Entry(false, null, List.copyOf(ops), -1));
        }
    }

    boolean inClearedRange(byte[] key) {
        Map.Entry<byte[], byte[]> c = clears.floorEntry(key);
        return c != null && Bytes.compare(key, c.getValue()) < 0;
    }

    /** The pending write to {@code key}, counting range clears; {@code null} when the key is untouched. */
    Entry lookup(byte[] key) {
        Entry e = points.get(key);
        if (e != null) {
            return e;
        }
        return inClearedRange(key) ? Entry.known(null) : null;
    }

    /** Whether {@code key} was set or cleared (not merely mutated atomically) by this transaction. */
    boolean writtenOutright(byte[] key) {
        Entry e = points.get(key);
        if (e != null) {
            return e.baseKnown;
        }
        return inClearedRange(key);
    }

    /**
     * Whether a read of {@code key} alone would touch a key this transaction cannot read yet (1036); builds the
     * one-key range only when the transaction holds something unreadable (point reads are most reads).
     */
    boolean touchesUnreadable(byte[] key) {
        return holdsUnreadable() && touchesUnreadable(key, Bytes.keyAfter(key));
    }

    /** Whether any key may be unreadable: a versionstamped key's range, or a versionstamped value, was written. */
    private boolean holdsUnreadable() {
        return !unreadable.isEmpty() || stampedValues;
    }

    /** Whether a read of {@code range} would touch a key this transaction cannot read yet (1036). */
    boolean touchesUnreadable(byte[] begin, byte[] end) {
        if (!holdsUnreadable()) {
            return false;
        }
        for (KeyRange u : unreadable) {
            if (Bytes.compare(u.begin(), end) < 0 && Bytes.compare(begin, u.end()) < 0) {
                return true;
            }
        }
        for (Entry e : points.subMap(begin, end).values()) {
            if (e.unreadable()) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code range} minus the keys this transaction set or cleared outright: reading those cannot conflict,
     * since the transaction decides their values itself.
     */
    List<KeyRange> subtractWritten(KeyRange range) {
        if (range.isEmpty()) {
            return List.of();
        }
        if (points.isEmpty() && clears.isEmpty()) {
            return List.of(range);
        }
        List<KeyRange> out = new ArrayList<>();
        byte[] cursor = range.begin();
        Map.Entry<byte[], byte[]> c = clears.floorEntry(cursor);
        if (c != null && Bytes.compare(c.getValue(), cursor) > 0) {
            cursor = c.getValue();
            if (Bytes.compare(cursor, range.end()) >= 0) {
                return List.of();
            }
        }
        Iterator<Map.Entry<byte[], byte[]>> clearIt = clears.subMap(cursor, true, range.end(), false)
                .entrySet().iterator();
        Iterator<Map.Entry<byte[], Entry>> pointIt = points.subMap(cursor, true, range.end(), false)
                .entrySet().iterator();
        Map.Entry<byte[], byte[]> nextClear = clearIt.hasNext() ? clearIt.next() : null;
        Map.Entry<byte[], Entry> nextPoint = advanceKnown(pointIt);
        while (Bytes.compare(cursor, range.end()) < 0) {
            while (nextPoint != null && Bytes.compare(nextPoint.getKey(), cursor) < 0) {
                nextPoint = advanceKnown(pointIt);
            }
            byte[] holeBegin;
            byte[] holeEnd;
            if (nextClear != null && (nextPoint == null || Bytes.compare(nextClear.getKey(), nextPoint.getKey()) <= 0)) {
                holeBegin = nextClear.getKey();
                holeEnd = nextClear.getValue();
                nextClear = clearIt.hasNext() ? clearIt.next() : null;
            } else if (nextPoint != null) {
                holeBegin = nextPoint.getKey();
                holeEnd = Bytes.keyAfter(holeBegin);
                nextPoint = advanceKnown(pointIt);
            } else {
                break;
            }
            if (Bytes.compare(cursor, holeBegin) < 0) {
                out.add(new KeyRange(cursor, Bytes.min(holeBegin, range.end())));
            }
            cursor = Bytes.max(cursor, holeEnd);
        }
        if (Bytes.compare(cursor, range.end()) < 0) {
            out.add(new KeyRange(cursor, range.end()));
        }
        return out;
    }

    private static Map.Entry<byte[], Entry> advanceKnown(Iterator<Map.Entry<byte[], Entry>> it) {
        while (it.hasNext()) {
            Map.Entry<byte[], Entry> e = it.next();
            if (e.getValue().baseKnown) {
                return e;
            }
        }
        return null;
    }

    /**
     * The transaction's view of {@code [begin, end)}: {@code committed} (the snapshot, in the same order)
     * merged with these writes. {@code committedValue} gives the snapshot value of a key the snapshot
     * iterator did not yield, for atomic operations on keys absent from it.
     */
    Iterator<Map.Entry<byte[], byte[]>> overlay(Iterator<Map.Entry<byte[], byte[]>> committed, byte[] begin,
                                              byte[] end, boolean reverse) {
        NavigableMap<byte[], Entry> sub = points.subMap(begin, true, end, false);
        List<Map.Entry<byte[], Entry>> pending = new ArrayList<>((reverse ? sub.descendingMap() : sub).entrySet());
        if (pending.isEmpty() && clears.isEmpty()) {
            return committed;
        }
        return new LookaheadIterator<>() {
            private int pi;
            private Map.Entry<byte[], byte[]> c = nextCommitted();

            private Map.Entry<byte[], byte[]> nextCommitted() {
                while (committed.hasNext()) {
                    Map.Entry<byte[], byte[]> e = committed.next();
                    if (!inClearedRange(e.getKey()) || points.containsKey(e.getKey())) {
                        return e;
                    }
                }
                return null;
            }

            private int order(byte[] a, byte[] b) {
                int r = Bytes.compare(a, b);
                return reverse ? -r : r;
            }

            @Override
            protected Map.Entry<byte[], byte[]> advance() {
                while (true) {
                    Map.Entry<byte[], Entry> p = pi < pending.size() ? pending.get(pi) : null;
                    if (p == null && c == null) {
                        return null;
                    }
                    if (p == null || (c != null && order(c.getKey(), p.getKey()) < 0)) {
                        Map.Entry<byte[], byte[]> r = c;
                        c = nextCommitted();
                        return r;
                    }
                    pi++;
                    byte[] base = null;
                    if (c != null && order(c.getKey(), p.getKey()) == 0) {
                        base = c.getValue();
                        c = nextCommitted();
                    }
                    byte[] v = p.getValue().valueOver(base);
                    if (v != null) {
                        return Map.entry(p.getKey(), v);
                    }
                }
            }
        };
    }

    /**
     * The commit's effects, resolved against the newest committed values by {@code latest}, with the
     * commit's 10-byte {@code versionstamp} placed where requested. Applied in list order.
     */
    List<Effect> effects(Function<byte[], byte[]> latest, byte[] versionstamp) {
        List<Effect> out = new ArrayList<>(clears.size() + points.size() + stampedKeys.size());
        for (Map.Entry<byte[], byte[]> c : clears.entrySet()) {
            out.add(Effect.clearRange(c.getKey(), c.getValue()));
        }
        for (Map.Entry<byte[], Entry> p : points.entrySet()) {
            Entry e = p.getValue();
            byte[] v;
            if (e.unreadable()) {
                v = placeStamp(e.base, e.versionstampOffset, versionstamp);
                for (AtomicOp op : e.ops) {
                    v = Atomics.apply(op.type, v, op.param);
                }
            } else {
                v = e.valueOver(e.baseKnown ? null : latest.apply(p.getKey()));
            }
            out.add(v == null ? Effect.clearRange(p.getKey(), Bytes.keyAfter(p.getKey())) : Effect.set(p.getKey(), v));
        }
        for (VersionstampedKey k : stampedKeys) {
            out.add(Effect.set(placeStamp(k.template, k.offset, versionstamp), k.value));
        }
        return out;
    }

    /**
     * Where the single-key entries lie in {@link #effects}'s list: after the range clears, {@code [ranges, ranges +
     * points)}; the start of that span.
     */
    int firstKeyEffect() {
        return clears.size();
    }

    /** The end (exclusive) of the single-key entries' span in {@link #effects}'s list. */
    int endOfKeyEffects() {
        return clears.size() + points.size();
    }

    private static byte[] placeStamp(byte[] template, int offset, byte[] versionstamp) {
        byte[] r = template.clone();
        System.arraycopy(versionstamp, 0, r, offset, versionstamp.length);
        return r;
    }

    /** Keys with pending writes, for watches: each maps to its pending entry. */
    NavigableMap<byte[], Entry> points() {
        return Collections.unmodifiableNavigableMap(points);
    }
}
