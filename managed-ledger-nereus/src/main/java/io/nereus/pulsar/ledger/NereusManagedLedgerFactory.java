package io.nereus.pulsar.ledger;

import io.nereus.metadata.CatalogEntry;
import io.nereus.metadata.CatalogState;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.CursorStore;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamHead;
import io.nereus.pulsar.Callbacks;
import io.nereus.pulsar.Sync;
import io.nereus.stream.StreamStorage;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.bookkeeper.common.util.OrderedExecutor;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Nereus {@link ManagedLedgerFactory}: opens managed ledgers as Nereus streams (one open ledger per name per
 * broker), deletes them, answers the broker's metadata questions about ledgers that are not open, and refreshes
 * ledger statistics every stats period. Ledger callbacks run on the ordered executor thread chosen by ledger name.
 */
public final class NereusManagedLedgerFactory implements ManagedLedgerFactory {
    private static final Logger LOG = LoggerFactory.getLogger(NereusManagedLedgerFactory.class);

    private final MetadataStore metadata;
    private final CursorStore cursorStore;
    private final StreamStorage streams;
    private final TopicNodes topicNodes;
    private final OrderedExecutor executor;
    private final Clock clock;
    private final ManagedLedgerFactoryConfig factoryConfig = new ManagedLedgerFactoryConfig();
    private final ScheduledExecutorService scheduler;
    private final Map<String, CompletableFuture<NereusManagedLedger>> ledgers = new ConcurrentHashMap<>();
    private final NereusFactoryStats stats;
    private final NereusEntryCacheManager entryCacheManager;
    private final int walWriteQuorum;
    private volatile boolean closed;

    public NereusManagedLedgerFactory(MetadataStore metadata, StreamStorage streams, TopicNodes topicNodes,
            OrderedExecutor executor, Clock clock, int walWriteQuorum) {
        this.metadata = metadata;
        this.topicNodes = topicNodes;
        this.cursorStore = metadata.cursors();
        this.streams = streams;
        this.executor = executor;
        this.clock = clock;
        this.walWriteQuorum = walWriteQuorum;
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nereus-ml-stats");
            t.setDaemon(true);
            return t;
        });
        this.stats = new NereusFactoryStats(this);
        this.entryCacheManager = new NereusEntryCacheManager(streams);
        long period = factoryConfig.getStatsPeriodSeconds();
        scheduler.scheduleAtFixedRate(this::refreshStats, period, period, TimeUnit.SECONDS);
    }

    MetadataStore metadata() {
        return metadata;
    }

    CursorStore cursorStore() {
        return cursorStore;
    }

    StreamStorage streams() {
        return streams;
    }

    TopicNodes topicNodes() {
        return topicNodes;
    }

    int walWriteQuorum() {
        return walWriteQuorum;
    }

    private void refreshStats() {
        long period = factoryConfig.getStatsPeriodSeconds();
        stats.refresh(period, TimeUnit.SECONDS);
        for (NereusManagedLedger l : openLedgers()) {
            l.stats().refreshStats(period, TimeUnit.SECONDS);
        }
    }

    List<NereusManagedLedger> openLedgers() {
        List<NereusManagedLedger> open = new ArrayList<>();
        for (CompletableFuture<NereusManagedLedger> f : ledgers.values()) {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                open.add(f.join());
            }
        }
        return open;
    }

    // ---- open ----

    @Override
    public ManagedLedger open(String name) throws InterruptedException, ManagedLedgerException {
        return open(name, new ManagedLedgerConfig());
    }

    @Override
    public ManagedLedger open(String name, ManagedLedgerConfig config) throws InterruptedException,
            ManagedLedgerException {
        return Sync.await(openAsync(name, config));
    }

    @Override
    public void asyncOpen(String name, AsyncCallbacks.OpenLedgerCallback callback, Object ctx) {
        asyncOpen(name, new ManagedLedgerConfig(), callback, null, ctx);
    }

    /**
     * Opens {@code name}. The ownership checker is not needed: fencing is the writer epoch every commit checks, so
     * a broker that lost the topic can never commit again.
     */
    @Override
    public void asyncOpen(String name, ManagedLedgerConfig config, AsyncCallbacks.OpenLedgerCallback callback,
            Supplier<CompletableFuture<Boolean>> mlOwnershipChecker, Object ctx) {
        Callbacks.deliver(openAsync(name, config), executor.chooseThread(name),
                ml -> callback.openLedgerComplete(ml, ctx), e -> callback.openLedgerFailed(e, ctx));
    }

    private CompletableFuture<NereusManagedLedger> openAsync(String name, ManagedLedgerConfig config) {
        if (closed) {
            return CompletableFuture.failedFuture(new ManagedLedgerException.ManagedLedgerFactoryClosedException());
        }
        while (true) {
            CompletableFuture<NereusManagedLedger> f = ledgers.computeIfAbsent(name, n ->
                    NereusManagedLedger.open(this, n, config, executor.chooseThread(n), clock)
                            .thenCompose(ml -> topicNodes.ensure(n).thenApply(v -> ml)));
            if (f.isDone() && !f.isCompletedExceptionally()) {
                LedgerState s = f.join().state();
                if (s != LedgerState.OPEN && s != LedgerState.TERMINATED) {
                    ledgers.remove(name, f); // fenced, closed or deleted: open a fresh one
                    continue;
                }
                f.join().setConfig(config);
            }
            f.whenComplete((ml, t) -> {
                if (t != null) {
                    ledgers.remove(name, f);
                    LOG.warn("Could not open managed ledger name={}", name, t);
                }
            });
            return f;
        }
    }

    /**
     * The ledger {@code name} if this factory has it open now (a topic being loaded has its ledger open), as a
     * {@link OpenLedger}; empty when it is not open here (stored elsewhere, or not opened yet).
     */
    public Optional<OpenLedger> openLedger(String name) {
        CompletableFuture<NereusManagedLedger> f = ledgers.get(name);
        if (f == null || !f.isDone() || f.isCompletedExceptionally()) {
            return Optional.empty();
        }
        NereusManagedLedger ml = f.join();
        return Optional.of(new OpenLedger(ml.getName(), ml.ledgerId(), ml.stream(), streams, ml.executor()));
    }

    /** A ledger closed or was deleted: forget it, so the next open starts afresh. */
    void closed(NereusManagedLedger ledger) {
        ledgers.computeIfPresent(ledger.getName(), (n, f) ->
                f.isDone() && !f.isCompletedExceptionally() && f.join() == ledger ? null : f);
    }

    // ---- read-only access ----

    @Override
    public ReadOnlyCursor openReadOnlyCursor(String name, Position startPosition, ManagedLedgerConfig config)
            throws InterruptedException, ManagedLedgerException {
        return Sync.await(NereusReadOnlyLedger.open(this, name).thenApply(l -> l.createReadOnlyCursor(startPosition)));
    }

    @Override
    public void asyncOpenReadOnlyCursor(String name, Position startPosition, ManagedLedgerConfig config,
            AsyncCallbacks.OpenReadOnlyCursorCallback callback, Object ctx) {
        Callbacks.deliver(NereusReadOnlyLedger.open(this, name), executor.chooseThread(name),
                l -> callback.openReadOnlyCursorComplete(l.createReadOnlyCursor(startPosition), ctx), e -> callback.openReadOnlyCursorFailed(e, ctx));
    }

    @Override
    public void asyncOpenReadOnlyManagedLedger(String name,
            AsyncCallbacks.OpenReadOnlyManagedLedgerCallback callback, ManagedLedgerConfig config, Object ctx) {
        Callbacks.deliver(NereusReadOnlyLedger.open(this, name), executor.chooseThread(name),
                l -> callback.openReadOnlyManagedLedgerComplete(l, ctx), e -> callback.openReadOnlyManagedLedgerFailed(e, ctx));
    }

    OrderedExecutor executor() {
        return executor;
    }

    // ---- info ----

    @Override
    public ManagedLedgerInfo getManagedLedgerInfo(String name) throws InterruptedException, ManagedLedgerException {
        return Sync.await(infoAsync(name));
    }

    @Override
    public void asyncGetManagedLedgerInfo(String name, AsyncCallbacks.ManagedLedgerInfoCallback callback,
            Object ctx) {
        Callbacks.deliver(infoAsync(name), executor.chooseThread(name),
                info -> callback.getInfoComplete(info, ctx), e -> callback.getInfoFailed(e, ctx));
    }

    /** A ledger as stored: its catalog entry, its head and the picture Pulsar's info calls want, one read each. */
    private record Stored(CatalogEntry entry, StreamHead head, ManagedLedgerInfo info) {
    }

    /** The stored picture of a ledger: the one virtual ledger, its cursors and properties. */
    private CompletableFuture<ManagedLedgerInfo> infoAsync(String name) {
        return storedAsync(name).thenApply(Stored::info);
    }

    private CompletableFuture<Stored> storedAsync(String name) {
        return activeCatalogEntry(name).thenCompose(entry -> metadata.streams().head(entry.streamId()).thenCompose(head ->
                cursorStore.loadProperties(entry.streamId()).thenCompose(props ->
                        cursorStore.listCursors(entry.streamId()).thenCompose(names -> {
                            ManagedLedgerInfo info = new ManagedLedgerInfo();
                            StreamHead h = head.orElseThrow(() -> new java.util.concurrent.CompletionException(
                                    new ManagedLedgerException.ManagedLedgerNotFoundException(
                                            "managed ledger " + name + " has no stream head")));
                            info.version = h.commitVersion();
                            info.properties = new HashMap<>(props.values());
                            ManagedLedgerInfo.LedgerInfo li = new ManagedLedgerInfo.LedgerInfo();
                            li.ledgerId = entry.virtualLedgerId();
                            li.entries = h.committedEnd() - h.trimOffset();
                            li.size = h.committedEnd() == 0 ? 0L
                                    : Math.round((double) h.cumulativeBytes() / h.committedEnd() * li.entries);
                            info.ledgers = List.of(li);
                            if (h.state() == io.nereus.metadata.StreamState.SEALED) {
                                info.terminatedPosition = positionInfo(entry.virtualLedgerId(), h.committedEnd() - 1);
                            }
                            info.cursors = new HashMap<>();
                            List<CompletableFuture<Void>> loads = new ArrayList<>();
                            for (String cursor : names) {
                                loads.add(cursorStore.loadCursor(entry.streamId(), cursor).thenAccept(state ->
                                        state.ifPresent(st -> info.cursors.put(cursor,
                                                cursorInfo(entry.virtualLedgerId(), st)))));
                            }
                            return CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new))
                                    .thenApply(v -> new Stored(entry, h, info));
                        }))));
    }

    private static ManagedLedgerInfo.PositionInfo positionInfo(long ledgerId, long entryId) {
        ManagedLedgerInfo.PositionInfo p = new ManagedLedgerInfo.PositionInfo();
        p.ledgerId = ledgerId;
        p.entryId = entryId;
        return p;
    }

    private static ManagedLedgerInfo.CursorInfo cursorInfo(long ledgerId, CursorState st) {
        ManagedLedgerInfo.CursorInfo ci = new ManagedLedgerInfo.CursorInfo();
        ci.cursorsLedgerId = -1;
        ci.markDelete = positionInfo(ledgerId, st.markDeleteEnd() - 1);
        ci.individualDeletedMessages = new ArrayList<>();
        for (OffsetRange r : st.individuallyDeleted()) {
            ManagedLedgerInfo.MessageRangeInfo m = new ManagedLedgerInfo.MessageRangeInfo();
            m.from = positionInfo(ledgerId, r.start() - 1);
            m.to = positionInfo(ledgerId, r.end() - 1);
            ci.individualDeletedMessages.add(m);
        }
        ci.properties = new HashMap<>(st.properties());
        return ci;
    }

    CompletableFuture<CatalogEntry> activeCatalogEntry(String name) {
        return metadata.catalog().catalogEntry(name).thenApply(e -> e.filter(c -> c.state() == CatalogState.ACTIVE)
                .orElseThrow(() -> new java.util.concurrent.CompletionException(
                        new ManagedLedgerException.ManagedLedgerNotFoundException("managed ledger " + name
                                + " does not exist"))));
    }

    @Override
    public CompletableFuture<Boolean> asyncExists(String name) {
        return Callbacks.handOff(metadata.catalog().catalogEntry(name)
                .thenApply(e -> e.isPresent() && e.get().state() == CatalogState.ACTIVE), executor.chooseThread(name));
    }

    @Override
    public CompletableFuture<Map<String, String>> getManagedLedgerPropertiesAsync(String name) {
        CompletableFuture<NereusManagedLedger> open = ledgers.get(name);
        if (open != null && open.isDone() && !open.isCompletedExceptionally()) {
            return CompletableFuture.completedFuture(open.join().getProperties());
        }
        return Callbacks.handOff(metadata.catalog().catalogEntry(name).thenCompose(e -> {
            if (e.isEmpty() || e.get().state() != CatalogState.ACTIVE) {
                return CompletableFuture.completedFuture(Map.<String, String>of());
            }
            return cursorStore.loadProperties(e.get().streamId()).thenApply(p -> Map.copyOf(p.values()));
        }), executor.chooseThread(name));
    }

    /** Fills {@code stats} from the stored head and cursors of a topic not loaded on this broker. */
    @Override
    public void estimateUnloadedTopicBacklog(PersistentOfflineTopicStats stats, TopicName topicName,
            boolean accurate, Object ctx) throws Exception {
        Stored stored = Sync.await(storedAsync(topicName.getPersistenceNamingEncoding()));
        ManagedLedgerInfo.LedgerInfo li = stored.info().ledgers.get(0);
        stats.totalMessages = li.entries;
        stats.storageSize = li.size;
        stats.addLedgerDetails(li.entries, clock.millis(), li.size, li.ledgerId);
        long committedEnd = stored.head().committedEnd();
        long backlog = 0;
        for (Map.Entry<String, ManagedLedgerInfo.CursorInfo> c : stored.info().cursors.entrySet()) {
            long markDeleteEnd = c.getValue().markDelete.entryId + 1;
            long acked = 0;
            for (ManagedLedgerInfo.MessageRangeInfo r : c.getValue().individualDeletedMessages) {
                acked += r.to.entryId - r.from.entryId;
            }
            long cursorBacklog = Math.max(0, committedEnd - markDeleteEnd - acked);
            stats.addCursorDetails(c.getKey(), cursorBacklog, -1);
            backlog = Math.max(backlog, cursorBacklog);
        }
        stats.messageBacklog = backlog;
    }

    // ---- delete ----

    @Override
    public void delete(String name) throws InterruptedException, ManagedLedgerException {
        Sync.await(deleteAsync(name));
    }

    @Override
    public void delete(String name, CompletableFuture<ManagedLedgerConfig> config)
            throws InterruptedException, ManagedLedgerException {
        Sync.await(deleteAsync(name));
    }

    @Override
    public void asyncDelete(String name, AsyncCallbacks.DeleteLedgerCallback callback, Object ctx) {
        asyncDelete(name, null, callback, ctx);
    }

    @Override
    public void asyncDelete(String name, CompletableFuture<ManagedLedgerConfig> config,
            AsyncCallbacks.DeleteLedgerCallback callback, Object ctx) {
        Callbacks.deliver(deleteAsync(name), executor.chooseThread(name),
                v -> callback.deleteLedgerComplete(ctx), e -> callback.deleteLedgerFailed(e, ctx));
    }

    private CompletableFuture<Void> deleteAsync(String name) {
        CompletableFuture<NereusManagedLedger> open = ledgers.get(name);
        if (open != null) {
            return open.handle((ml, t) -> ml).thenCompose(ml -> ml != null ? ml.deleteAsync()
                    : deleteUnopened(name));
        }
        return deleteUnopened(name);
    }

    private CompletableFuture<Void> deleteUnopened(String name) {
        return streams.deleteStream(name).thenCompose(e -> topicNodes.remove(name));
    }

    // ---- shutdown, stats, config ----

    @Override
    public void shutdown() throws InterruptedException, ManagedLedgerException {
        Sync.await(shutdownAsync());
    }

    /** Closes every open ledger (their cursors flush); ledgers still opening are closed once open. */
    @Override
    public CompletableFuture<Void> shutdownAsync() {
        closed = true;
        List<CompletableFuture<Void>> closes = new ArrayList<>();
        for (CompletableFuture<NereusManagedLedger> f : new ArrayList<>(ledgers.values())) {
            closes.add(f.handle((ml, t) -> ml).thenCompose(ml -> ml == null ? CompletableFuture.completedFuture(null)
                    : ml.closeAsync()));
        }
        return Callbacks.handOff(CompletableFuture.allOf(closes.toArray(CompletableFuture[]::new))
                .whenComplete((v, t) -> scheduler.shutdownNow()), executor.chooseThread());
    }

    @Override
    public Map<String, ManagedLedger> getManagedLedgers() {
        Map<String, ManagedLedger> m = new HashMap<>();
        for (NereusManagedLedger l : openLedgers()) {
            m.put(l.getName(), l);
        }
        return m;
    }

    @Override
    public ManagedLedgerFactoryMXBean getCacheStats() {
        return stats;
    }

    @Override
    public EntryCacheManager getEntryCacheManager() {
        return entryCacheManager;
    }

    /** Nereus's tail cache evicts by size only (the oldest entries first); a time threshold does not apply. */
    @Override
    public void updateCacheEvictionTimeThreshold(long cacheEvictionTimeThresholdNanos) {
        LOG.info("Nereus tail cache evicts by size (nereusTailCacheBytes); ignoring a cache eviction time"
                + " threshold of {} ns", cacheEvictionTimeThresholdNanos);
    }

    @Override
    public long getCacheEvictionTimeThreshold() {
        return 0;
    }

    @Override
    public ManagedLedgerFactoryConfig getConfig() {
        return factoryConfig;
    }
}
