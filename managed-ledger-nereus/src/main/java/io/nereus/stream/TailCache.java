package io.nereus.stream;

import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Recently committed entries of the streams this instance writes, bounded by payload bytes; the oldest
 * insertions are evicted first. Entries are put only after their commit, so a hit never shows uncommitted
 * data; the caller still decides visibility with a head snapshot first. Thread-safe (one monitor).
 */
final class TailCache {
    private record Key(StreamId stream, long start) {
    }

    private long maxBytes;
    private final Map<StreamId, TreeMap<Long, StreamEntry>> byStream = new HashMap<>();
    private final ArrayDeque<Key> order = new ArrayDeque<>();
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
        StreamEntry previous = byStream.computeIfAbsent(stream, s -> new TreeMap<>()).put(entry.range().start(), entry);
        if (previous != null) {
            bytes -= previous.payload().length;
        } else {
            order.add(new Key(stream, entry.range().start()));
        }
        bytes += entry.payload().length;
        inserted++;
        evictOverflow();
    }

    private void evictOverflow() {
        while (bytes > maxBytes && !order.isEmpty()) {
            Key k = order.poll();
            TreeMap<Long, StreamEntry> m = byStream.get(k.stream());
            StreamEntry gone = m == null ? null : m.remove(k.start());
            if (gone != null) {
                bytes -= gone.payload().length;
                evicted++;
                if (m.isEmpty()) {
                    byStream.remove(k.stream());
                }
            }
        }
    }

    /** The cached entry containing {@code offset}, if any. */
    synchronized Optional<StreamEntry> get(StreamId stream, long offset) {
        TreeMap<Long, StreamEntry> m = byStream.get(stream);
        Map.Entry<Long, StreamEntry> e = m == null ? null : m.floorEntry(offset);
        if (e != null && e.getValue().range().contains(offset)) {
            hits++;
            hitBytes += e.getValue().payload().length;
            return Optional.of(e.getValue());
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
        TreeMap<Long, StreamEntry> m = byStream.remove(stream);
        if (m != null) {
            m.values().forEach(e -> bytes -= e.payload().length);
        }
    }

    synchronized long bytes() {
        return bytes;
    }

    synchronized TailCacheStats stats() {
        int entries = byStream.values().stream().mapToInt(TreeMap::size).sum();
        return new TailCacheStats(maxBytes, bytes, entries, hits, hitBytes, misses, inserted, evicted);
    }
}
