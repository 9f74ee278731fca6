package io.nereus.object;

import io.nereus.metadata.StreamEntry;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decoded blocks of stream objects, least recently used out first, bounded by the blocks' stored bytes, so
 * sequential readers of an object fetch each block once. Objects are immutable under their unique names, so an
 * entry never goes stale. Thread-safe (one monitor, held only for map operations).
 */
public final class BlockCache {
    private record Key(String object, int block) {
    }

    private record Cached(List<StreamEntry> entries, long bytes) {
    }

    private final long maxBytes;
    private final Map<Key, Cached> blocks = new LinkedHashMap<>(16, 0.75f, true);
    private long bytes;
    private long hits;
    private long misses;

    /** A cache of at most {@code maxBytes} stored block bytes; 0 caches nothing. */
    public BlockCache(long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("block cache size must be >= 0 bytes: " + maxBytes);
        }
        this.maxBytes = maxBytes;
    }

    synchronized List<StreamEntry> get(String object, int block) {
        Cached c = blocks.get(new Key(object, block));
        if (c == null) {
            misses++;
            return null;
        }
        hits++;
        return c.entries();
    }

    synchronized void put(String object, int block, List<StreamEntry> entries, long storedBytes) {
        if (storedBytes > maxBytes) {
            return;
        }
        Cached old = blocks.put(new Key(object, block), new Cached(entries, storedBytes));
        if (old != null) {
            bytes -= old.bytes();
        }
        bytes += storedBytes;
        var it = blocks.values().iterator();
        while (bytes > maxBytes && it.hasNext()) {
            bytes -= it.next().bytes();
            it.remove();
        }
    }

    /** Stored bytes of the cached blocks. */
    public synchronized long bytes() {
        return bytes;
    }

    public synchronized long hits() {
        return hits;
    }

    public synchronized long misses() {
        return misses;
    }
}
