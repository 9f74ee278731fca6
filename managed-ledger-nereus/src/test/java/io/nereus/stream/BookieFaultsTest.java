package io.nereus.stream;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readDensePayloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.WalTarget;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.MultiBookieCluster;
import io.nereus.wal.WalConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.net.BookieId;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bookie failures under the WAL, on real in-process bookies: slices are written with ensemble 3, write quorum 2 and
 * ack quorum 2. The cluster has a fourth bookie: BookKeeper can only replace a failed bookie of an ensemble with one
 * outside it, so with exactly three bookies a dead one stops every write until it returns (as when all are gone).
 * Afterwards each test reads every stream from storage instances that never wrote it (no tail cache): offsets dense
 * from 0 and the content exactly the acknowledged payloads, in order.
 */
class BookieFaultsTest {
    @RegisterExtension
    static final MultiBookieCluster BK = new MultiBookieCluster(4);

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(3, 2, 2)
            .withFlush(16 * 1024, Duration.ofMillis(1));
    private static final StorageConfig STORAGE = StorageConfig.defaults().withWal(WAL);

    private EngineFixture engine;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "bookie-faults");
    }

    @AfterEach
    void tearDown() throws Exception {
        BK.startAll(); // the storage instances seal their slices on close
        engine.close();
    }

    /**
     * A bookie of the open slice's ensemble stops while appends to three streams are in flight: every append is
     * acknowledged at its dense offset (BookKeeper replaces the bookie in the slice's ensemble; no append fails),
     * every stream reads back exactly while the bookie is down, again after it returned, and again with the bookie
     * that shared the first entries with it down (so those are read from the returned bookie's copies).
     */
    @Test
    void ensembleBookieStopsUnderLoad_everyAppendAcknowledged_allReadableWhileDownAndAfterItReturns() throws Exception {
        StreamStorage storage = engine.storage("broker-a", STORAGE);
        List<NereusStream> streams = new ArrayList<>();
        List<List<byte[]>> written = new ArrayList<>();
        for (int s = 0; s < 3; s++) {
            NereusStream stream = await(storage.openStream("load-" + s));
            await(stream.acquireWriter());
            streams.add(stream);
            written.add(new ArrayList<>());
        }
        awaitAll(appendRound(streams, written, 50));
        long slice = sliceOf(streams.get(0), 0);
        LedgerMetadata before = await(engine.bk.getLedgerMetadata(slice));
        assertThat(before.getEnsembleSize()).isEqualTo(3);
        assertThat(before.getWriteQuorumSize()).isEqualTo(2);
        assertThat(before.getAckQuorumSize()).isEqualTo(2);
        int victim = BK.indexOf(before.getAllEnsembles().get(0L).get(0));

        List<CompletableFuture<OffsetRange>> inFlight = appendRound(streams, written, 50);
        BK.stop(victim);
        inFlight.addAll(appendRound(streams, written, 50));
        awaitAll(inFlight);

        assertThat(sliceOf(streams.get(0), 149)).as("the slice was not broken: its ensemble changed").isEqualTo(slice);
        LedgerMetadata after = await(engine.bk.getLedgerMetadata(slice));
        List<BookieId> lastEnsemble = after.getAllEnsembles().lastEntry().getValue();
        assertThat(lastEnsemble).hasSize(3).doesNotContain(BK.bookieId(victim));
        assertStreams(engine.storage("reader-while-down", STORAGE), streams, written);

        BK.start(victim);
        assertStreams(engine.storage("reader-after-return", STORAGE), streams, written);
        // the restarted bookie kept its copies: with the bookie that shared entries with it down, they read from it
        BK.stop(BK.indexOf(before.getAllEnsembles().get(0L).get(1)));
        assertStreams(engine.storage("reader-from-the-returned-bookie", STORAGE), streams, written);
    }

    /**
     * Every bookie stops. Appends fail with a retriable NereusException naming their stream, RETRIABLE_WRITE_FAILED
     * (the WAL write or the creation of a new slice failed: BookKeeper finds not enough bookies) or, for an append
     * already handed to the WAL behind a failed one of its stream, RETRIABLE_ABANDONED; none is acknowledged and the
     * heads stay where they were. Once the bookies are back, appends are acknowledged again at the streams' committed
     * ends without restarting anything, and the streams hold exactly the acknowledged payloads.
     */
    @Test
    void everyBookieStops_appendsFailRetriably_noneAcknowledged_afterTheyReturnAppendsResume() throws Exception {
        StreamStorage storage = engine.storage("broker-a", STORAGE);
        NereusStream x = await(storage.openStream("x"));
        NereusStream y = await(storage.openStream("y"));
        await(x.acquireWriter());
        await(y.acquireWriter());
        List<NereusStream> streams = List.of(x, y);
        List<List<byte[]>> written = List.of(new ArrayList<>(), new ArrayList<>());
        awaitAll(appendRound(streams, written, 20));

        for (int i = 0; i < BK.size(); i++) {
            BK.stop(i);
        }
        List<CompletableFuture<OffsetRange>> refused = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            refused.add(x.append(List.of(AppendEntry.of(payload("x-refused-" + i)))));
            refused.add(y.append(List.of(AppendEntry.of(payload("y-refused-" + i)))));
        }
        for (int i = 0; i < refused.size(); i++) {
            NereusStream stream = streams.get(i % 2);
            Throwable failure = await(refused.get(i).handle((range, error) -> error));
            assertThat(failure).as("append %d while every bookie is down", i).isNotNull();
            assertThat(Failures.unwrap(failure)).isInstanceOfSatisfying(NereusException.class, e -> {
                assertThat(e.code()).isIn(ErrorCode.RETRIABLE_WRITE_FAILED, ErrorCode.RETRIABLE_ABANDONED);
                assertThat(e.retriable()).isTrue();
                assertThat(e.context()).containsEntry("stream", stream.id());
            });
        }
        // once the open slice broke, a new slice cannot be created: not enough bookies
        assertThatThrownBy(() -> await(x.append(List.of(AppendEntry.of(payload("x-no-slice")))))).isInstanceOfSatisfying(
                NereusException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_WRITE_FAILED);
                    assertThat(e.context()).containsEntry("stream", x.id());
                    assertThat(e.getCause()).isInstanceOf(BKException.BKNotEnoughBookiesException.class);
                });
        assertThat(await(x.head()).committedEnd()).isEqualTo(20);
        assertThat(await(y.head()).committedEnd()).isEqualTo(20);

        BK.startAll();
        AtomicInteger failedAfterReturn = new AtomicInteger();
        Awaitility.await().atMost(Duration.ofSeconds(30)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100))
                .until(() -> appendedAfterReturn(x, written.get(0), failedAfterReturn));
        awaitAll(appendRound(streams, written, 10));
        assertThat(await(x.head()).committedEnd()).isEqualTo(written.get(0).size());
        assertThat(await(y.head()).committedEnd()).isEqualTo(30);
        assertStreams(engine.storage("reader", STORAGE), streams, written);
    }

    /**
     * One append to {@code x} once the bookies are back: true when acknowledged (its payload then joins
     * {@code written}); false when it failed retriably, as it may until the client sees the bookies registered.
     */
    private static boolean appendedAfterReturn(NereusStream x, List<byte[]> written, AtomicInteger failures) {
        byte[] p = payload("x-back-" + failures.get());
        Throwable failure = await(x.append(List.of(AppendEntry.of(p))).handle((range, error) -> {
            if (error == null) {
                assertThat(range).isEqualTo(OffsetRange.single(written.size()));
            }
            return error;
        }));
        if (failure == null) {
            written.add(p);
            return true;
        }
        assertThat(Failures.unwrap(failure)).isInstanceOfSatisfying(NereusException.class,
                e -> assertThat(e.retriable()).isTrue());
        failures.incrementAndGet();
        return false;
    }

    /** {@code perStream} appends to each stream, interleaved; their payloads join {@code written}. */
    private static List<CompletableFuture<OffsetRange>> appendRound(List<NereusStream> streams,
            List<List<byte[]>> written, int perStream) {
        List<CompletableFuture<OffsetRange>> acks = new ArrayList<>();
        for (int i = 0; i < perStream; i++) {
            for (int s = 0; s < streams.size(); s++) {
                List<byte[]> w = written.get(s);
                byte[] p = payload(streams.get(s).catalog().managedLedgerName() + "-" + w.size());
                long offset = w.size();
                w.add(p);
                acks.add(streams.get(s).append(List.of(AppendEntry.of(p)))
                        .thenApply(range -> {
                            assertThat(range).isEqualTo(OffsetRange.single(offset));
                            return range;
                        }));
            }
        }
        return acks;
    }

    private static void awaitAll(List<CompletableFuture<OffsetRange>> acks) throws Exception {
        CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    }

    /** Each of {@code streams}, opened by {@code reader}, holds exactly its {@code written} payloads. */
    private static void assertStreams(StreamStorage reader, List<NereusStream> streams, List<List<byte[]>> written) {
        for (int s = 0; s < streams.size(); s++) {
            String name = streams.get(s).catalog().managedLedgerName();
            NereusStream stream = await(reader.openStream(name));
            assertThat(await(stream.head()).committedEnd()).isEqualTo(written.get(s).size());
            assertThat(readDensePayloads(stream)).as(name).containsExactlyElementsOf(written.get(s));
        }
    }

    private long sliceOf(NereusStream s, long offset) {
        return await(engine.metadata.index().indexRecords(s.id(), ReadView.COMMITTED)).stream()
                .filter(r -> r.range().contains(offset))
                .map(r -> ((WalTarget) r.target()).sliceId())
                .findFirst().orElseThrow();
    }

    private static byte[] payload(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
