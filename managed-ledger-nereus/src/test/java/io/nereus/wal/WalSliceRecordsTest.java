package io.nereus.wal;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
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
import io.nereus.testing.TestLedgers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The slice records the WAL writer keeps, on a real in-process bookie: each slice registered OPEN under the
 * writer's lease before it is written, each stream's range in it recorded by the commits, SEALED once rolled over
 * (its ledger closed) and at a clean close, after which the lease is gone.
 */
class WalSliceRecordsTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    /** Small batches and 64 KiB slices, so that a few hundred KiB roll over several slices. */
    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(8 * 1024, Duration.ofMillis(1)).withSlice(64 * 1024, Duration.ofHours(1));

    private EngineFixture engine;
    private MetadataStore metadata;
    private WalSliceStore slices;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "slice-records");
        metadata = engine.metadata;
        slices = metadata.slices();
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    @Test
    void hundredStreams_slicesOpenThenSealedAfterRollOver_rangesAreWhatWasCommittedIntoEach() throws Exception {
        StreamStorage storage = engine.storage("broker-a", StorageConfig.defaults().withWal(WAL));
        List<NereusStream> streams = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            NereusStream s = await(storage.openStream("t-" + i));
            await(s.acquireWriter());
            streams.add(s);
        }
        await(streams.get(0).append(List.of(AppendEntry.of(new byte[100]))));
        SortedMap<Long, WalSlice> open = await(slices.slices(WalSliceState.OPEN, 0, 10));
        assertThat(open).hasSize(1);
        WalSlice first = open.values().iterator().next();
        assertThat(first.writerId()).isEqualTo("broker-a");
        assertThat(await(slices.lease(first.incarnation()))).as("registered under the writer's live lease")
                .hasValueSatisfying(l -> assertThat(l.writerId()).isEqualTo("broker-a"));

        List<CompletableFuture<OffsetRange>> appends = new ArrayList<>();
        for (int round = 0; round < 10; round++) {
            for (int i = 0; i < streams.size(); i++) {
                appends.add(streams.get(i).append(List.of(AppendEntry.of(new byte[300 + i]))));
            }
        }
        appends.forEach(f -> await(f));

        Map<Long, SortedMap<StreamId, OffsetRange>> committed = committedRangesBySlice(streams);
        assertThat(committed.size()).as("the appends rolled over several slices").isGreaterThan(3);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                await(slices.slices(WalSliceState.OPEN, 0, 100))).as("every rolled-over slice is sealed").hasSize(1));
        for (Map.Entry<Long, SortedMap<StreamId, OffsetRange>> e : committed.entrySet()) {
            assertThat(await(slices.ranges(e.getKey()))).as("ranges of slice %d", e.getKey()).isEqualTo(e.getValue());
        }
        long current = await(slices.slices(WalSliceState.OPEN, 0, 100)).firstKey();
        for (long id : committed.keySet()) {
            if (id != current) {
                assertThat(await(slices.slice(id)).map(WalSlice::state)).as("slice %d", id).contains(WalSliceState.SEALED);
                assertThat(ledgerClosed(id)).as("the ledger of sealed slice %d", id).isTrue();
            }
        }

        await(storage.closeAsync());
        assertThat(await(slices.slices(WalSliceState.OPEN, 0, 100))).as("a clean close seals the last slice").isEmpty();
        assertThat(await(slices.slices(WalSliceState.SEALED, 0, 100))).as("every slice written to, none other")
                .containsOnlyKeys(committed.keySet());
        assertThat(ledgerClosed(current)).isTrue();
        assertThat(await(slices.lease(first.incarnation()))).as("the lease is released after sealing").isEmpty();
        assertThat(await(slices.ranges(current))).isEqualTo(committed.get(current));
    }

    @Test
    void cleanClose_sealsTheSlice_releasesTheLease_andAnotherInstanceRecoversNothing() {
        StreamStorage storage = engine.storage("broker-a", StorageConfig.defaults().withWal(WAL));
        NereusStream s = await(storage.openStream("closing"));
        await(s.acquireWriter());
        await(s.append(List.of(AppendEntry.of(new byte[10]))));
        await(s.append(List.of(AppendEntry.of(new byte[10]))));
        long slice = await(slices.slices(WalSliceState.OPEN, 0, 10)).firstKey();
        long incarnation = await(slices.slice(slice)).orElseThrow().incarnation();

        await(storage.closeAsync());
        assertThat(await(slices.slice(slice))).contains(new WalSlice(WalSliceState.SEALED, "broker-a", incarnation));
        assertThat(await(slices.ranges(slice))).containsExactly(Map.entry(s.id(), OffsetRange.of(0, 2)));
        assertThat(await(slices.lease(incarnation))).isEmpty();
        StreamStorage other = engine.storage("broker-b", StorageConfig.defaults().withWal(WAL));
        assertThat(await(other.recoverAbandonedSlices()).sealed()).isEmpty();
    }

    /** Per slice, each stream's range from its first to its last committed offset in the slice (its records). */
    private Map<Long, SortedMap<StreamId, OffsetRange>> committedRangesBySlice(List<NereusStream> streams) {
        Map<Long, SortedMap<StreamId, OffsetRange>> out = new TreeMap<>();
        for (NereusStream s : streams) {
            for (IndexRecord r : await(metadata.index().indexRecords(s.id(), ReadView.COMMITTED))) {
                long slice = ((WalTarget) r.target()).sliceId();
                out.computeIfAbsent(slice, k -> new TreeMap<>()).merge(s.id(), r.range(),
                        (a, b) -> OffsetRange.of(Math.min(a.start(), b.start()), Math.max(a.end(), b.end())));
            }
        }
        return out;
    }

    private boolean ledgerClosed(long id) throws Exception {
        ReadHandle lh = TestLedgers.openToRead(engine.bk, id, WAL.password());
        try {
            return lh.isClosed();
        } finally {
            lh.close();
        }
    }
}
