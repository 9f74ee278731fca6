package io.nereus.stream;

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

    private final long maxBytes;
    private final Map<StreamId, TreeMap<Long, StoredEntry>> byStream = new HashMap<>();
    private final ArrayDeque<Key> order = new ArrayDeque<>();
    private long bytes;

    TailCache(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    synchronized void put(StreamId stream, StoredEntry entry) {
        if (entry.payload().length > maxBytes) {
            return;
        }
        StoredEntry previous = byStream.computeIfAbsent(stream, s -> new TreeMap<>()).put(entry.range().start(), entry);
        if (previous != null) {
            bytes -= previous.payload().length;
        } else {
            order.add(new Key(stream, entry.range().start()));
        }
        bytes += entry.payload().length;
        while (bytes > maxBytes && !order.isEmpty()) {
            Key k = order.poll();
            TreeMap<Long, StoredEntry> m = byStream.get(k.stream());
            StoredEntry gone = m == null ? null : m.remove(k.start());
            if (gone != null) {
                bytes -= gone.payload().length;
                if (m.isEmpty()) {
                    byStream.remove(k.stream());
                }
            }
        }
    }

    /** The cached entry containing {@code offset}, if any. */
    synchronized Optional<StoredEntry> get(StreamId stream, long offset) {
        TreeMap<Long, StoredEntry> m = byStream.get(stream);
        if (m == null) {
            return Optional.empty();
        }
        Map.Entry<Long, StoredEntry> e = m.floorEntry(offset);
        return e != null && e.getValue().range().contains(offset) ? Optional.of(e.getValue()) : Optional.empty();
    }

    synchronized void invalidate(StreamId stream) {
        TreeMap<Long, StoredEntry> m = byStream.remove(stream);
        if (m != null) {
            m.values().forEach(e -> bytes -= e.payload().length);
        }
    }

    synchronized long bytes() {
        return bytes;
    }
}
