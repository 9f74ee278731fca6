package io.nereus.pulsar.ledger;

import io.nereus.stream.StreamStorage;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
import org.apache.bookkeeper.mledger.impl.cache.EntryCache;
import org.apache.bookkeeper.mledger.impl.cache.EntryCacheManager;

/**
 * The broker's handle on the read cache, for its dynamic settings ({@code managedLedgerCacheSizeMB} and the
 * eviction watermark): backed by the engine's tail cache. Nereus ledgers have no per-ledger BookKeeper entry
 * cache, so {@link #getEntryCache} is only for {@code ManagedLedgerImpl}s, which this factory never creates.
 */
final class NereusEntryCacheManager implements EntryCacheManager {
    private final StreamStorage streams;
    private volatile double evictionWatermark = 1.0;

    NereusEntryCacheManager(StreamStorage streams) {
        this.streams = streams;
    }

    @Override
    public EntryCache getEntryCache(ManagedLedgerImpl ml) {
        throw new IllegalArgumentException("managed ledger " + ml.getName()
                + " is a BookKeeper managed ledger; the Nereus factory has no entry cache for it");
    }

    /** Nereus keeps no per-ledger cache; the tail cache forgets a deleted stream's entries itself. */
    @Override
    public void removeEntryCache(String name) {
    }

    @Override
    public long getSize() {
        return streams.tailCacheStats().bytes();
    }

    @Override
    public long getMaxSize() {
        return streams.tailCacheStats().maxBytes();
    }

    @Override
    public void clear() {
        streams.clearTailCache();
    }

    @Override
    public void updateCacheSizeAndThreshold(long maxSize) {
        streams.resizeTailCache(maxSize);
    }

    /** Recorded and reported; the tail cache evicts exactly down to its bound, so the watermark has no effect. */
    @Override
    public void updateCacheEvictionWatermark(double cacheEvictionWatermark) {
        evictionWatermark = cacheEvictionWatermark;
    }

    @Override
    public double getCacheEvictionWatermark() {
        return evictionWatermark;
    }
}
