package io.nereus.pulsar.ledger;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.metadata.CatalogEntry;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.WalTarget;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.apache.bookkeeper.mledger.AsyncCallbacks;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerInfo;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.ReadOnlyCursor;
import org.apache.bookkeeper.mledger.ScanOutcome;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerMBeanImpl;
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Nereus managed ledger over a real in-process bookie and EmbeddedFdb, without a broker. */
class NereusManagedLedgerTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final StorageConfig CONFIG = StorageConfig.defaults().withWal(WalConfig.defaults()
            .withQuorums(1, 1, 1).withFlush(64 * 1024, Duration.ofMillis(1)));

    private EngineFixture engine;
    /** The broker's local metadata store, where Pulsar looks for the topic nodes (Pulsar's in-memory one). */
    private org.apache.pulsar.metadata.api.extended.MetadataStoreExtended pulsarMetadata;
    private final List<AutoCloseable> closers = new ArrayList<>();
    private final Map<String, StreamStorage> storages = new HashMap<>();
    private final Map<String, OrderedExecutor> executors = new HashMap<>();

    @BeforeEach
    void setUp() throws Exception {
        engine = new EngineFixture(BK, "ml");
        pulsarMetadata = org.apache.pulsar.metadata.api.extended.MetadataStoreExtended.create("memory:local",
                org.apache.pulsar.metadata.api.MetadataStoreConfig.builder().build());
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closers.size() - 1; i >= 0; i--) {
            closers.get(i).close();
        }
        engine.close();
        pulsarMetadata.close();
    }

    /** One "broker": its own storage instance (writer id) and factory over the shared bookie and metadata. */
    private NereusManagedLedgerFactory broker(String id) {
        StreamStorage streams = engine.storage(id, CONFIG);
        OrderedExecutor executor = OrderedExecutor.newBuilder().name("test-ml-" + id).numThreads(2).build();
        storages.put(id, streams);
        executors.put(id, executor);
        NereusManagedLedgerFactory f = new NereusManagedLedgerFactory(engine.metadata, streams,
                new TopicNodes(pulsarMetadata), executor, Clock.systemUTC(), 1);
        closers.add(executor::shutdownNow);
        closers.add(() -> f.shutdownAsync().get());
        return f;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Entry e) {
        try {
            return new String(e.getData(), StandardCharsets.UTF_8);
        } finally {
            e.release();
        }
    }

    private static Entry readEntry(ManagedLedger ml, Position p) {
        CompletableFuture<Entry> f = new CompletableFuture<>();
        ml.asyncReadEntry(p, new AsyncCallbacks.ReadEntryCallback() {
            @Override
            public void readEntryComplete(Entry entry, Object ctx) {
                f.complete(entry);
            }

            @Override
            public void readEntryFailed(ManagedLedgerException exception, Object ctx) {
                f.completeExceptionally(exception);
            }
        }, null);
        return await(f);
    }

    @Test
    void addEntry_positionsAreDenseOffsetsOfOneVirtualLedger() throws Exception {
        ManagedLedger ml = broker("b1").open("tenant/ns/persistent/t1", new ManagedLedgerConfig());
        List<Position> positions = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            positions.add(ml.addEntry(bytes("m" + i)));
        }
        long ledgerId = positions.get(0).getLedgerId();
        assertThat(ledgerId).isGreaterThanOrEqualTo(CatalogEntry.MIN_VIRTUAL_LEDGER_ID);
        assertThat(positions).extracting(Position::getEntryId).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(positions).extracting(Position::getLedgerId).containsOnly(ledgerId);
        assertThat(ml.getLastConfirmedEntry()).isEqualTo(PositionFactory.create(ledgerId, 4));
        assertThat(ml.getFirstPosition()).isEqualTo(PositionFactory.create(ledgerId, -1));
        assertThat(ml.getNumberOfEntries()).isEqualTo(5);
        assertThat(ml.getTotalSize()).isEqualTo(10);
        assertThat(text(readEntry(ml, positions.get(3)))).isEqualTo("m3");
        assertThat(ml.getLedgersInfo()).containsOnlyKeys(ledgerId);
        assertThat(ml.getLedgersInfo().get(ledgerId).getEntries()).isEqualTo(5);
    }

    @Test
    void asyncAddEntry_completesInOrderWithTheBufferItWasGiven() {
        ManagedLedger ml = await(openAsync(broker("b1"), "order"));
        int n = 200;
        List<Long> completed = java.util.Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> all = new CompletableFuture<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            ml.asyncAddEntry(Unpooled.wrappedBuffer(bytes("e" + i)), new AsyncCallbacks.AddEntryCallback() {
                @Override
                public void addComplete(Position position, io.netty.buffer.ByteBuf entryData, Object ctx) {
                    assertThat(entryData.toString(StandardCharsets.UTF_8)).isEqualTo("e" + index);
                    completed.add(position.getEntryId());
                    if (completed.size() == n) {
                        all.complete(null);
                    }
                }

                @Override
                public void addFailed(ManagedLedgerException exception, Object ctx) {
                    all.completeExceptionally(exception);
                }
            }, null);
        }
        await(all);
        assertThat(completed).isSorted().hasSize(n).doesNotHaveDuplicates();
        assertThat(completed.get(n - 1)).isEqualTo(n - 1);
    }

    @Test
    void open_onAnotherBroker_fencesTheFirstAndContinuesAtTheCommittedEnd() throws Exception {
        ManagedLedger first = broker("b1").open("moving");
        first.addEntry(bytes("a"));
        first.addEntry(bytes("b"));
        ManagedLedger second = broker("b2").open("moving");
        assertThatThrownBy(() -> first.addEntry(bytes("lost")))
                .isInstanceOf(ManagedLedgerException.ManagedLedgerFencedException.class);
        Position p = second.addEntry(bytes("c"));
        assertThat(p.getEntryId()).isEqualTo(2);
        assertThat(text(readEntry(second, PositionFactory.create(p.getLedgerId(), 1)))).isEqualTo("b");
        assertThat(second.getNumberOfEntries()).isEqualTo(3);
    }

    @Test
    void terminate_refusesAppendsAndStaysTerminatedAfterReopen() throws Exception {
        NereusManagedLedgerFactory b1 = broker("b1");
        ManagedLedger ml = b1.open("ended");
        ml.addEntry(bytes("x"));
        Position last = ml.terminate();
        assertThat(last.getEntryId()).isEqualTo(0);
        assertThat(ml.isTerminated()).isTrue();
        assertThatThrownBy(() -> ml.addEntry(bytes("y")))
                .isInstanceOf(ManagedLedgerException.ManagedLedgerTerminatedException.class);
        ml.close();
        ManagedLedger again = broker("b2").open("ended");
        assertThat(again.isTerminated()).isTrue();
        assertThat(again.getLastConfirmedEntry()).isEqualTo(last);
        assertThatThrownBy(() -> again.addEntry(bytes("z")))
                .isInstanceOf(ManagedLedgerException.ManagedLedgerTerminatedException.class);
    }

    @Test
    void delete_thenOpenAgain_isANewLedgerWhoseOldPositionsDoNotResolve() throws Exception {
        NereusManagedLedgerFactory f = broker("b1");
        ManagedLedger ml = f.open("recreated");
        Position old = ml.addEntry(bytes("old"));
        assertThat(await(pulsarMetadata.exists("/managed-ledgers/recreated"))).as("the broker sees the topic").isTrue();
        ml.delete();
        assertThat(await(pulsarMetadata.exists("/managed-ledgers/recreated"))).isFalse();
        assertThat(await(f.asyncExists("recreated"))).isFalse();
        ManagedLedger fresh = f.open("recreated");
        Position now = fresh.addEntry(bytes("new"));
        assertThat(now.getLedgerId()).isNotEqualTo(old.getLedgerId());
        assertThat(now.getEntryId()).isEqualTo(0);
        assertThatThrownBy(() -> readEntry(fresh, old)).hasCauseInstanceOf(ManagedLedgerException.class);
        assertThat(await(f.asyncExists("recreated"))).isTrue();
    }

    @Test
    void properties_areStoredAndSeenByTheNextOwner() throws Exception {
        NereusManagedLedgerFactory b1 = broker("b1");
        ManagedLedger ml = b1.open("props");
        ml.setProperty("a", "1");
        ml.setProperties(Map.of("b", "2", "c", "3"));
        ml.deleteProperty("c");
        assertThat(ml.getProperties()).isEqualTo(Map.of("b", "2"));
        NereusManagedLedgerFactory b2 = broker("b2");
        assertThat(await(b2.getManagedLedgerPropertiesAsync("props"))).isEqualTo(Map.of("b", "2"));
        assertThat(b2.open("props").getProperties()).isEqualTo(Map.of("b", "2"));
        assertThatThrownBy(() -> ml.setProperty("d", "4"))
                .isInstanceOf(ManagedLedgerException.ManagedLedgerFencedException.class);
    }

    @Test
    void getLastDispatchablePosition_walksBackToTheNewestMatchingEntry() throws Exception {
        ManagedLedger ml = broker("b1").open("dispatchable");
        ml.addEntry(bytes("keep"));
        Position keep = ml.addEntry(bytes("keep"));
        ml.addEntry(bytes("skip"));
        ml.addEntry(bytes("skip"));
        Position found = await(ml.getLastDispatchablePosition(
                e -> new String(e.getData(), StandardCharsets.UTF_8).equals("keep"), ml.getLastConfirmedEntry()));
        assertThat(found).isEqualTo(keep);
        ManagedLedger empty = broker("b2").open("dispatchable-empty");
        assertThat(await(empty.getLastDispatchablePosition(e -> true, empty.getLastConfirmedEntry())))
                .isEqualTo(empty.getLastConfirmedEntry());
    }

    @Test
    void whenCommittedBeyond_isCompletedByTheAppendThatReachesIt() throws Exception {
        NereusManagedLedger ml = (NereusManagedLedger) broker("b1").open("waits");
        CompletableFuture<Void> waiting = ml.whenCommittedBeyond(1);
        ml.addEntry(bytes("0"));
        assertThat(waiting).isNotDone();
        ml.addEntry(bytes("1"));
        await(waiting);
        CompletableFuture<Void> cancelled = ml.whenCommittedBeyond(5);
        cancelled.cancel(false);
        ml.addEntry(bytes("2"));
        assertThat(cancelled).isCancelled();
    }

    /**
     * Every other entry acknowledged: each run of a cursor read is one entry, and tail-cache hits complete at
     * once, so a read taking thousands of runs must loop, not recurse (a recursive read overflows the stack).
     */
    @Test
    void reads_overThousandsOfCachedEntriesOneRunEach_loopInsteadOfRecursing() throws Exception {
        ManagedLedger ml = await(openAsync(broker("b1"), "holes"));
        // an active cursor, so that the entries are cached as they are added
        ml.openCursor("sub", CommandSubscribe.InitialPosition.Earliest).setActive();
        int n = 20_000;
        CompletableFuture<Void> all = new CompletableFuture<>();
        java.util.concurrent.atomic.AtomicInteger added = new java.util.concurrent.atomic.AtomicInteger();
        for (int i = 0; i < n; i++) {
            ml.asyncAddEntry(bytes("e" + i), new AsyncCallbacks.AddEntryCallback() {
                @Override
                public void addComplete(Position position, io.netty.buffer.ByteBuf entryData, Object ctx) {
                    if (added.incrementAndGet() == n) {
                        all.complete(null);
                    }
                }

                @Override
                public void addFailed(ManagedLedgerException exception, Object ctx) {
                    all.completeExceptionally(exception);
                }
            }, null);
        }
        await(all);
        ManagedCursor c = ml.openCursor("sub", CommandSubscribe.InitialPosition.Earliest);
        List<Position> acked = new ArrayList<>();
        for (long o = 1; o < n; o += 2) {
            acked.add(PositionFactory.create(ml.getLastConfirmedEntry().getLedgerId(), o));
        }
        c.delete(acked);
        List<Entry> read = c.readEntries(n);
        try {
            assertThat(read).hasSize(n / 2);
            assertThat(read).extracting(Entry::getEntryId).allMatch(o -> o % 2 == 0).isSorted();
        } finally {
            read.forEach(Entry::release);
        }
        ManagedCursor scanner = ml.openCursor("scan", CommandSubscribe.InitialPosition.Earliest);
        scanner.delete(acked);
        java.util.concurrent.atomic.AtomicLong tested = new java.util.concurrent.atomic.AtomicLong();
        assertThat(await(scanner.scan(Optional.empty(), e -> {
            tested.incrementAndGet();
            return true;
        }, 1, Long.MAX_VALUE, 60_000))).isEqualTo(ScanOutcome.COMPLETED);
        assertThat(tested).hasValue(n / 2);
        // and the backwards walk for the last dispatchable position over every entry, one at a time
        Position first = PositionFactory.create(ml.getLastConfirmedEntry().getLedgerId(), 0);
        assertThat(await(ml.getLastDispatchablePosition(e -> e.getEntryId() == 0, ml.getLastConfirmedEntry())))
                .isEqualTo(first);
    }

    @Test
    void addEntry_isCachedOnlyWhileACursorIsActive_asPulsarCaches() throws Exception {
        NereusManagedLedgerFactory f = broker("b1");
        ManagedLedger ml = await(openAsync(f, "cached"));
        ml.addEntry(bytes("a"));
        assertThat(f.getEntryCacheManager().getSize()).as("no cursor").isZero();
        ManagedCursor sub = ml.openCursor("sub", CommandSubscribe.InitialPosition.Earliest);
        ml.addEntry(bytes("bb"));
        assertThat(f.getEntryCacheManager().getSize()).as("a durable cursor starts inactive").isZero();
        sub.setActive();
        ml.addEntry(bytes("ccc"));
        assertThat(f.getEntryCacheManager().getSize()).isEqualTo(3);
        sub.setInactive();
        ml.addEntry(bytes("dddd"));
        assertThat(f.getEntryCacheManager().getSize()).isEqualTo(3);
        ManagedCursor reader = ml.newNonDurableCursor(PositionFactory.EARLIEST, "reader");
        ml.addEntry(bytes("eeeee"));
        assertThat(f.getEntryCacheManager().getSize()).as("a non-durable cursor starts active, as Pulsar's")
                .isEqualTo(8);
        reader.close();
        ml.addEntry(bytes("ffffff"));
        assertThat(f.getEntryCacheManager().getSize()).as("closed: no longer active").isEqualTo(8);
        sub.setActive();
        ml.deleteCursor("sub");
        ml.addEntry(bytes("g"));
        assertThat(f.getEntryCacheManager().getSize()).as("deleted: no longer active").isEqualTo(8);

        ManagedCursor all = ml.openCursor("all", CommandSubscribe.InitialPosition.Earliest);
        assertThat(all.readEntries(10)).extracting(NereusManagedLedgerTest::text)
                .as("served from the cache or the stream alike")
                .containsExactly("a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g");
    }

    @Test
    void positions_nextPreviousAndAfterN_stayWithinTheStoredEntries() throws Exception {
        ManagedLedger ml = broker("b1").open("positions");
        for (int i = 0; i < 4; i++) {
            ml.addEntry(bytes("p" + i));
        }
        long l = ml.getLastConfirmedEntry().getLedgerId();
        assertThat(ml.getNextValidPosition(PositionFactory.create(l, 1))).isEqualTo(PositionFactory.create(l, 2));
        assertThat(ml.getNextValidPosition(PositionFactory.EARLIEST)).isEqualTo(PositionFactory.create(l, 0));
        assertThat(ml.getNextValidPosition(PositionFactory.create(l, 3))).isEqualTo(PositionFactory.create(l, 4));
        assertThat(ml.getPreviousPosition(PositionFactory.create(l, 0))).isEqualTo(PositionFactory.create(l, -1));
        assertThat(ml.getPositionAfterN(PositionFactory.create(l, 0), 2,
                org.apache.bookkeeper.mledger.PositionBound.startIncluded)).isEqualTo(PositionFactory.create(l, 1));
        assertThat(ml.getPositionAfterN(PositionFactory.create(l, 0), 10,
                org.apache.bookkeeper.mledger.PositionBound.startExcluded)).isEqualTo(PositionFactory.create(l, 3));
        assertThat(ml.getNumberOfEntries(com.google.common.collect.Range.openClosed(
                PositionFactory.create(l, 0), PositionFactory.create(l, 3)))).isEqualTo(3);
    }

    @Test
    void statsAndInfo_reportTheStoredEntriesTruthfully() throws Exception {
        NereusManagedLedgerFactory f = broker("b1");
        ManagedLedger ml = f.open("stats");
        ml.newNonDurableCursor(PositionFactory.EARLIEST, "tail"); // active: the added entries are cached
        ml.addEntry(bytes("1234"));
        ml.addEntry(bytes("5678"));
        assertThat(ml.getStats()).isInstanceOf(ManagedLedgerMBeanImpl.class);
        ManagedLedgerMBeanImpl stats = (ManagedLedgerMBeanImpl) ml.getStats();
        assertThat(stats.getName()).isEqualTo("stats");
        assertThat(stats.getAddEntrySucceedTotal()).isEqualTo(2);
        assertThat(stats.getAddEntryBytesTotal()).isEqualTo(8);
        assertThat(stats.getStoredMessagesLogicalSize()).isEqualTo(8);
        assertThat(f.getCacheStats().getNumberOfManagedLedgers()).isEqualTo(1);
        assertThat(f.getCacheStats().getCacheInsertedEntriesCount()).isEqualTo(2);
        var internal = await(ml.getManagedLedgerInternalStats(true));
        assertThat(internal.state).isEqualTo("LedgerOpened");
        assertThat(internal.numberOfEntries).isEqualTo(2);
        assertThat(internal.totalSize).isEqualTo(8);
        assertThat(internal.lastConfirmedEntry).isEqualTo(ml.getLastConfirmedEntry().toString());
        assertThat(internal.ledgers).hasSize(1);
        ManagedLedgerInfo info = f.getManagedLedgerInfo("stats");
        assertThat(info.ledgers).hasSize(1);
        assertThat(info.ledgers.get(0).entries).isEqualTo(2);
        assertThatThrownBy(() -> f.getManagedLedgerInfo("missing"))
                .isInstanceOf(ManagedLedgerException.ManagedLedgerNotFoundException.class);
    }

    /**
     * Pulsar's continuations of the futures the facade returns run on the ledger's executor (or on the calling thread
     * when a future is complete already), never on the thread that completed the metadata work: a blocking call there
     * would wait for itself ({@link io.nereus.pulsar.Callbacks#handOff}).
     */
    @Test
    void futuresReturnedToPulsar_completeOnTheLedgersExecutor() throws Exception {
        NereusManagedLedgerFactory f = broker("b1");
        ManagedLedger ml = f.open("handed");
        ManagedCursor cursor = ml.openCursor("sub", CommandSubscribe.InitialPosition.Earliest);
        Position last = null;
        for (int i = 0; i < 3; i++) {
            last = ml.addEntry(bytes("m" + i));
        }
        f.open("other").close(); // stored, not open: its properties are read from the metadata
        String caller = Thread.currentThread().getName();
        Map<String, CompletableFuture<String>> threads = new java.util.LinkedHashMap<>();
        threads.put("asyncExists", threadOf(f.asyncExists("handed")));
        threads.put("getManagedLedgerPropertiesAsync", threadOf(f.getManagedLedgerPropertiesAsync("other")));
        threads.put("getManagedLedgerInternalStats", threadOf(ml.getManagedLedgerInternalStats(false)));
        threads.put("asyncFindPosition", threadOf(ml.asyncFindPosition(e -> true)));
        threads.put("getLastDispatchablePosition", threadOf(ml.getLastDispatchablePosition(e -> true, last)));
        threads.put("asyncMigrate", threadOf(ml.asyncMigrate()));
        threads.put("putCursorProperty", threadOf(cursor.putCursorProperty("k", "v")));
        threads.put("scan", threadOf(cursor.scan(Optional.empty(), e -> true, 10, 10, 10_000)));
        for (Map.Entry<String, CompletableFuture<String>> e : threads.entrySet()) {
            assertThat(await(e.getValue())).as(e.getKey()).matches(n -> n.startsWith("test-ml-b1") || n.equals(caller),
                    "the ledger's executor or the caller");
        }
    }

    /** The thread on which a continuation of {@code f} attached now runs. */
    private static CompletableFuture<String> threadOf(CompletableFuture<?> f) {
        return f.handle((v, t) -> Thread.currentThread().getName());
    }

    @Test
    void readOnlyCursor_readsWhatTheWriterCommitted() throws Exception {
        NereusManagedLedgerFactory f = broker("b1");
        ManagedLedger ml = f.open("readonly");
        for (int i = 0; i < 3; i++) {
            ml.addEntry(bytes("r" + i));
        }
        ReadOnlyCursor c = broker("tool").openReadOnlyCursor("readonly", PositionFactory.EARLIEST,
                new ManagedLedgerConfig());
        List<String> got = new ArrayList<>();
        while (c.hasMoreEntries()) {
            c.readEntries(2).forEach(e -> got.add(text(e)));
        }
        assertThat(got).containsExactly("r0", "r1", "r2");
        assertThat(ml.addEntry(bytes("r3")).getEntryId()).isEqualTo(3);
    }

    @Test
    void trim_movesInWholeSegmentsBehindTheSlowestDurableCursor() throws Exception {
        ManagedLedgerConfig config = new ManagedLedgerConfig().setMaxEntriesPerLedger(2);
        ManagedLedger ml = broker("b1").open("trimmed", config);
        var cursor = ml.openCursor("c", org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition.Earliest);
        List<Position> p = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            p.add(ml.addEntry(bytes("t" + i)));
        }
        cursor.markDelete(p.get(2));
        CompletableFuture<Void> trimmed = new CompletableFuture<>();
        ml.trimConsumedLedgersInBackground(trimmed);
        await(trimmed);
        assertThat(ml.getFirstPosition()).as("3 consumed, segments of 2: offsets 0 and 1 go")
                .isEqualTo(PositionFactory.create(p.get(0).getLedgerId(), 1));
        assertThat(ml.getNumberOfEntries()).isEqualTo(3);
        assertThat(text(readEntry(ml, p.get(2)))).isEqualTo("t2");
        assertThatThrownBy(() -> readEntry(ml, p.get(0))).hasCauseInstanceOf(ManagedLedgerException.class);
    }

    @Test
    void sizes_afterTrimmingLargerEntries_countTheStoredEntriesOnly() throws Exception {
        ManagedLedgerConfig config = new ManagedLedgerConfig().setMaxEntriesPerLedger(2);
        ManagedLedger ml = broker("b1").open("sized", config);
        var cursor = ml.openCursor("c", org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition.Earliest);
        List<Position> p = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            p.add(ml.addEntry(new byte[1000]));
        }
        for (int i = 0; i < 3; i++) {
            p.add(ml.addEntry(new byte[10]));
        }
        cursor.markDelete(p.get(3));
        CompletableFuture<Void> trimmed = new CompletableFuture<>();
        ml.trimConsumedLedgersInBackground(trimmed);
        await(trimmed);
        assertThat(ml.getNumberOfEntries()).as("the 4 large ones are consumed, 2 segments").isEqualTo(3);

        assertThat(ml.getTotalSize()).isEqualTo(30);
        assertThat(ml.getEstimatedBacklogSize()).as("what the size backlog quota compares").isEqualTo(30);
        cursor.markDelete(p.get(4));
        assertThat(ml.getEstimatedBacklogSize()).isEqualTo(20);
        assertThat(ml.getEstimatedBacklogSize(p.get(5))).isEqualTo(10);
        assertThat(cursor.getEstimatedSizeSinceMarkDeletePosition()).isEqualTo(20);
    }

    @Test
    void trim_byALedgerAnotherBrokerFenced_isRefusedAndTrimsNothing() throws Exception {
        ManagedLedgerConfig config = new ManagedLedgerConfig().setMaxEntriesPerLedger(2);
        ManagedLedger first = broker("b1").open("fenced-trim", config);
        for (int i = 0; i < 5; i++) {
            first.addEntry(bytes("f" + i));
        }
        ManagedLedger second = broker("b2").open("fenced-trim", config);

        CompletableFuture<Void> trimmed = new CompletableFuture<>();
        first.trimConsumedLedgersInBackground(trimmed);

        assertThatThrownBy(() -> await(trimmed)).as("no cursor: all 5 count as consumed, yet b1 no longer writes")
                .hasCauseInstanceOf(ManagedLedgerException.ManagedLedgerFencedException.class);
        var head = await(engine.metadata.streams().head(((NereusManagedLedger) second).streamId())).orElseThrow();
        assertThat(head.trimOffset()).isZero();
        assertThat(second.getNumberOfEntries()).isEqualTo(5);
    }

    @Test
    void trim_withInfiniteRetention_keepsConsumedEntries() throws Exception {
        // both limits -1 (a size of 0 would let consumed data go whatever the time, as on stock Pulsar)
        ManagedLedgerConfig config = new ManagedLedgerConfig().setMaxEntriesPerLedger(1).setRetentionTime(-1,
                java.util.concurrent.TimeUnit.MINUTES).setRetentionSizeInMB(-1);
        ManagedLedger ml = broker("b1").open("retained", config);
        var cursor = ml.openCursor("c", org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition.Earliest);
        Position last = null;
        for (int i = 0; i < 3; i++) {
            last = ml.addEntry(bytes("k" + i));
        }
        cursor.markDelete(last);
        CompletableFuture<Void> trimmed = new CompletableFuture<>();
        ml.trimConsumedLedgersInBackground(trimmed);
        await(trimmed);
        assertThat(ml.getNumberOfEntries()).isEqualTo(3);
    }

    @Test
    void duplicateNonDurableCursor_copiesTheAcknowledgementsAndIsIndependent() throws Exception {
        ManagedLedger ml = broker("b1").open("duplicated");
        var cursor = ml.openCursor("c", org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition.Earliest);
        List<Position> p = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            p.add(ml.addEntry(bytes("d" + i)));
        }
        cursor.markDelete(p.get(0));
        cursor.delete(p.get(2));

        var copy = cursor.duplicateNonDurableCursor("copy");

        assertThat(copy.isDurable()).isFalse();
        assertThat(copy.getMarkDeletedPosition()).isEqualTo(p.get(0));
        assertThat(copy.isMessageDeleted(p.get(2))).isTrue();
        assertThat(copy.readEntries(10)).extracting(NereusManagedLedgerTest::text).containsExactly("d1", "d3", "d4");
        assertThat(ml.getCursors()).contains(copy);
        copy.markDelete(p.get(4));
        assertThat(cursor.getMarkDeletedPosition()).as("the original is untouched").isEqualTo(p.get(0));
        assertThat(cursor.getNumberOfEntriesInBacklog(true)).isEqualTo(3);
    }

    @Test
    void estimateUnloadedTopicBacklog_readsTheStoredHeadAndCursors() throws Exception {
        NereusManagedLedgerFactory f = broker("b1");
        var topic = org.apache.pulsar.common.naming.TopicName.get("persistent://tenant/ns/estimated");
        ManagedLedger ml = f.open(topic.getPersistenceNamingEncoding());
        var cursor = ml.openCursor("c", org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition.Earliest);
        Position first = ml.addEntry(bytes("e0"));
        ml.addEntry(bytes("e1"));
        ml.addEntry(bytes("e2"));
        cursor.markDelete(first);
        ml.close();

        var stats = new org.apache.pulsar.common.policies.data.PersistentOfflineTopicStats(topic.toString(), "b1");
        broker("b2").estimateUnloadedTopicBacklog(stats, topic, true, null);

        assertThat(stats.totalMessages).isEqualTo(3);
        assertThat(stats.storageSize).isEqualTo(6);
        assertThat(stats.messageBacklog).isEqualTo(2);
        assertThat(stats.cursorDetails).containsOnlyKeys("c");
        assertThat(stats.dataLedgerDetails).hasSize(1);
    }

    private static CompletableFuture<ManagedLedger> openAsync(NereusManagedLedgerFactory f, String name) {
        CompletableFuture<ManagedLedger> r = new CompletableFuture<>();
        f.asyncOpen(name, new ManagedLedgerConfig(), new AsyncCallbacks.OpenLedgerCallback() {
            @Override
            public void openLedgerComplete(ManagedLedger ledger, Object ctx) {
                r.complete(ledger);
            }

            @Override
            public void openLedgerFailed(ManagedLedgerException exception, Object ctx) {
                r.completeExceptionally(exception);
            }
        }, null, null);
        return r;
    }

    /**
     * An append (e2) handed to the stream after an earlier one (e1) failed there, but before the ledger delivered that
     * failure, fails too: the broker fences the topic only once it sees e1 fail and its producer then resends e1 and
     * everything after it, so e2 stored in between would precede e1. The WAL slice under the ledger is fenced by a
     * recovery open from another BookKeeper client (as a takeover does) so that e1's write fails; the ledger's
     * executor is held from right after e1's hand-off until e1 has failed, so that e2's hand-off comes after e1's
     * failure and before its delivery. Once both have completed, the ledger appends again right after what it
     * stored.
     */
    @Test
    void appendHandedOffAfterAnEarlierFailed_failsToo_soNoLaterAppendIsStoredAheadOfAnEarlierOne() throws Exception {
        String name = "failure-order";
        ManagedLedger ml = broker("b1").open(name, new ManagedLedgerConfig());
        Position first = ml.addEntry(bytes("e0"));
        NereusStream stream = await(storages.get("b1").openStream(name));
        long slice = await(engine.metadata.index().indexRecords(stream.id(), ReadView.COMMITTED)).stream()
                .map(r -> ((WalTarget) r.target()).sliceId()).findFirst().orElseThrow();
        TestLedgers.recover(BK.newClient(), slice, CONFIG.wal().password());
        long session = stream.writeSession();

        // both are added on the ledger's executor, with a hold queued between their hand-offs: e1's failure can only
        // be delivered after e2's hand-off, whatever this thread's scheduling (e1 added from here with the hold
        // queued afterwards could fail and be delivered first, and e2 would then rightly be stored: the broker would
        // have seen e1 fail before it added e2)
        var ledgerExecutor = executors.get("b1").chooseThread(name);
        CountDownLatch held = new CountDownLatch(1);
        CompletableFuture<List<CompletableFuture<Position>>> added = new CompletableFuture<>();
        ledgerExecutor.execute(() -> {
            CompletableFuture<Position> a1 = add(ml, "e1"); // its hand-off is queued behind this task
            ledgerExecutor.execute(() -> {
                try {
                    held.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            added.complete(List.of(a1, add(ml, "e2"))); // e2's hand-off waits behind the hold
        });
        CompletableFuture<Position> e1 = added.get(30, TimeUnit.SECONDS).get(0);
        CompletableFuture<Position> e2 = added.get().get(1);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> stream.writeSession() != session);
        held.countDown();

        assertThatThrownBy(() -> e1.get(30, TimeUnit.SECONDS), "e1, written to the fenced slice")
                .hasCauseInstanceOf(ManagedLedgerException.class);
        assertThatThrownBy(() -> e2.get(30, TimeUnit.SECONDS), "e2, handed off after e1 failed")
                .hasCauseInstanceOf(ManagedLedgerException.class);
        Position after = ml.addEntry(bytes("after"));
        assertThat(after.getEntryId()).isEqualTo(first.getEntryId() + 1);
        assertThat(text(readEntry(ml, after))).isEqualTo("after");
    }

    private static CompletableFuture<Position> add(ManagedLedger ml, String payload) {
        CompletableFuture<Position> f = new CompletableFuture<>();
        ml.asyncAddEntry(bytes(payload), new AsyncCallbacks.AddEntryCallback() {
            @Override
            public void addComplete(Position position, ByteBuf entryData, Object ctx) {
                f.complete(position);
            }

            @Override
            public void addFailed(ManagedLedgerException exception, Object ctx) {
                f.completeExceptionally(exception);
            }
        }, null);
        return f;
    }
}
