package io.nereus.pulsar.ledger;

import io.nereus.stream.TailCacheStats;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.ManagedLedgerFactoryMXBean;

/**
 * The factory's cache statistics, read from the engine's tail cache (the one read cache Nereus keeps per broker).
 * Totals are counted since the broker started; rates cover the last stats period ({@link #refresh}).
 */
final class NereusFactoryStats implements ManagedLedgerFactoryMXBean {
    private final NereusManagedLedgerFactory factory;
    private volatile TailCacheStats previous = new TailCacheStats(0, 0, 0, 0, 0, 0, 0, 0);
    private volatile TailCacheStats period = previous;
    private volatile double seconds = 1;

    NereusFactoryStats(NereusManagedLedgerFactory factory) {
        this.factory = factory;
    }

    synchronized void refresh(long periodLength, TimeUnit unit) {
        TailCacheStats now = now();
        period = new TailCacheStats(now.maxBytes(), now.bytes(), now.entries(), now.hits() - previous.hits(),
                now.hitBytes() - previous.hitBytes(), now.misses() - previous.misses(),
                now.inserted() - previous.inserted(), now.evicted() - previous.evicted());
        previous = now;
        seconds = Math.max(1e-3, unit.toMillis(periodLength) / 1000.0);
    }

    private TailCacheStats now() {
        return factory.streams().tailCacheStats();
    }

    @Override
    public int getNumberOfManagedLedgers() {
        return factory.openLedgers().size();
    }

    @Override
    public long getCacheUsedSize() {
        return now().bytes();
    }

    @Override
    public long getCacheMaxSize() {
        return now().maxBytes();
    }

    @Override
    public double getCacheHitsRate() {
        return period.hits() / seconds;
    }

    @Override
    public long getCacheHitsTotal() {
        return now().hits();
    }

    @Override
    public double getCacheMissesRate() {
        return period.misses() / seconds;
    }

    @Override
    public long getCacheMissesTotal() {
        return now().misses();
    }

    @Override
    public double getCacheHitsThroughput() {
        return period.hitBytes() / seconds;
    }

    @Override
    public long getCacheHitsBytesTotal() {
        return now().hitBytes();
    }

    /** Bytes of misses are not known when the miss happens (the read goes to the resolver); reported as 0. */
    @Override
    public double getCacheMissesThroughput() {
        return 0;
    }

    @Override
    public long getCacheMissesBytesTotal() {
        return 0;
    }

    @Override
    public long getNumberOfCacheEvictions() {
        return period.evicted();
    }

    @Override
    public long getNumberOfCacheEvictionsTotal() {
        return now().evicted();
    }

    @Override
    public long getCacheInsertedEntriesCount() {
        return now().inserted();
    }

    @Override
    public long getCacheEvictedEntriesCount() {
        return now().evicted();
    }

    @Override
    public long getCacheEntriesCount() {
        return now().entries();
    }
}
