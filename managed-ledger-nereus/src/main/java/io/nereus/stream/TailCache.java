package io.nereus.stream;

import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
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
 */
final class TailCache {
    /** One stream's cached entries, ascending by offset, in a ring. */
    private static final class StreamTail {
        final StreamId stream;
        StreamEntry[] ring = new StreamEntry[8];
        int first;
        int size;

        StreamTail(StreamId stream) {
            this.stream = stream;
        }

        StreamEntry at(int i) {
            return ring[(first + i) & (ring.length - 1)];
        }

        StreamEntry last() {
            return size == 0 ? null : at(size - 1);
        }

        void add(StreamEntry e) {
            if (size == ring.length) {
                StreamEntry[] grown = new StreamEntry[ring.length * 2];
                for (int i = 0; i < size; i++) {
                    grown[i] = at(i);
                }
                ring = grown;
                first = 0;
            }
            ring[(first + size) & (ring.length - 1)] = e;
            size++;
        }

        StreamEntry removeFirst() {
            StreamEntry e = ring[first];
            ring[first] = null;
            first = (first + 1) & (ring.length - 1);
            size--;
            return e;
        }

        /** The entry containing {@code offset}, or null. */
        StreamEntry containing(long offset) {
            int lo = 0;
            int hi = size - 1;
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                StreamEntry e = at(mid);
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

    TailCache(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    synchronized void put(StreamId stream, StreamEntry entry) {
        if (entry.payload().length > maxBytes) {
            return;
        }
        StreamTail t = byStream.get(stream);
        if (t == null) {
            t = new StreamTail(stream);
            byStream.put(stream, t);
        }
        StreamEntry last = t.last();
        if (last != null && entry.range().start() < last.range().end()) {
            return;
        }
        t.add(entry);
        order.addLast(t);
        bytes += entry.payload().length;
        inserted++;
        evictOverflow();
    }

    private void evictOverflow() {
        while (bytes > maxBytes && !order.isEmpty()) {
            StreamTail t = order.pollFirst();
            StreamEntry gone = t.removeFirst();
            bytes -= gone.payload().length;
            evicted++;
            if (t.size == 0) {
                byStream.remove(t.stream);
            }
        }
    }

    /** The cached entry containing {@code offset}, if any. */
    synchronized Optional<StreamEntry> get(StreamId stream, long offset) {
        StreamTail t = byStream.get(stream);
        StreamEntry e = t == null ? null : t.containing(offset);
        if (e != null) {
            hits++;
            hitBytes += e.payload().length;
            return Optional.of(e);
        }
        misses++;
        return Optional.empty();
    }

    /** Changes the byte bound; shrinking evicts the oldest entries at once. */
    synchronized void resize(long newMaxBytes) {
        if (newMaxBytes < 0) {
            throw new IllegalArgumentException("tail cache size must be >= 0: " + newMaxBytes);
        }
        maxBytes = newMaxBytes;
        evictOverflow();
    }

    synchronized void clear() {
        byStream.clear();
        order.clear();
        bytes = 0;
    }

    synchronized void invalidate(StreamId stream) {
        StreamTail t = byStream.remove(stream);
        if (t != null) {
            for (int i = 0; i < t.size; i++) {
                bytes -= t.at(i).payload().length;
            }
            order.removeIf(o -> o == t);
            Arrays.fill(t.ring, null);
            t.size = 0;
        }
    }

    synchronized long bytes() {
        return bytes;
    }

    synchronized TailCacheStats stats() {
        int entries = order.size();
        return new TailCacheStats(maxBytes, bytes, entries, hits, hitBytes, misses, inserted, evicted);
    }
}
