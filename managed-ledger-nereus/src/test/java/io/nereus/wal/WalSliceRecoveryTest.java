package io.nereus.wal;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readDensePayloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.apple.foundationdb.Database;
import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.SliceRegistration;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSlice;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalSliceStore;
import io.nereus.metadata.WalTarget;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.MutableClock;
import io.nereus.testing.TestLedgers;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Recovery of slices left OPEN, on a real in-process bookie: a writer that died (stopped without sealing, its
 * BookKeeper client closed), a restarted broker reusing its writer id, a writer paused longer than its lease, a
 * registered slice never written. The recovering instance runs on a clock the test moves; a writer that keeps
 * renewing its lease is never fenced. Afterwards every acknowledged offset is readable and nothing else is.
 */
class WalSliceRecoveryTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    /** Each 2 KiB append fills a batch at once; lease 30 s (renewed every 10 s, so not during these tests). */
    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(1024, Duration.ofMillis(1)).withRecovery(Duration.ofSeconds(30), Duration.ofHours(1));
    private static final StorageConfig STORAGE = StorageConfig.defaults().withWal(WAL);

    private EngineFixture engine;
    private MetadataStore metadata;
    private WalSliceStore slices;
    private final MutableClock clock = new MutableClock();
    private final List<ScheduledExecutorService> timers = new ArrayList<>();

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "slice-recovery");
        metadata = engine.metadata;
        slices = metadata.slices();
    }

    @AfterEach
    void tearDown() {
        engine.close();
        timers.forEach(ScheduledExecutorService::shutdownNow);
    }

    /**
     * Broker a's BookKeeper client goes with it. Closing it fails the adds still outstanding, and BookKeeper 4.17.2's
     * close can throw a NullPointerException while it does ({@code CompletionValue.errorOutAndRunCallback}: the
     * completion's channel client is already gone; seen once in a full test run): the client is gone either way.
     */
    private static void closeAsACrash(BookKeeper bk) throws Exception {
        try {
            bk.close();
        } catch (NullPointerException e) {
            // BookKeeper's own race on close, not the behaviour under test
        }
    }

    @Test
    void deadWriter_itsOpenSliceIsFencedAndSealedOnceItsLeaseExpired_everyCommittedOffsetStaysReadable() throws Exception {
        BookKeeper bkA = BK.newClient();
        WalWriter a = writer("broker-a", bkA, engine.metadata);
        Streams written = appendToThreeStreams(a, "broker-a", 4);
        long slice = onlyOpenSlice();
        long incarnation = await(slices.slice(slice)).orElseThrow().incarnation();
        a.halt();
        closeAsACrash(bkA);

        StreamStorage b = engine.storage("broker-b", STORAGE, clock);
        assertThat(await(b.recoverAbandonedSlices()).sealed()).as("the lease was just seen: not expired yet").isEmpty();
        assertThat(await(slices.slice(slice)).map(WalSlice::state)).contains(WalSliceState.OPEN);
        clock.advance(WAL.writerLease());
        WalSliceRecovery.Report report = await(b.recoverAbandonedSlices());
        assertThat(report.sealed()).containsExactly(slice);
        assertThat(report.expiredLeases()).containsExactly(incarnation);

        assertThat(await(slices.slice(slice))).contains(new WalSlice(WalSliceState.SEALED, "broker-a", incarnation));
        assertThat(await(slices.lease(incarnation))).isEmpty();
        assertThat(await(slices.ranges(slice))).isEqualTo(written.ranges());
        ReadHandle recovered = TestLedgers.openToRead(engine.bk, slice, WAL.password());
        assertThat(recovered.isClosed()).isTrue();
        assertThat(recovered.getLastAddConfirmed()).as("every committed batch is in the closed ledger")
                .isGreaterThanOrEqualTo(lastEntry(written));
        recovered.close();
        assertReadable(b, written);

        NereusStream x = await(b.openStream("x"));
        await(x.acquireWriter());
        assertThat(await(x.append(List.of(AppendEntry.of(bytes("x-by-b")))))).isEqualTo(OffsetRange.single(4));
        assertThat(await(b.recoverAbandonedSlices()).sealed()).as("b's own slice is left alone").isEmpty();
    }

    @Test
    void restartedBrokerReusingItsWriterId_recoversTheSliceItsPreviousProcessLeftOpen() {
        BookKeeper bkA = BK.newClient();
        WalWriter before = writer("broker-a", bkA, engine.metadata);
        Streams written = appendToThreeStreams(before, "broker-a", 3);
        long slice = onlyOpenSlice();
        before.halt();

        StreamStorage after = engine.storage("broker-a", STORAGE, clock);
        await(after.recoverAbandonedSlices());
        clock.advance(WAL.writerLease());
        assertThat(await(after.recoverAbandonedSlices()).sealed()).containsExactly(slice);
        assertThat(await(slices.slice(slice)).map(WalSlice::state)).contains(WalSliceState.SEALED);
        assertReadable(after, written);

        NereusStream y = await(after.openStream("y"));
        await(y.acquireWriter());
        assertThat(await(y.append(List.of(AppendEntry.of(bytes("y-again")))))).isEqualTo(OffsetRange.single(3));
        assertThat(sliceOf(y.id(), 3)).as("the new process writes a new slice").isNotEqualTo(slice);
    }

    @Test
    void liveWriter_thatKeepsRenewingItsLease_isNeverFenced() throws Exception {
        WalConfig shortLease = WAL.withRecovery(Duration.ofMillis(300), Duration.ofHours(1));
        StreamStorage a = engine.storage("broker-a", StorageConfig.defaults().withWal(shortLease));
        NereusStream x = await(a.openStream("x"));
        await(x.acquireWriter());
        await(x.append(List.of(AppendEntry.of(bytes("x-0")))));
        long slice = onlyOpenSlice();
        long incarnation = await(slices.slice(slice)).orElseThrow().incarnation();

        StreamStorage b = engine.storage("broker-b", STORAGE, clock);
        for (int round = 0; round < 3; round++) {
            assertThat(await(b.recoverAbandonedSlices()).sealed()).isEmpty();
            long seen = beat(incarnation);
            await().atMost(Duration.ofSeconds(20)).until(() -> beat(incarnation) > seen);
            // far more than the lease passes on b's clock, but a renewed the lease in between
            clock.advance(Duration.ofSeconds(10));
        }
        assertThat(await(b.recoverAbandonedSlices()).sealed()).isEmpty();
        assertThat(await(slices.slice(slice)).map(WalSlice::state)).contains(WalSliceState.OPEN);
        assertThat(await(x.append(List.of(AppendEntry.of(bytes("x-1")))))).isEqualTo(OffsetRange.single(1));
        assertThat(sliceOf(x.id(), 1)).as("still writing the same, unfenced slice").isEqualTo(slice);
    }

    @Test
    void writerPausedLongerThanItsLease_isFenced_losesNothingAcknowledged_andGoesOnInANewSlice() {
        WalWriter a = writer("broker-a", BK.newClient(), engine.metadata);
        StreamId x = await(metadata.catalog().openStream("x")).streamId();
        long epoch = await(metadata.streams().acquireWriter(x, "broker-a")).writerEpoch();
        List<byte[]> acked = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            acked.add(filled(2048, 'a' + i));
            await(a.append(x, epoch, i, List.of(new AppendEntry(acked.get(i), 1)), () -> true));
        }
        long slice = onlyOpenSlice();
        long incarnation = await(slices.slice(slice)).orElseThrow().incarnation();

        StreamStorage b = engine.storage("broker-b", STORAGE, clock);
        await(b.recoverAbandonedSlices());
        clock.advance(WAL.writerLease());
        assertThat(await(b.recoverAbandonedSlices()).sealed()).as("a has not renewed for a whole lease")
                .containsExactly(slice);

        // a goes on: its writes to the fenced slice fail retriably until it is in a new slice, under a new lease
        byte[] next = filled(2048, 'z');
        StreamHead head = null;
        for (int attempt = 0; attempt < 3 && head == null; attempt++) {
            CompletableFuture<StreamHead> f = a.append(x, epoch, 2, List.of(new AppendEntry(next, 1)), () -> true);
            Throwable error = await(f.handle((h, t) -> t));
            if (error == null) {
                head = f.join();
            } else {
                assertThat(Failures.unwrap(error)).isInstanceOfSatisfying(NereusException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_WRITE_FAILED));
            }
        }
        assertThat(head).as("appended within three attempts").isNotNull();
        assertThat(head.committedEnd()).isEqualTo(3);
        acked.add(next);
        long newSlice = sliceOf(x, 2);
        assertThat(newSlice).isNotEqualTo(slice);
        WalSlice now = await(slices.slice(newSlice)).orElseThrow();
        assertThat(now.state()).isEqualTo(WalSliceState.OPEN);
        assertThat(now.incarnation()).as("a new lease").isNotEqualTo(incarnation);
        assertThat(await(slices.ranges(slice))).as("the sealed slice's ranges are final")
                .containsExactly(Map.entry(x, OffsetRange.of(0, 2)));
        assertThat(readDensePayloads(await(b.openStream("x")))).containsExactly(acked.toArray(new byte[0][]));
        await(a.closeAsync());
    }

    @Test
    void batchAcknowledgedByBookKeeperBeforeTheFence_isNotCommittedAfterTheSeal() {
        AtomicReference<CompletableFuture<Void>> entered = new AtomicReference<>();
        CompletableFuture<Void> gate = new CompletableFuture<>();
        MetadataStore gatedMetadata = await(MetadataStore.open(holdingNextWrite(engine.fdb, entered, gate),
                metadata.keyspace(), engine.fdb.getExecutor()));
        // the writer's commits go through the gated store; its lease and slice records do not
        WalWriter a = new WalWriter(BK.newClient(), gatedMetadata.streams(), slices, WAL, "broker-a", timers(),
                Clock.systemUTC(), WalObserver.NONE);
        StreamId x = await(metadata.catalog().openStream("x")).streamId();
        long epoch = await(metadata.streams().acquireWriter(x, "broker-a")).writerEpoch();
        CompletableFuture<Void> held = new CompletableFuture<>();
        entered.set(held);
        CompletableFuture<StreamHead> append = a.append(x, epoch, 0, List.of(new AppendEntry(filled(2048, 'q'), 1)),
                () -> true);
        await(held);
        long slice = onlyOpenSlice();

        StreamStorage b = engine.storage("broker-b", STORAGE, clock);
        await(b.recoverAbandonedSlices());
        clock.advance(WAL.writerLease());
        assertThat(await(b.recoverAbandonedSlices()).sealed()).containsExactly(slice);
        gate.complete(null);

        Throwable error = await(append.handle((h, t) -> t));
        assertThat(Failures.unwrap(error)).isInstanceOfSatisfying(NereusException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_COMMIT_FAILED);
            assertThat(e.context()).containsEntry("stream", x).containsEntry("slice", slice)
                    .containsEntry("sliceState", "SEALED");
        });
        assertThat(await(metadata.streams().head(x)).orElseThrow().committedEnd()).isZero();
        assertThat(await(slices.ranges(slice))).isEmpty();
        assertThat(readDensePayloads(await(b.openStream("x")))).isEmpty();
        await(a.closeAsync());
    }

    @Test
    void sliceWhoseLastEntryIsTornOnItsBookie_isSalvaged_closedAtItsLastCommittedEntry_everyCommittedOffsetReadable()
            throws Exception {
        BookKeeper bkA = BK.newClient();
        WalWriter a = writer("broker-a", bkA, engine.metadata);
        Streams written = appendToThreeStreams(a, "broker-a", 4);
        long slice = onlyOpenSlice();
        long last = lastEntry(written);
        a.halt();
        closeAsACrash(bkA);
        // the batch being added when the bookie holding it was killed: torn, so never acknowledged nor committed
        TestLedgers.addTornEntry(BK.newClient(), slice, WAL.password(), last + 1, filled(4096, 't'));
        assertThatThrownBy(() -> TestLedgers.openToRead(engine.bk, slice, WAL.password()))
                .as("no bookie answers validly for the last entry, so the ledger does not even open to read")
                .isInstanceOf(BKException.class);

        StreamStorage b = engine.storage("broker-b", STORAGE, clock);
        await(b.recoverAbandonedSlices());
        clock.advance(WAL.writerLease());
        assertThat(await(b.recoverAbandonedSlices()).sealed()).containsExactly(slice);

        assertThat(await(slices.slice(slice)).map(WalSlice::state)).contains(WalSliceState.SEALED);
        ReadHandle salvaged = TestLedgers.openToRead(engine.bk, slice, WAL.password());
        assertThat(salvaged.isClosed()).isTrue();
        assertThat(salvaged.getLastAddConfirmed()).as("closed at the last committed entry, before the torn one")
                .isEqualTo(last);
        salvaged.close();
        assertReadable(b, written);
        NereusStream x = await(b.openStream("x"));
        await(x.acquireWriter());
        assertThat(await(x.append(List.of(AppendEntry.of(bytes("x-after")))))).isEqualTo(OffsetRange.single(4));
    }

    @Test
    void salvagedSliceSealedButLeftUnclosedByACrash_isClosedByTheFirstRecoveryRunAfterStart() throws Exception {
        BookKeeper bkA = BK.newClient();
        WalWriter a = writer("broker-a", bkA, engine.metadata);
        Streams written = appendToThreeStreams(a, "broker-a", 2);
        long slice = onlyOpenSlice();
        long last = lastEntry(written);
        a.halt();
        closeAsACrash(bkA);
        TestLedgers.addTornEntry(BK.newClient(), slice, WAL.password(), last + 1, filled(4096, 't'));
        // a salvage that sealed the slice, then crashed before it closed the ledger
        await(slices.seal(slice));

        StreamStorage b = engine.storage("broker-b", STORAGE, clock);
        await(b.recoverAbandonedSlices());
        ReadHandle salvaged = TestLedgers.openToRead(engine.bk, slice, WAL.password());
        assertThat(salvaged.isClosed()).isTrue();
        assertThat(salvaged.getLastAddConfirmed()).isEqualTo(last);
        salvaged.close();
        assertReadable(b, written);
    }

    @Test
    void sliceRegisteredButNeverWritten_andLeaseWithoutSlices_ofGoneWriters_areSealedAndRemoved() throws Exception {
        long ghost = await(slices.takeLease("ghost", WAL.writerLease()));
        long idle = await(slices.takeLease("idle", WAL.writerLease()));
        WriteHandle lh = TestLedgers.create(BK.newClient(), WAL.password());
        assertThat(await(slices.register(lh.getId(), "ghost", ghost))).isInstanceOf(SliceRegistration.Registered.class);

        StreamStorage b = engine.storage("broker-b", STORAGE, clock);
        await(b.recoverAbandonedSlices());
        clock.advance(WAL.writerLease());
        WalSliceRecovery.Report report = await(b.recoverAbandonedSlices());
        assertThat(report.sealed()).containsExactly(lh.getId());
        assertThat(report.expiredLeases()).containsExactlyInAnyOrder(ghost, idle);
        assertThat(await(slices.slice(lh.getId())).map(WalSlice::state)).contains(WalSliceState.SEALED);
        assertThat(await(slices.ranges(lh.getId()))).isEmpty();
        ReadHandle closed = TestLedgers.openToRead(engine.bk, lh.getId(), WAL.password());
        assertThat(closed.isClosed()).isTrue();
        assertThat(closed.getLastAddConfirmed()).isEqualTo(-1);
        closed.close();
    }

    /** What {@link #appendToThreeStreams} wrote: payloads per stream name, ranges per stream in the slice. */
    private record Streams(Map<String, List<byte[]>> payloads, SortedMap<StreamId, OffsetRange> ranges,
            List<StreamId> ids) {
    }

    /** {@code n} acknowledged 2 KiB appends to each of x, y and z, round robin, through {@code w}. */
    private Streams appendToThreeStreams(WalWriter w, String writerId, int n) {
        Map<String, List<byte[]>> payloads = new java.util.LinkedHashMap<>();
        SortedMap<StreamId, OffsetRange> ranges = new java.util.TreeMap<>();
        List<StreamId> ids = new ArrayList<>();
        List<Long> epochs = new ArrayList<>();
        for (String name : List.of("x", "y", "z")) {
            StreamId id = await(metadata.catalog().openStream(name)).streamId();
            ids.add(id);
            epochs.add(await(metadata.streams().acquireWriter(id, writerId)).writerEpoch());
            payloads.put(name, new ArrayList<>());
            ranges.put(id, OffsetRange.of(0, n));
        }
        List<CompletableFuture<StreamHead>> acks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            for (int s = 0; s < 3; s++) {
                byte[] p = filled(2048, 'a' + 3 * i + s);
                payloads.get(List.of("x", "y", "z").get(s)).add(p);
                acks.add(w.append(ids.get(s), epochs.get(s), i, List.of(new AppendEntry(p, 1)), () -> true));
            }
        }
        acks.forEach(f -> await(f));
        return new Streams(payloads, ranges, ids);
    }

    private void assertReadable(StreamStorage reader, Streams written) {
        for (Map.Entry<String, List<byte[]>> e : written.payloads().entrySet()) {
            assertThat(readDensePayloads(await(reader.openStream(e.getKey())))).as("stream %s", e.getKey())
                    .containsExactly(e.getValue().toArray(new byte[0][]));
        }
    }

    private long lastEntry(Streams written) {
        long last = -1;
        for (StreamId id : written.ids()) {
            for (IndexRecord r : await(metadata.index().indexRecords(id, ReadView.COMMITTED))) {
                last = Math.max(last, ((WalTarget) r.target()).entryId());
            }
        }
        return last;
    }

    private long onlyOpenSlice() {
        SortedMap<Long, WalSlice> open = await(slices.slices(WalSliceState.OPEN, 0, 10));
        assertThat(open).hasSize(1);
        return open.firstKey();
    }

    private long sliceOf(StreamId stream, long offset) {
        return await(metadata.index().indexRecords(stream, ReadView.COMMITTED)).stream()
                .filter(r -> r.range().contains(offset)).map(r -> ((WalTarget) r.target()).sliceId())
                .findFirst().orElseThrow();
    }

    private long beat(long incarnation) {
        return await(slices.lease(incarnation)).orElseThrow().beat();
    }

    private WalWriter writer(String writerId, BookKeeper bk, MetadataStore store) {
        return new WalWriter(bk, store.streams(), store.slices(), WAL, writerId, timers(), Clock.systemUTC(),
                WalObserver.NONE);
    }

    private ScheduledExecutorService timers() {
        ScheduledExecutorService t = Executors.newSingleThreadScheduledExecutor();
        timers.add(t);
        return t;
    }

    /**
     * {@code db} whose first write transaction ({@code runAsync} of a function) after {@code entered} is set
     * completes that future and waits for {@code gate}.
     */
    private static Database holdingNextWrite(Database db, AtomicReference<CompletableFuture<Void>> entered,
            CompletableFuture<Void> gate) {
        InvocationHandler handler = (proxy, method, args) -> {
            boolean write = method.getName().equals("runAsync") && args != null && args[0] instanceof Function;
            CompletableFuture<Void> hold = write ? entered.getAndSet(null) : null;
            if (hold == null) {
                return invoke(db, method, args);
            }
            hold.complete(null);
            return gate.thenCompose(ignored -> {
                try {
                    return (CompletableFuture<?>) invoke(db, method, args);
                } catch (Throwable t) {
                    return CompletableFuture.failedFuture(t);
                }
            });
        };
        return (Database) Proxy.newProxyInstance(Database.class.getClassLoader(), new Class<?>[] {Database.class},
                handler);
    }

    private static Object invoke(Database db, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(db, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static byte[] filled(int size, int c) {
        byte[] b = new byte[size];
        java.util.Arrays.fill(b, (byte) c);
        return b;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
