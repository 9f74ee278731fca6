package io.nereus.wal;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readDensePayloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.AppendOutcome;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.NereusKeyspace;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSectionRef;
import io.nereus.object.ObjectStore;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.bookkeeper.client.BookKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Commit coalescing on a real in-process bookie. The writer's metadata goes through a {@link Database} that
 * can hold one transaction: the commit of batch 1 is held until batches 2..4 are acknowledged by BookKeeper,
 * so the next commit deterministically takes batches 2..4 together.
 */
class WalCommitCoalescingTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    /**
     * A batch is sealed once it reaches 1 KiB; the delay is long and the idle cut off, so the test decides what
     * shares a batch.
     */
    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(1024, Duration.ofSeconds(20)).withCoalescing(8, 4096).withFlushWhenIdle(false);
    private static final Subspace ROOT = new Subspace(Tuple.from("nereus", "coalesce"));

    private EmbeddedFdb fdb;
    private final AtomicInteger transactions = new AtomicInteger();
    private final AtomicReference<CompletableFuture<Void>> entered = new AtomicReference<>();
    private final CompletableFuture<Void> gate = new CompletableFuture<>();
    private MetadataStore writerMetadata;
    private MetadataStore metadata;
    private BookKeeper bk;
    private ScheduledExecutorService scheduler;
    private WalWriter writer;
    private StreamStorage readers;
    private ObjectStore objects;

    @BeforeEach
    void setUp() {
        fdb = EmbeddedFdb.inMemory();
        writerMetadata = await(MetadataStore.open(gated(fdb), new NereusKeyspace(ROOT), fdb.getExecutor()));
        metadata = await(MetadataStore.open(fdb, new NereusKeyspace(ROOT), fdb.getExecutor()));
        bk = BK.newClient();
        scheduler = Executors.newSingleThreadScheduledExecutor();
        writer = new WalWriter(bk, writerMetadata.streams(), metadata.slices(), WAL, "broker-a", scheduler,
                Clock.systemUTC(), WalObserver.NONE);
        objects = EngineFixture.temporaryObjectStore();
        readers = StreamStorage.create(StorageConfig.defaults().withWal(WAL), bk, metadata, objects, "reader",
                Clock.systemUTC(), WalObserver.NONE);
    }

    @AfterEach
    void tearDown() {
        gate.complete(null);
        writer.close();
        readers.close();
        objects.close();
        scheduler.shutdownNow();
        fdb.close();
    }

    @Test
    void commitHeldWhileLaterBatchesAreAcknowledged_oneTransactionCommitsThemAll() {
        Streams s = fourBatchesBehindAHeldCommit();
        gate.complete(null);

        assertThat(s.x.stream().map(f -> await(f).committedEnd())).containsExactly(1L, 2L, 3L, 4L);
        assertThat(s.y.stream().map(f -> await(f).committedEnd())).containsExactly(1L, 2L, 3L);
        assertThat(transactions.get() - s.transactionsBefore).as("batch 1 alone, then batches 2..4 in one transaction")
                .isEqualTo(2);
        assertThat(entryIds(s.xId)).containsExactly(0L, 1L, 2L, 3L);
        assertThat(entryIds(s.yId)).containsExactly(0L, 1L, 3L);
        assertThat(await(metadata.streams().head(s.xId)).orElseThrow().commitVersion()).isEqualTo(4);
        assertThat(readAll("x")).containsExactly(s.xPayloads.toArray(new byte[0][]));
        assertThat(readAll("y")).containsExactly(s.yPayloads.toArray(new byte[0][]));
    }

    @Test
    void streamRefusedInCoalescedCommit_allItsAppendsFail_othersCommit() {
        Streams s = fourBatchesBehindAHeldCommit();
        await(metadata.streams().acquireWriter(s.yId, "broker-b"));
        gate.complete(null);

        assertThat(s.x.stream().map(f -> await(f).committedEnd())).containsExactly(1L, 2L, 3L, 4L);
        for (CompletableFuture<StreamHead> f : s.y) {
            assertThatThrownBy(() -> await(f)).isInstanceOfSatisfying(NereusException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.FENCED);
                assertThat(e.context()).containsEntry("stream", s.yId)
                        .hasEntrySatisfying("outcome", o -> assertThat(o).isInstanceOf(AppendOutcome.Fenced.class));
            });
        }
        assertThat(transactions.get() - s.transactionsBefore).as("each commit refused once for y, then recommitted without it")
                .isEqualTo(4);
        assertThat(entryIds(s.xId)).containsExactly(0L, 1L, 2L, 3L);
        assertThat(await(metadata.streams().head(s.yId)).orElseThrow().committedEnd()).isZero();
        assertThat(readAll("x")).containsExactly(s.xPayloads.toArray(new byte[0][]));
        assertThat(readAll("y")).isEmpty();
    }

    /**
     * Group commit with the idle cut on and one batch at a time ({@code flushBelowBatches} 1), a 20 s flush delay
     * that never fires here: the first append finds the WAL idle and is written at once; the appends arriving while
     * its commit is held share one batch, written the moment that commit finishes.
     */
    @Test
    void groupCommit_anIdleWalWritesAtOnce_aBusyOneCollectsUntilItDrains() {
        WalWriter grouping = new WalWriter(bk, writerMetadata.streams(), metadata.slices(),
                WAL.withFlush(1 << 20, Duration.ofSeconds(20)).withFlushWhenIdle(true).withFlushBelowBatches(1),
                "broker-g", scheduler,
                Clock.systemUTC(), WalObserver.NONE);
        try {
            StreamId xId = await(metadata.catalog().openStream("gx")).streamId();
            StreamId yId = await(metadata.catalog().openStream("gy")).streamId();
            long ex = await(metadata.streams().acquireWriter(xId, "broker-g")).writerEpoch();
            long ey = await(metadata.streams().acquireWriter(yId, "broker-g")).writerEpoch();
            // the first batch also waits for the slice: let its creation and registration pass ungated
            await(grouping.append(xId, ex, 0, List.of(new AppendEntry(filled(10, 'a'), 1)), () -> true));
            int before = transactions.get();
            CompletableFuture<Void> held = new CompletableFuture<>();
            entered.set(held);
            CompletableFuture<StreamHead> first = grouping.append(xId, ex, 1,
                    List.of(new AppendEntry(filled(10, 'b'), 1)), () -> true);
            await(held); // its commit started, so it was written without waiting for the flush delay
            List<CompletableFuture<StreamHead>> during = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                during.add(grouping.append(xId, ex, 2 + i, List.of(new AppendEntry(filled(10, 'c'), 1)), () -> true));
                during.add(grouping.append(yId, ey, i, List.of(new AppendEntry(filled(10, 'd'), 1)), () -> true));
            }
            assertThat(first).isNotDone();
            assertThat(during).noneMatch(CompletableFuture::isDone);
            gate.complete(null);

            assertThat(await(first).committedEnd()).isEqualTo(2);
            // one batch, one section per stream: each append completes with its stream's head after that batch
            assertThat(during.stream().map(f -> await(f).committedEnd())).containsExactly(5L, 3L, 5L, 3L, 5L, 3L);
            assertThat(transactions.get() - before).as("the held commit, then one for the batch collected meanwhile")
                    .isEqualTo(2);
            List<WalSectionRef> xs = sections(xId);
            List<WalSectionRef> ys = sections(yId);
            long collected = xs.get(2).entryId();
            assertThat(xs.stream().map(WalSectionRef::entryId)).containsExactly(collected - 2, collected - 1, collected);
            assertThat(ys).singleElement().satisfies(r -> assertThat(r.entryId()).isEqualTo(collected));
        } finally {
            grouping.close();
        }
    }

    /**
     * With batches allowed to overlap ({@code flushBelowBatches} 3, the default) they still do not while a commit
     * runs: the appends arriving while the first batch's commit is held collect in one batch, as with one batch at a
     * time (overlapping while they wait for BookKeeper: {@code WalBatchOverlapTest}).
     */
    @Test
    void groupCommit_batchesDoNotOverlapWhileACommitRuns() throws InterruptedException {
        WalWriter grouping = new WalWriter(bk, writerMetadata.streams(), metadata.slices(),
                WAL.withFlush(1 << 20, Duration.ofSeconds(20)).withFlushWhenIdle(true).withFlushBelowBatches(3),
                "broker-o", scheduler, Clock.systemUTC(), WalObserver.NONE);
        try {
            StreamId xId = await(metadata.catalog().openStream("ox")).streamId();
            StreamId yId = await(metadata.catalog().openStream("oy")).streamId();
            long ex = await(metadata.streams().acquireWriter(xId, "broker-o")).writerEpoch();
            long ey = await(metadata.streams().acquireWriter(yId, "broker-o")).writerEpoch();
            await(grouping.append(xId, ex, 0, List.of(new AppendEntry(filled(10, 'a'), 1)), () -> true));
            CompletableFuture<Void> held = new CompletableFuture<>();
            entered.set(held);
            CompletableFuture<StreamHead> first = grouping.append(xId, ex, 1,
                    List.of(new AppendEntry(filled(10, 'b'), 1)), () -> true);
            await(held);
            List<CompletableFuture<StreamHead>> during = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                // apart, so that each append's batch has started (and could have been cut) before the next comes
                during.add(grouping.append(xId, ex, 2 + i, List.of(new AppendEntry(filled(10, 'c'), 1)), () -> true));
                Thread.sleep(50);
                during.add(grouping.append(yId, ey, i, List.of(new AppendEntry(filled(10, 'd'), 1)), () -> true));
                Thread.sleep(50);
            }
            assertThat(during).noneMatch(CompletableFuture::isDone);
            gate.complete(null);

            assertThat(await(first).committedEnd()).isEqualTo(2);
            assertThat(during.stream().map(f -> await(f).committedEnd())).containsExactly(5L, 3L, 5L, 3L, 5L, 3L);
            List<WalSectionRef> xs = sections(xId);
            long collected = xs.get(2).entryId();
            assertThat(xs.stream().map(WalSectionRef::entryId)).containsExactly(collected - 2, collected - 1, collected);
            assertThat(sections(yId)).singleElement().satisfies(r -> assertThat(r.entryId()).isEqualTo(collected));
        } finally {
            grouping.close();
        }
    }

    private record Streams(StreamId xId, StreamId yId, List<CompletableFuture<StreamHead>> x,
            List<CompletableFuture<StreamHead>> y, List<byte[]> xPayloads, List<byte[]> yPayloads,
            int transactionsBefore) {
    }

    /**
     * Batches 1..4: {x0, y0}, {x1, y1}, {x2}, {x3, y2} (y's small append stays open, x's 2 KiB one seals the
     * batch). The commit of batch 1 is held; returns once batches 2..4 are acknowledged by BookKeeper.
     */
    private Streams fourBatchesBehindAHeldCommit() {
        StreamId xId = await(metadata.catalog().openStream("x")).streamId();
        StreamId yId = await(metadata.catalog().openStream("y")).streamId();
        long ex = await(metadata.streams().acquireWriter(xId, "broker-a")).writerEpoch();
        long ey = await(metadata.streams().acquireWriter(yId, "broker-a")).writerEpoch();
        int transactionsBefore = transactions.get();
        CompletableFuture<Void> held = new CompletableFuture<>();
        entered.set(held);
        List<CompletableFuture<StreamHead>> x = new ArrayList<>();
        List<CompletableFuture<StreamHead>> y = new ArrayList<>();
        List<byte[]> xPayloads = new ArrayList<>();
        List<byte[]> yPayloads = new ArrayList<>();
        for (int batch = 0; batch < 4; batch++) {
            if (batch != 2) {
                byte[] p = filled(100, (char) ('a' + batch));
                yPayloads.add(p);
                y.add(writer.append(yId, ey, y.size(), List.of(new AppendEntry(p, 1)), () -> true));
            }
            byte[] p = filled(2048, (char) ('A' + batch));
            xPayloads.add(p);
            x.add(writer.append(xId, ex, batch, List.of(new AppendEntry(p, 1)), () -> true));
            if (batch == 0) {
                await(held);
            }
        }
        await(writer.written());
        assertThat(x).as("nothing completes while batch 1's commit is held").noneMatch(CompletableFuture::isDone);
        assertThat(y).noneMatch(CompletableFuture::isDone);
        return new Streams(xId, yId, x, y, xPayloads, yPayloads, transactionsBefore);
    }

    /** The WAL sections the stream's generation-0 records list, in offset order (a run lists several). */
    private List<WalSectionRef> sections(StreamId stream) {
        return await(metadata.index().indexRecords(stream, ReadView.COMMITTED)).stream()
                .flatMap(r -> r.walSections().stream()).toList();
    }

    private List<Long> entryIds(StreamId stream) {
        List<WalSectionRef> sections = sections(stream);
        assertThat(sections.stream().map(WalSectionRef::sliceId).distinct()).hasSize(1);
        return sections.stream().map(WalSectionRef::entryId).toList();
    }

    /** Every stored payload from offset 0, checking that offsets are dense single-record entries. */
    private List<byte[]> readAll(String name) {
        return readDensePayloads(await(readers.openStream(name)));
    }

    /**
     * {@code db} with its write transactions ({@code runAsync} of a function) counted; the first one after
     * {@link #entered} is set completes that future and waits for {@link #gate}.
     */
    private Database gated(Database db) {
        InvocationHandler handler = (proxy, method, args) -> {
            boolean write = method.getName().equals("runAsync") && args != null && args[0] instanceof Function;
            if (!write) {
                return invoke(db, method, args);
            }
            transactions.incrementAndGet();
            CompletableFuture<Void> hold = entered.getAndSet(null);
            if (hold == null) {
                return invoke(db, method, args);
            }
            hold.complete(null);
            return gate.thenCompose(ignored -> (CompletableFuture<?>) invoke(db, method, args));
        };
        return (Database) Proxy.newProxyInstance(Database.class.getClassLoader(), new Class<?>[] {Database.class},
                handler);
    }

    private static Object invoke(Database db, Method method, Object[] args) {
        try {
            return method.invoke(db, args);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] filled(int size, char c) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) c);
        return b;
    }

}
