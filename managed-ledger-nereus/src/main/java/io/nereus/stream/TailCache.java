package io.nereus.stream;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.Payloads;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Recently committed entries of the streams this instance writes, bounded by payload bytes; the oldest
 * insertions are evicted first. Entries are put only after their commit, so a hit never shows uncommitted
 * data; the caller still decides visibility with a head snapshot first. Thread-safe (one monitor).
 *
 * <p>A stream's commits complete in offset order, so each stream keeps its cached entries in an array ring in
 * ascending offset order (a lookup is a binary search), and one queue holds, per cached entry, the stream it went
 * to, in insertion order: evicting the oldest insertion is taking the first entry of that stream's ring. An entry
 * that does not start after the stream's last cached one (a completion of an earlier session arriving late) is
 * not cached: the cache only ever holds what it was given, and a miss reads the stream's storage.
 *
 * <p>Payloads are the appended buffers themselves, not copies: {@link #put} retains the buffer it keeps, and the
 * cache releases it when the entry is evicted (by the bound, {@link #resize}, {@link #invalidate}, {@link #clear}
 * or {@link #close}). The bound counts each held entry's {@code readableBytes()}, exactly, whether or not readers
 * hold slices of it (what a pooled slice pins beyond them, such as the rest of a network read buffer, is not
 * counted; nor is an evicted entry a reader still holds a slice of: that memory is the reader's until it releases
 * it). A hit hands out a retained slice of the cached payload, taken under the monitor, so an eviction racing the
 * read never frees the bytes handed out: no copy.
 */
final class TailCache {
    /** One cached entry: its offsets and the cache's reference to its payload. */
    private record Cached(OffsetRange range, ByteBuf payload) {
    }

    /** One stream's cached entries, ascending by offset, in a ring. */
    private static final class StreamTail {
        final StreamId stream;
        Cached[] ring = new Cached[8];
        int first;
        int size;

        StreamTail(StreamId stream) {
            this.stream = stream;
        }

        Cached at(int i) {
            return ring[(first + i) & (ring.length - 1)];
        }

        Cached last() {
            return size == 0 ? null : at(size - 1);
        }

        void add(Cached e) {
            if (size == ring.length) {
                Cached[] grown = new Cached[ring.length * 2];
                for (int i = 0; i < size; i++) {
                    grown[i] = at(i);
                }
                ring = grown;
                first = 0;
            }
            ring[(first + size) & (ring.length - 1)] = e;
            size++;
        }

        Cached removeFirst() {
            Cached e = ring[first];
            ring[first] = null;
            first = (first + 1) & (ring.length - 1);
            size--;
            return e;
        }

        /** The entry containing {@code offset}, or null. */
        Cached containing(long offset) {
            int lo = 0;
            int hi = size - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                Cached e = at(mid);
                if (e.range().end() <= offset) {
                    lo = mid + 1;
                } else if (e.range().start() > offset) {
                    hi = mid - 1;
                } else {
                    return e;
                }
            }
            return null;
        }
    }

    private long maxBytes;
    private final Map<StreamId, StreamTail> byStream = new HashMap<>();
    /** The stream of every cached entry, oldest insertion first. */
    private final ArrayDeque<StreamTail> order = new ArrayDeque<>();
    private long bytes;
    private long hits;
    private long hitBytes;
    private long misses;
    private long inserted;
    private long evicted;
    private boolean closed;

    TailCache(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /**
     * Caches the committed entry at {@code range} with payload {@code payload}'s readable bytes, retaining
     * {@code payload} if it is kept; the caller's reference stays the caller's. Neither the payload's bytes nor its
     * indices may change afterwards.
     */
    synchronized void put(StreamId stream, OffsetRange range, ByteBuf payload) {
        int size = payload.readableBytes();
        if (closed || size > maxBytes) {
            return;
        }
        StreamTail t = byStream.get(stream);
        if (t == null) {
            t = new StreamTail(stream);
            byStream.put(stream, t);
        }
        Cached last = t.last();
        if (last != null && range.start() < last.range().end()) {
            return;
        }
        t.add(new Cached(range, payload.retain()));
        order.addLast(t);
        bytes += size;
        inserted++;
        evictOverflow();
    }

    private void evictOverflow() {
        while (bytes > maxBytes && !order.isEmpty()) {
            StreamTail t = order.pollFirst();
            Cached gone = t.removeFirst();
            bytes -= gone.payload().readableBytes();
            gone.payload().release();
            evicted++;
            if (t.size == 0) {
                byStream.remove(t.stream);
            }
        }
    }

    /**
     * The cached entry containing {@code offset}, if any: a retained slice of the cached payload (no copy), taken
     * under the monitor while the cache still holds its own reference; the caller owns it ({@link StreamEntry}).
     */
    Optional<StreamEntry> get(StreamId stream, long offset) {
        synchronized (this) {
            StreamTail t = byStream.get(stream);
            Cached e = t == null ? null : t.containing(offset);
            if (e == null) {
                misses++;
                return Optional.empty();
            }
            hits++;
            hitBytes += e.payload().readableBytes();
            return Optional.of(new StreamEntry(e.range(), Payloads.retainedSlice(e.payload())));
        }
    }

    /** Changes the byte bound; shrinking evicts the oldest entries at once. */
    synchronized void resize(long newMaxBytes) {
        if (newMaxBytes < 0) {
            throw new IllegalArgumentException("tail cache size must be >= 0: " + newMaxBytes);
        }
        maxBytes = newMaxBytes;
        evictOverflow();
    }

    /** Evicts everything (releasing every payload); also what closing the storage does. */
    synchronized void clear() {
        for (StreamTail t : byStream.values()) {
            releaseAll(t);
        }
        byStream.clear();
        order.clear();
        bytes = 0;
    }

    /** Evicts everything and caches nothing from now on (a late {@link #put} keeps nothing, so leaks nothing). */
    synchronized void close() {
        closed = true;
        clear();
    }

    synchronized void invalidate(StreamId stream) {
        StreamTail t = byStream.remove(stream);
        if (t != null) {
            for (int i = 0; i < t.size; i++) {
                bytes -= t.at(i).payload().readableBytes();
            }
            releaseAll(t);
            order.removeIf(o -> o == t);
        }
    }

    private static void releaseAll(StreamTail t) {
        for (int i = 0; i < t.size; i++) {
            t.at(i).payload().release();
        }
        Arrays.fill(t.ring, null);
        t.size = 0;
    }

    synchronized long bytes() {
        return bytes;
    }

    synchronized TailCacheStats stats() {
        int entries = order.size();
        return new TailCacheStats(maxBytes, bytes, entries, hits, hitBytes, misses, inserted, evicted);
    }
}
