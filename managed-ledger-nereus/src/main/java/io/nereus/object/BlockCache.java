package io.nereus.object;

import io.nereus.metadata.StreamEntry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Decoded blocks of stream objects, least recently used out first, bounded by the blocks' stored bytes, so
 * sequential readers of an object fetch each block once. Objects are immutable under their unique names, so an
 * entry never goes stale. Thread-safe (one monitor, held only for map operations and reference counts).
 *
 * <p>A block is its stored bytes in one buffer and its entries, whose payloads are slices of that buffer
 * ({@link Decoded}). The cache holds one reference to each block it keeps and releases it on eviction (by the bound
 * or {@link #clear}); {@link #get} hands out a reference of its own, taken under the monitor while the cache still
 * holds its, so an eviction never frees a block a reader is slicing, and the slices readers take keep the block's
 * memory alive after it left the cache. The bound counts the {@code readableBytes()} of the blocks held, exactly,
 * whether or not readers hold slices of them (a block evicted while slices are out is the readers' memory, not the
 * cache's, until they release them: {@link #liveBytes} counts both).
 */
public final class BlockCache {
    private record Key(String object, int block) {
    }

    /**
     * One decoded block: {@code buffer} holds its stored bytes, and the payloads of {@code entries} are unretained
     * slices of it, valid while a reference to {@code buffer} is held. Whoever gets one from {@link #get} or decodes
     * one owns one reference and releases it ({@link #release}); a reader keeps an entry past that only through a
     * retained slice ({@link StreamEntry#retainedSlice}).
     */
    record Decoded(ByteBuf buffer, List<StreamEntry> entries) {
        void release() {
            buffer.release();
        }
    }

    /**
     * A block's stored bytes wrapped without a copy (unpooled heap memory), counted in {@link #liveBytes} from its
     * creation until its last reference, the cache's or a reader's slice's, is released.
     */
    private final class BlockBuffer extends UnpooledHeapByteBuf {
        BlockBuffer(byte[] bytes) {
            super(UnpooledByteBufAllocator.DEFAULT, bytes, bytes.length);
            live.add(bytes.length);
        }

        @Override
        protected void deallocate() {
            live.add(-capacity());
            super.deallocate();
        }
    }

    private final long maxBytes;
    private final LongAdder live = new LongAdder();
    private final Map<Key, Decoded> blocks = new LinkedHashMap<>(16, 0.75f, true);
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

    /** A buffer of a fetched block's stored bytes (not copied), with one reference, the caller's; see {@link #liveBytes}. */
    ByteBuf wrap(byte[] storedBytes) {
        return new BlockBuffer(storedBytes);
    }

    /** The cached block, with a reference of the caller's own; null when not cached. */
    synchronized Decoded get(String object, int block) {
        Decoded c = blocks.get(new Key(object, block));
        if (c == null) {
            misses++;
            return null;
        }
        hits++;
        c.buffer().retain();
        return c;
    }

    /**
     * Caches {@code decoded} under its own reference (the caller's stays the caller's), evicting the least recently
     * used blocks beyond the bound; a block larger than the bound is not kept.
     */
    synchronized void put(String object, int block, Decoded decoded) {
        int size = decoded.buffer().readableBytes();
        if (size > maxBytes) {
            return;
        }
        decoded.buffer().retain();
        Decoded old = blocks.put(new Key(object, block), decoded);
        if (old != null) {
            bytes -= old.buffer().readableBytes();
            old.release();
        }
        bytes += size;
        var it = blocks.values().iterator();
        while (bytes > maxBytes && it.hasNext()) {
            Decoded gone = it.next();
            it.remove();
            bytes -= gone.buffer().readableBytes();
            gone.release();
        }
    }

    /** Evicts every block (releasing the cache's references); the cache stays usable. */
    public synchronized void clear() {
        for (Decoded d : blocks.values()) {
            d.release();
        }
        blocks.clear();
        bytes = 0;
    }

    /** Stored bytes of the cached blocks: the readable bytes of the buffers the cache holds. */
    public synchronized long bytes() {
        return bytes;
    }

    /**
     * Stored bytes of every block decoded through this cache ({@link #wrap}) whose memory is still referenced: the
     * blocks the cache holds ({@link #bytes}) and those evicted, or never cached, that readers still hold slices of.
     * Once every reader has released its entries and the cache is cleared it is 0; anything else is a leak.
     */
    public long liveBytes() {
        return live.sum();
    }

    /** Blocks the cache holds. */
    public synchronized int blocks() {
        return blocks.size();
    }

    public synchronized long hits() {
        return hits;
    }

    public synchronized long misses() {
        return misses;
    }
}
