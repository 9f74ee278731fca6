package io.nereus.object;

import io.nereus.metadata.StreamEntry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
 *
 * <p><b>Fetching ahead.</b> A read of several blocks has them fetched into the cache at once rather than one after
 * another, and a reader going through an object in order has the next {@link #readAheadBlocks} blocks fetched too,
 * while it uses the current ones ({@link StreamObjectReader}), so its next read finds them here instead of waiting for
 * the store. The cache registers each such fetch while it runs ({@link #startLoading}), so a reader that needs the
 * block meanwhile waits for it rather than fetching it again, and two readers of one object do not both fetch it.
 * Blocks fetched ahead and not yet read take at most half the bound ({@link #startLoading}); beyond that readers
 * fetch their blocks as they reach them, so many readers catching up at once do not evict each other's blocks before
 * they read them. The bound should hold a read's blocks and the read-ahead for every reader catching up at once.
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
     * A block's stored bytes in an array wrapped without a copy (unpooled heap memory: what a store without its own
     * buffers returns, as {@link ObjectStore#get}), counted in {@link #liveBytes} from its creation until its last
     * reference, the cache's or a reader's slice's, is released.
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

    /**
     * A block's stored bytes in direct memory held by another buffer ({@code fetched}: a pooled one the object store
     * filled), seen without a copy and counted in {@link #liveBytes} like {@link BlockBuffer}; its last release
     * releases {@code fetched}, which gives the memory back to its pool.
     */
    private final class DirectBlockBuffer extends UnpooledUnsafeDirectByteBuf {
        private final ByteBuf fetched;
        private final int length;

        DirectBlockBuffer(ByteBuf fetched) {
            super(UnpooledByteBufAllocator.DEFAULT, fetched.nioBuffer(fetched.readerIndex(), fetched.readableBytes()),
                    fetched.readableBytes());
            this.fetched = fetched;
            this.length = fetched.readableBytes();
            live.add(length);
        }

        @Override
        protected void deallocate() {
            super.deallocate(); // a buffer given to the constructor is not freed by it: fetched owns the memory
            live.add(-length);
            fetched.release();
        }
    }

    private final long maxBytes;
    private final int readAheadBlocks;
    private final LongAdder live = new LongAdder();
    private final Map<Key, Decoded> blocks = new LinkedHashMap<>(16, 0.75f, true);
    /** Fetches ahead of readers still running, by block; each completes once its block is cached (or failed). */
    private final Map<Key, CompletableFuture<Void>> loading = new HashMap<>();
    /** Blocks being fetched ahead, or fetched ahead and cached, that no reader has got yet, with their stored bytes. */
    private final Map<Key, Integer> unread = new HashMap<>();
    /** Stored bytes of the {@link #unread} blocks: at most half the bound. */
    private long aheadBytes;
    private long bytes;
    private long hits;
    private long misses;
    private long readAheads;
    private boolean closed;

    /** A cache of at most {@code maxBytes} stored block bytes (0 caches nothing), without read-ahead. */
    public BlockCache(long maxBytes) {
        this(maxBytes, 0);
    }

    /**
     * A cache of at most {@code maxBytes} stored block bytes (0 caches nothing) whose sequential readers have up to
     * {@code readAheadBlocks} blocks after those they read fetched ahead (0: nothing is fetched ahead, and a read's
     * blocks are fetched one after another; so too without a cache).
     */
    public BlockCache(long maxBytes, int readAheadBlocks) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("block cache size must be >= 0 bytes: " + maxBytes);
        }
        if (readAheadBlocks < 0) {
            throw new IllegalArgumentException("blocks read ahead must be >= 0: " + readAheadBlocks);
        }
        this.maxBytes = maxBytes;
        this.readAheadBlocks = maxBytes == 0 ? 0 : readAheadBlocks;
    }

    /** Blocks a sequential reader has fetched after those it reads; 0 (nothing fetched ahead) without a cache. */
    int readAheadBlocks() {
        return readAheadBlocks;
    }

    /**
     * A buffer of a fetched block's stored bytes, {@code fetched}'s readable bytes, not copied, with one reference, the
     * caller's; counted in {@link #liveBytes} until it is released. Takes over {@code fetched}'s reference: direct
     * memory in one piece (the object stores' pooled buffers) is released when the last slice of the block is; an
     * array wrapped whole is taken as it is; anything else is copied into an array of its own.
     */
    ByteBuf wrap(ByteBuf fetched) {
        if (fetched.hasMemoryAddress() && fetched.nioBufferCount() == 1) {
            return new DirectBlockBuffer(fetched);
        }
        try {
            if (fetched.hasArray() && fetched.arrayOffset() == 0 && fetched.readerIndex() == 0
                    && fetched.readableBytes() == fetched.array().length) {
                return new BlockBuffer(fetched.array());
            }
            byte[] copy = new byte[fetched.readableBytes()];
            fetched.getBytes(fetched.readerIndex(), copy);
            return new BlockBuffer(copy);
        } finally {
            fetched.release();
        }
    }

    /** The cached block, with a reference of the caller's own; null when not cached. */
    synchronized Decoded get(String object, int block) {
        Key key = new Key(object, block);
        Decoded c = blocks.get(key);
        if (c == null) {
            misses++;
            return null;
        }
        hits++;
        unread(key);
        c.buffer().retain();
        return c;
    }

    /** Whether the block is cached; does not count as a use of it (no hit, no miss, no change of its age). */
    synchronized boolean holds(String object, int block) {
        return blocks.containsKey(new Key(object, block)); // containsKey leaves the access order as it is
    }

    /** The fetch ahead of readers still running for the block; null when there is none. */
    synchronized CompletableFuture<Void> loading(String object, int block) {
        return loading.get(new Key(object, block));
    }

    /**
     * Registers a fetch ahead of readers for the block of {@code length} stored bytes and returns the future its
     * fetcher completes (after caching the block, or on failure) through {@link #loaded}; null when the block is
     * cached or already being fetched ahead, or when blocks fetched ahead and not yet read would take more than half
     * the cache (so that many readers catching up at once cannot fill it with blocks evicted before they are read),
     * or once the cache is closed; the reader then fetches the block when it gets there.
     */
    synchronized CompletableFuture<Void> startLoading(String object, int block, int length) {
        Key key = new Key(object, block);
        if (closed || blocks.containsKey(key) || loading.containsKey(key) || aheadBytes + length > maxBytes / 2) {
            return null;
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        loading.put(key, f);
        unread.put(key, length);
        aheadBytes += length;
        readAheads++;
        return f;
    }

    /**
     * Ends the fetch ahead registered by {@link #startLoading} and completes its future; any thread. A block it
     * cached counts against the budget of blocks fetched ahead until it is first read or evicted; one it did not
     * (the fetch failed, or the block is already gone) leaves the budget now.
     */
    void loaded(String object, int block, CompletableFuture<Void> fetch) {
        synchronized (this) {
            Key key = new Key(object, block);
            loading.remove(key, fetch);
            if (!blocks.containsKey(key)) {
                unread(key);
            }
        }
        fetch.complete(null);
    }

    /**
     * A block fetched ahead leaves the budget once: at its first read, its eviction, or the end of a fetch that did
     * not cache it, whichever comes first. Any other block is not in it.
     */
    private void unread(Key key) {
        Integer length = unread.remove(key);
        if (length != null) {
            aheadBytes -= length;
        }
    }

    /**
     * Caches {@code decoded} under its own reference (the caller's stays the caller's), evicting the least recently
     * used blocks beyond the bound; a block larger than the bound is not kept, nor any once the cache is closed.
     */
    synchronized void put(String object, int block, Decoded decoded) {
        int size = decoded.buffer().readableBytes();
        if (size > maxBytes || closed) {
            return;
        }
        decoded.buffer().retain();
        Decoded old = blocks.put(new Key(object, block), decoded);
        if (old != null) {
            bytes -= old.buffer().readableBytes();
            old.release();
        }
        bytes += size;
        var it = blocks.entrySet().iterator();
        while (bytes > maxBytes && it.hasNext()) {
            Map.Entry<Key, Decoded> gone = it.next();
            it.remove();
            unread(gone.getKey()); // fetched ahead for nothing: its room in the budget is free again
            bytes -= gone.getValue().buffer().readableBytes();
            gone.getValue().release();
        }
    }

    /**
     * Evicts every block (releasing the cache's references) and keeps nothing put after this, so a block fetched ahead
     * that lands later is released by its fetcher; readers still get, and fetch, blocks through it (uncached).
     */
    public synchronized void close() {
        closed = true;
        for (Decoded d : blocks.values()) {
            d.release();
        }
        blocks.clear();
        unread.clear(); // fetches still running find nothing to give back when they end
        aheadBytes = 0;
        bytes = 0;
    }

    /** Stored bytes of the cached blocks: the readable bytes of the buffers the cache holds. */
    public synchronized long bytes() {
        return bytes;
    }

    /**
     * Stored bytes of every block decoded through this cache ({@link #wrap}) whose memory is still referenced: the
     * blocks the cache holds ({@link #bytes}) and those evicted, or never cached, that readers still hold slices of.
     * Once every reader has released its entries, no fetch ahead is running and the cache is closed, it is 0; anything
     * else is a leak.
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

    /** Blocks fetched ahead of readers' walks ({@link #startLoading}), since the cache was made. */
    public synchronized long readAheads() {
        return readAheads;
    }
}
