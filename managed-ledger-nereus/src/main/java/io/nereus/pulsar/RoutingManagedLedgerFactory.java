package io.nereus.pulsar;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.bookkeeper.mledger.AsyncCallbacks;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.bookkeeper.mledger.ManagedLedgerFactoryConfig;
import org.apache.bookkeeper.mledger.ManagedLedgerFactoryMXBean;
import org.apache.bookkeeper.mledger.ManagedLedgerInfo;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.ReadOnlyCursor;
import org.apache.bookkeeper.mledger.impl.cache.EntryCacheManager;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.PersistentOfflineTopicStats;

/**
 * The factory of the {@value NereusManagedLedgerStorage#NEREUS} storage class: sends every call about a ledger name to
 * the Nereus factory or to Pulsar's stock factory as {@link LedgerRoute#of} decides, so that a ledger Pulsar requires
 * to be a stock {@code ManagedLedgerImpl} (the transaction coordinator log) is stored by the stock factory with no
 * operator step, and every other one by Nereus. The one owner of that choice: neither delegate knows of the other.
 *
 * <p>Calls about no name are the Nereus factory's (entry cache, its statistics, eviction settings, the factory
 * config): they describe the broker's default storage, as they did before routing. {@link #getManagedLedgers()} lists
 * the open ledgers of both, each from the factory its name routes to. {@link #shutdown()} shuts down the Nereus factory
 * only: the stock factory belongs to the storage's stock {@code ManagedLedgerClientFactory}, which also serves the
 * {@value NereusManagedLedgerStorage#BOOKKEEPER} storage class and is closed with it.
 *
 * <p>Stateless apart from its two delegates; safe for any thread. Callbacks run where the chosen factory runs them.
 */
public final class RoutingManagedLedgerFactory implements ManagedLedgerFactory {
    private final ManagedLedgerFactory nereus;
    private final ManagedLedgerFactory stock;

    public RoutingManagedLedgerFactory(ManagedLedgerFactory nereus, ManagedLedgerFactory stock) {
        this.nereus = nereus;
        this.stock = stock;
    }

    /** The factory storing ledger {@code name}. */
    ManagedLedgerFactory factoryFor(String name) {
        return LedgerRoute.of(name) == LedgerRoute.STOCK ? stock : nereus;
    }

    @Override
    public ManagedLedger open(String name) throws InterruptedException, ManagedLedgerException {
        return factoryFor(name).open(name);
    }

    @Override
    public ManagedLedger open(String name, ManagedLedgerConfig config) throws InterruptedException,
            ManagedLedgerException {
        return factoryFor(name).open(name, config);
    }

    @Override
    public void asyncOpen(String name, AsyncCallbacks.OpenLedgerCallback callback, Object ctx) {
        factoryFor(name).asyncOpen(name, callback, ctx);
    }

    @Override
    public void asyncOpen(String name, ManagedLedgerConfig config, AsyncCallbacks.OpenLedgerCallback callback,
            Supplier<CompletableFuture<Boolean>> mlOwnershipChecker, Object ctx) {
        factoryFor(name).asyncOpen(name, config, callback, mlOwnershipChecker, ctx);
    }

    @Override
    public ReadOnlyCursor openReadOnlyCursor(String name, Position startPosition, ManagedLedgerConfig config)
            throws InterruptedException, ManagedLedgerException {
        return factoryFor(name).openReadOnlyCursor(name, startPosition, config);
    }

    @Override
    public void asyncOpenReadOnlyCursor(String name, Position startPosition, ManagedLedgerConfig config,
            AsyncCallbacks.OpenReadOnlyCursorCallback callback, Object ctx) {
        factoryFor(name).asyncOpenReadOnlyCursor(name, startPosition, config, callback, ctx);
    }

    @Override
    public void asyncOpenReadOnlyManagedLedger(String name,
            AsyncCallbacks.OpenReadOnlyManagedLedgerCallback callback, ManagedLedgerConfig config, Object ctx) {
        factoryFor(name).asyncOpenReadOnlyManagedLedger(name, callback, config, ctx);
    }

    @Override
    public ManagedLedgerInfo getManagedLedgerInfo(String name) throws InterruptedException, ManagedLedgerException {
        return factoryFor(name).getManagedLedgerInfo(name);
    }

    @Override
    public void asyncGetManagedLedgerInfo(String name, AsyncCallbacks.ManagedLedgerInfoCallback callback,
            Object ctx) {
        factoryFor(name).asyncGetManagedLedgerInfo(name, callback, ctx);
    }

    @Override
    public void delete(String name) throws InterruptedException, ManagedLedgerException {
        factoryFor(name).delete(name);
    }

    @Override
    public void delete(String name, CompletableFuture<ManagedLedgerConfig> config)
            throws InterruptedException, ManagedLedgerException {
        factoryFor(name).delete(name, config);
    }

    @Override
    public void asyncDelete(String name, AsyncCallbacks.DeleteLedgerCallback callback, Object ctx) {
        factoryFor(name).asyncDelete(name, callback, ctx);
    }

    @Override
    public void asyncDelete(String name, CompletableFuture<ManagedLedgerConfig> config,
            AsyncCallbacks.DeleteLedgerCallback callback, Object ctx) {
        factoryFor(name).asyncDelete(name, config, callback, ctx);
    }

    @Override
    public CompletableFuture<Boolean> asyncExists(String name) {
        return factoryFor(name).asyncExists(name);
    }

    @Override
    public CompletableFuture<Map<String, String>> getManagedLedgerPropertiesAsync(String name) {
        return factoryFor(name).getManagedLedgerPropertiesAsync(name);
    }

    @Override
    public void estimateUnloadedTopicBacklog(PersistentOfflineTopicStats stats, TopicName topicName,
            boolean accurate, Object ctx) throws Exception {
        factoryFor(topicName.getPersistenceNamingEncoding()).estimateUnloadedTopicBacklog(stats, topicName, accurate,
                ctx);
    }

    /** The open ledgers of both factories, each listed by the factory its name routes to. */
    @Override
    public Map<String, ManagedLedger> getManagedLedgers() {
        Map<String, ManagedLedger> all = new HashMap<>();
        nereus.getManagedLedgers().forEach((name, ml) -> {
            if (LedgerRoute.of(name) == LedgerRoute.NEREUS) {
                all.put(name, ml);
            }
        });
        stock.getManagedLedgers().forEach((name, ml) -> {
            if (LedgerRoute.of(name) == LedgerRoute.STOCK) {
                all.put(name, ml);
            }
        });
        return all;
    }

    /** Shuts down the Nereus factory (see the class comment for the stock one). */
    @Override
    public void shutdown() throws InterruptedException, ManagedLedgerException {
        nereus.shutdown();
    }

    @Override
    public CompletableFuture<Void> shutdownAsync() throws ManagedLedgerException, InterruptedException {
        return nereus.shutdownAsync();
    }

    @Override
    public EntryCacheManager getEntryCacheManager() {
        return nereus.getEntryCacheManager();
    }

    @Override
    public void updateCacheEvictionTimeThreshold(long cacheEvictionTimeThresholdNanos) {
        nereus.updateCacheEvictionTimeThreshold(cacheEvictionTimeThresholdNanos);
    }

    @Override
    public long getCacheEvictionTimeThreshold() {
        return nereus.getCacheEvictionTimeThreshold();
    }

    @Override
    public ManagedLedgerFactoryMXBean getCacheStats() {
        return nereus.getCacheStats();
    }

    @Override
    public ManagedLedgerFactoryConfig getConfig() {
        return nereus.getConfig();
    }
}
