package io.nereus.fdb.embedded;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * The multi-version key space: for each key, the values it held at each committed version at or after the engine's
 * cutoff ({@link #prune}: what live transactions read, and a short span more; see {@link EmbeddedEngine}).
 *
 * <p>Threading: one writer at a time (the commit critical section calls {@link #set}, {@link #clearRange}
 * and {@link #prune}); any number of concurrent readers. A key written once keeps its one entry in its
 * {@link Slot}; a key written again keeps its history in an immutable {@link Chain} replaced as a whole, so a reader
 * always sees a consistent history. Keys are indexed twice: a {@link SlotTable} by content for point reads and
 * writes, an {@link OrderedIndex} for ordered reads; both lead to the same slot. Range reads see the
 * keys as of the last {@link #publish}, which the engine makes before a range read whenever keys changed since.
 *
 * <p>Pruning keeps, for every key, the newest entry at or below the cutoff and everything after it; a key
 * whose only remaining entry is a deletion at or below the cutoff disappears. Reads at a version below the
 * cutoff are no longer possible; the caller refuses them with 1007 {@code transaction_too_old}. A write that
 * leaves a key more than one entry, or only a deletion, queues the key for pruning unless it is queued already; the
 * first value of a new key is not queued, since pruning keeps it anyway. A key pruned while it still holds entries
 * above the cutoff is queued again at its newest entry's version, so a key written at every commit is pruned about
 * once per span the engine keeps (the cutoff's distance behind the newest version), not at every write: each prune of
 * a key reads its history from memory the writes of that span have long left (at a thousand streams, thousands of
 * keys a commit), and the queue holds a key, not each of its writes. Between its prunes a hot key's obsolete entries
 * are dropped when its entries move to new arrays (the only time they would cost room), so it holds no more than when
 * every write pruned it.
 */
final class VersionedStore {
    /**
     * Versions and values of one key, oldest first, in entries {@code [start, end)}; a deletion has no value. The
     * values' bytes sit one after another in one array, {@link #data}, each entry's place in it in {@link #spans}:
     * a key written at every commit holds a window's worth of versions (hundreds), and as arrays of their own they
     * were that many objects for the garbage collector to mark in every cycle, and references to trace. A read of an
     * older version copies its value out of the shared array; the newest value, what almost every read wants, is
     * also kept as the array it was written with ({@link #newest}) and handed out as it is, as a key's only value is.
     *
     * <p>A chain never changes what it shows: appending writes an entry into a spare slot past {@code end} and its
     * bytes past {@code dataEnd} (invisible to holders of this chain) and returns a longer chain over the same
     * arrays, and pruning returns a chain starting later over the same arrays, leaving the entries before it as they
     * were (down to two entries, which move to fresh arrays of their size so that a key written no more holds no old
     * values); so a hot key costs amortized O(1) per write and per prune. When either array is full, the live
     * entries move to new arrays (each doubled while what is live would fill more than half of it).
     *
     * @param spans per entry, the value's offset in {@code data} (high 32 bits) and its length plus one (low 32
     *        bits; 0: a deletion)
     * @param dataEnd where the bytes of the next value go in {@code data}
     * @param newest the newest entry's value as written ({@code null}: a deletion)
     * @param newestVersion the newest entry's version, also {@code versions[end - 1]}: a read of the newest value
     *        finds both in the chain itself, without a look into the versions array, which the commit that wrote
     *        the entry left in another core's cache
     */
    record Chain(long[] versions, long[] spans, byte[] data, int start, int end, int dataEnd, byte[] newest,
            long newestVersion) {
        private static final long DELETION = 0;

        static Chain of(long version, byte[] value) {
            long[] v = new long[2];
            long[] sp = new long[2];
            byte[] d = new byte[value == null ? 0 : value.length * 2];
            v[0] = version;
            return new Chain(v, sp, d, 0, 1, put(sp, 0, d, 0, value), value, version);
        }

        /** Writes {@code value} at {@code at} of {@code data}, its span at {@code entry}; returns the next free byte. */
        private static int put(long[] spans, int entry, byte[] data, int at, byte[] value) {
            if (value == null) {
                spans[entry] = DELETION;
                return at;
            }
            System.arraycopy(value, 0, data, at, value.length);
            spans[entry] = (long) at << 32 | (value.length + 1L);
            return at + value.length;
        }

        private static int length(long span) {
            return (int) span - 1;
        }

        /** A copy of entry {@code i}'s value, {@code null} for a deletion. */
        private byte[] value(int i) {
            long span = spans[i];
            if (span == DELETION) {
                return null;
            }
            int offset = (int) (span >>> 32);
            return Arrays.copyOfRange(data, offset, offset + length(span));
        }

        /** Entries in the chain. */
        int size() {
            return end - start;
        }

        long latestVersion() {
            return newestVersion;
        }

        byte[] valueAt(long version) {
            if (newestVersion <= version) {
                return newest;
            }
            for (int i = end - 2; i >= start; i--) {
                if (versions[i] <= version) {
                    return value(i);
                }
            }
            return null;
        }

        byte[] latest() {
            return newest;
        }

        /** Whether the newest entry is a value, not a deletion. */
        boolean latestIsValue() {
            return spans[end - 1] != DELETION;
        }

        /**
         * This chain with {@code value} at {@code version}; writer thread only, always on the newest chain. When the
         * entries move to new arrays, those {@code cutoff} made obsolete (what {@link #prunedTo} would drop) stay
         * behind.
         */
        Chain append(long version, byte[] value, long cutoff) {
            int bytes = value == null ? 0 : value.length;
            if (newestVersion == version) {
                // A second write of the same key in one commit: replace the last entry in fresh entry arrays, since
                // readers of this chain may be reading that entry; its bytes go past dataEnd, which they never read.
                long[] v = Arrays.copyOf(versions, versions.length);
                long[] sp = Arrays.copyOf(spans, spans.length);
                if (dataEnd + bytes <= data.length) {
                    return new Chain(v, sp, data, start, end, put(sp, end - 1, data, dataEnd, value), value,
                            version);
                }
                // without the replaced entry (no newest of its own: the append gives it one)
                return new Chain(v, sp, data, start, end - 1, dataEnd, null, Long.MIN_VALUE).moved(bytes, cutoff)
                        .appendInPlace(version, value);
            }
            if (end == versions.length || dataEnd + bytes > data.length) {
                return moved(bytes, cutoff).appendInPlace(version, value);
            }
            return appendInPlace(version, value);
        }

        /** This chain with the entry written into the spare slot past {@code end}, which must have room. */
        private Chain appendInPlace(long version, byte[] value) {
            versions[end] = version;
            int next = put(spans, end, data, dataEnd, value);
            return new Chain(versions, spans, data, start, end + 1, next, value, version);
        }

        /**
         * The live entries, but those {@code cutoff} made obsolete, in new arrays with room for one more entry of
         * {@code bytes} value bytes: each array as large as before, or doubled while the live part with the new entry
         * would fill more than half of it.
         */
        private Chain moved(int bytes, long cutoff) {
            int keep = newestAtOrBelow(cutoff);
            int live = end - keep;
            int liveBytes = liveBytes(keep);
            int entries = Math.max(versions.length, 2);
            while ((live + 1) * 2 > entries) {
                entries = Math.multiplyExact(entries, 2);
            }
            int capacity = Math.max(data.length, 16);
            while ((long) (liveBytes + bytes) * 2 > capacity) {
                capacity = Math.multiplyExact(capacity, 2);
            }
            return copied(keep, entries, capacity);
        }

        /**
         * The first entry a read at {@code cutoff} or later may need: the newest at or below it ({@link #start} when
         * none is), by binary search (versions rise strictly along a chain): a key pruned once per window holds up to
         * a window's entries below a cutoff, and a window's after it.
         */
        private int newestAtOrBelow(long cutoff) {
            int lo = start;
            int hi = end - 1;
            while (lo < hi) {
                int mid = (lo + hi + 1) >>> 1;
                if (versions[mid] <= cutoff) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            return lo;
        }

        /**
         * Value bytes of the entries from {@code from} to {@code end}, or a little more: the room they take in
         * {@link #data}, from the first one's bytes to {@code dataEnd}. Values are written one after another in
         * entry order, so that room holds exactly them, but for the bytes of an entry a later write of the same
         * commit replaced. Found from the first value alone (a scan of every entry cost a hot key's window of
         * entries, hundreds, at every move).
         */
        private int liveBytes(int from) {
            for (int i = from; i < end; i++) {
                if (spans[i] != DELETION) {
                    return dataEnd - (int) (spans[i] >>> 32);
                }
            }
            return 0;
        }

        /** Entries {@code [from, end)} in new arrays of {@code entries} entries and {@code capacity} bytes. */
        private Chain copied(int from, int entries, int capacity) {
            long[] v = new long[entries];
            long[] sp = new long[entries];
            byte[] d = new byte[capacity];
            int n = end - from;
            System.arraycopy(versions, from, v, 0, n);
            int at = 0;
            for (int i = 0; i < n; i++) {
                long span = spans[from + i];
                if (span == DELETION) {
                    sp[i] = DELETION;
                } else {
                    int length = length(span);
                    System.arraycopy(data, (int) (span >>> 32), d, at, length);
                    sp[i] = (long) at << 32 | (length + 1L);
                    at += length;
                }
            }
            return new Chain(v, sp, d, 0, n, at, newest, newestVersion);
        }

        /** This chain without entries made obsolete by {@code cutoff}, or {@code null} when nothing remains. */
        Chain prunedTo(long cutoff) {
            int keep = newestAtOrBelow(cutoff);
            if (keep == end - 1 && spans[keep] == DELETION && versions[keep] <= cutoff) {
                return null;
            }
            if (keep == start) {
                return this;
            }
            if (end - keep <= 2) {
                // a key no longer written often: fresh small arrays, so the old values before keep are let go
                return copied(keep, 2, liveBytes(keep));
            }
            return new Chain(versions, spans, data, keep, end, dataEnd, newest, newestVersion);
        }
    }

    /**
     * One key's place in both indexes. A key written once (a generation-0 index record, an intent: most keys of a
     * broker's store) holds that entry in the slot itself, with no {@link Chain}: {@link #first} and
     * {@link #firstVersion}. Its second write moves both entries into a chain and drops the inline value, so a key
     * written often does not keep its first value. {@link #chain} is {@code null} while the inline entry is the only
     * one, {@link #REMOVED} once the key left the store.
     */
    static final class Slot {
        final byte[] key;
        final int hash;
        final long firstVersion;
        /**
         * The first entry's value ({@code null}: a deletion) while {@link #chain} is {@code null}. Volatile, as is the
         * chain: the writer publishes the chain before it drops this value, so a reader that still finds no chain
         * also still finds this value.
         */
        volatile byte[] first;
        volatile Chain chain;
        /**
         * The newest commit version whose write conflict ranges covered exactly this key (a point write that mutated
         * it); commit critical section only, which sets it as it applies a single-key mutation or, for a conflict
         * range added by hand, in {@link #recordPointWrite}.
         */
        long conflictVersion;
        /** Whether the slot waits in the {@link PruneQueue}; writer only. */
        boolean queued;

        Slot(byte[] key, int hash, long version, byte[] value) {
            this.key = key;
            this.hash = hash;
            this.firstVersion = version;
            this.first = value;
        }

        /** The value at {@code version}, {@code null} when absent or deleted then. */
        byte[] valueAt(long version) {
            byte[] inline = first;
            Chain c = chain;
            if (c == null) {
                return firstVersion <= version ? inline : null;
            }
            return c == REMOVED ? null : c.valueAt(version);
        }

        /** The newest value, {@code null} when deleted or removed; writer thread. */
        byte[] latest() {
            Chain c = chain;
            return c == null ? first : c == REMOVED ? null : c.latest();
        }

        /** Whether the newest entry is a value (not a deletion, not removed), without copying it; writer thread. */
        boolean holdsValue() {
            Chain c = chain;
            return c == null ? first != null : c != REMOVED && c.latestIsValue();
        }

        long latestVersion() {
            Chain c = chain;
            return c == null ? firstVersion : c.latestVersion();
        }

        boolean removed() {
            return chain == REMOVED;
        }

        /** Entries held. */
        int size() {
            Chain c = chain;
            return c == null ? 1 : c == REMOVED ? 0 : c.size();
        }
    }

    /** What a removed slot's chain is. */
    private static final Chain REMOVED =
            new Chain(new long[0], new long[0], new byte[0], 0, 0, 0, null, Long.MIN_VALUE);

    /**
     * The slots waiting to be pruned, each once, with the version from which a prune of it can drop something: what
     * {@link #prune} visits. Written in version order but for slots queued again by a prune, at their newest entry's
     * version, which may be older than the writes queued before them; such a slot is pruned when those before it
     * are, a little later than it could be, never too early (a prune to any cutoff the engine gives is correct). A
     * ring of two arrays rather than an object per slot.
     */
    static final class PruneQueue {
        private long[] versions = new long[64];
        private Slot[] slots = new Slot[64];
        private int head;
        private int size;

        void add(long version, Slot slot) {
            if (size == versions.length) {
                grow();
            }
            int at = (head + size) & (versions.length - 1);
            versions[at] = version;
            slots[at] = slot;
            size++;
        }

        private void grow() {
            int capacity = Math.multiplyExact(versions.length, 2);
            long[] v = new long[capacity];
            Slot[] sl = new Slot[capacity];
            for (int i = 0; i < size; i++) {
                int from = (head + i) & (versions.length - 1);
                v[i] = versions[from];
                sl[i] = slots[from];
            }
            versions = v;
            slots = sl;
            head = 0;
        }

        boolean isEmpty() {
            return size == 0;
        }

        int size() {
            return size;
        }

        /** The version of the oldest write; the queue must not be empty. */
        long firstVersion() {
            if (size == 0) {
                throw new NoSuchElementException("prune queue is empty");
            }
            return versions[head];
        }

        /** Removes the oldest write and returns its slot; the queue must not be empty. */
        Slot poll() {
            if (size == 0) {
                throw new NoSuchElementException("prune queue is empty");
            }
            Slot s = slots[head];
            slots[head] = null;
            head = (head + 1) & (versions.length - 1);
            size--;
            return s;
        }
    }

    /** Ordered index for range reads and key selectors; readers see what {@link #publish} made visible. */
    private final OrderedIndex<Slot> ordered = new OrderedIndex<>(s -> !s.removed());
    /** Hash index for point reads and writes. */
    private final SlotTable byKey = new SlotTable();
    private final PruneQueue pruneQueue = new PruneQueue();
    private long versionEntries;
    /** The last cutoff given to {@link #prune}: entries it made obsolete are dropped when a chain moves. */
    private long cutoff = Long.MIN_VALUE;

    private static byte[] valueAt(Slot s, long version) {
        return s == null ? null : s.valueAt(version);
    }

    /** The value of {@code key} at {@code version}, or {@code null} when absent. */
    byte[] get(byte[] key, long version) {
        return valueAt(byKey.get(key, Bytes.hash(key)), version);
    }

    /** The newest value of {@code key}, committed or not yet visible; writer thread only. */
    byte[] latest(byte[] key) {
        Slot s = byKey.get(key, Bytes.hash(key));
        return s == null ? null : s.latest();
    }

    /** Sets {@code key} to {@code value} ({@code null}: a deletion) at {@code version}; returns its slot. */
    Slot set(long version, byte[] key, byte[] value) {
        int hash = Bytes.hash(key);
        Slot s = byKey.get(key, hash);
        if (s == null) {
            Slot created = new Slot(key, hash, version, value);
            byKey.add(created);
            ordered.put(key, created);
            versionEntries++;
            if (value == null) {
                // a lone value never needs pruning (pruning keeps the newest entry); a lone deletion leaves the store
                enqueue(version, created);
            }
            return created;
        }
        write(version, s, value);
        return s;
    }

    /**
     * Clears the one key {@code key} at {@code version}; returns its slot when that wrote a deletion, {@code null}
     * when the key held no value (absent, deleted already, or removed).
     */
    Slot clearKey(long version, byte[] key) {
        Slot s = byKey.get(key, Bytes.hash(key));
        if (s != null && s.holdsValue()) {
            write(version, s, null);
            return s;
        }
        return null;
    }

    /**
     * Clears {@code [begin, end)}: every key present there gets a deletion at {@code version}. A range of one key (a
     * point clear) finds its slot by hash, not by a walk of the ordered index.
     */
    void clearRange(long version, byte[] begin, byte[] end) {
        if (Bytes.isKeyAfter(begin, end)) {
            clearKey(version, begin);
            return;
        }
        if (Bytes.compare(begin, end) >= 0) {
            return;
        }
        for (Iterator<Slot> it = ordered.working(begin, end, false); it.hasNext(); ) {
            Slot s = it.next();
            if (s.holdsValue()) {
                write(version, s, null);
            }
        }
    }

    private void write(long version, Slot s, byte[] value) {
        Chain old = s.chain;
        if (old == null) {
            if (s.firstVersion == version) {
                // a second write of the key in the commit that created it: a chain of the last write alone
                s.chain = Chain.of(version, value);
            } else {
                s.chain = Chain.of(s.firstVersion, s.first).append(version, value, cutoff);
                versionEntries++;
            }
            s.first = null; // after the chain: a reader finding no chain still finds the inline value
        } else {
            Chain next = old.append(version, value, cutoff);
            versionEntries += next.size() - old.size();
            s.chain = next;
        }
        enqueue(version, s);
    }

    private void enqueue(long version, Slot s) {
        if (!s.queued) {
            s.queued = true;
            pruneQueue.add(version, s);
        }
    }

    /** Drops history no read at or above {@code cutoff} can need; writer thread only. */
    void prune(long cutoff) {
        this.cutoff = Math.max(this.cutoff, cutoff);
        while (!pruneQueue.isEmpty() && pruneQueue.firstVersion() <= cutoff) {
            Slot s = pruneQueue.poll();
            s.queued = false;
            Chain c = s.chain;
            if (c == REMOVED) {
                continue;
            }
            if (c == null) {
                // only a lone deletion is queued without a chain
                if (s.first == null && s.firstVersion <= cutoff) {
                    remove(s, 1);
                }
                continue;
            }
            Chain p = c.prunedTo(cutoff);
            if (p == null) {
                remove(s, c.size());
                continue;
            }
            if (p != c) {
                s.chain = p;
                versionEntries -= c.size() - p.size();
            }
            if ((p.size() > 1 || !p.latestIsValue()) && p.latestVersion() > cutoff) {
                // entries above the cutoff remain (a newest deletion is one): again once they are all at or below one
                enqueue(p.latestVersion(), s);
            }
        }
    }

    private void remove(Slot s, int entries) {
        byKey.remove(s);
        s.chain = REMOVED; // before the index counts it dead: a rebuild it starts leaves out what is removed
        ordered.retire();
        versionEntries -= entries;
    }

    // ---- point write conflicts (the resolver's memory for keys the store holds; commit critical section only)

    /**
     * Records that the commit at {@code version} had a write conflict range of exactly {@code key}, when that commit
     * mutated the key (its chain's newest entry is at {@code version}); returns false otherwise, and the caller
     * records the range in the {@link ConflictHistory}. A slot's conflict version needs no pruning: a slot only
     * disappears once its newest entry, a deletion, has left the MVCC window, and so has every conflict it holds.
     */
    boolean recordPointWrite(byte[] key, long version) {
        Slot s = byKey.get(key, Bytes.hash(key));
        if (s == null || s.removed() || s.latestVersion() != version) {
            return false;
        }
        s.conflictVersion = version;
        return true;
    }

    /** Whether a point write recorded after {@code readVersion} covered {@code key}. */
    boolean pointWrittenAfter(byte[] key, long readVersion) {
        Slot s = byKey.get(key, Bytes.hash(key));
        return s != null && s.conflictVersion > readVersion;
    }

    /** Whether a point write recorded after {@code readVersion} covered a key in {@code [begin, end)}. */
    boolean rangeWrittenAfter(byte[] begin, byte[] end, long readVersion) {
        for (Iterator<Slot> it = ordered.working(begin, end, false); it.hasNext(); ) {
            if (it.next().conflictVersion > readVersion) {
                return true;
            }
        }
        return false;
    }

    /** Loads a key at a base version during recovery; writer thread only, before any reader. */
    void load(long version, byte[] key, byte[] value) {
        Slot s = new Slot(key, Bytes.hash(key), version, value);
        byKey.add(s);
        ordered.put(key, s);
        versionEntries++;
    }

    /**
     * The keys and values in {@code [begin, end)} ({@code end == null}: to the end) present at {@code version}, lazily, in ascending or
     * descending order. The iterator stays valid while writers run: it sees each key as of {@code version}.
     */
    Iterator<Map.Entry<byte[], byte[]>> range(byte[] begin, byte[] end, long version, boolean reverse) {
        if (end != null && Bytes.compare(begin, end) >= 0) {
            return java.util.Collections.emptyIterator();
        }
        Iterator<Slot> it = ordered.published(begin, end, reverse);
        return new LookaheadIterator<>() {
            @Override
            protected Map.Entry<byte[], byte[]> advance() {
                while (it.hasNext()) {
                    Slot slot = it.next();
                    byte[] v = valueAt(slot, version);
                    if (v != null) {
                        return Map.entry(slot.key, v);
                    }
                }
                return null;
            }
        };
    }

    /**
     * Makes every key written so far visible to range reads. Called by whoever holds the writer's role (the engine's
     * commit lock), between changes: at the end of recovery, and before a range read when keys were written since the
     * last publication ({@link #unpublished}). Publishing after every commit instead made the writer copy the paths to
     * the keys of the next commit again (path copying), though most commits are followed by no range read.
     */
    void publish() {
        ordered.publish();
    }

    /** Whether keys were written or removed since the last {@link #publish}; any thread. */
    boolean unpublished() {
        return ordered.unpublished();
    }

    /** Keys in the ordered index as last published, deleted ones not yet pruned included. */
    long keyCount() {
        return ordered.size();
    }

    long versionEntries() {
        return versionEntries;
    }
}
