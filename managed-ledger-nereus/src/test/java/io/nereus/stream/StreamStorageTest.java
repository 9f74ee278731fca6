package io.nereus.stream;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.encoded;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.fdb.embedded.CommitFault;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.CommitResult;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamAppend;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalTarget;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalBatch;
import io.nereus.wal.WalBatchCodec;
import io.nereus.wal.WalConfig;
import io.nereus.wal.WalSection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class StreamStorageTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1));

    private EngineFixture engine;
    private EmbeddedFdb fdb;
    private MetadataStore metadata;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "test");
        fdb = engine.fdb;
        metadata = engine.metadata;
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private StreamStorage storage(String writerId, StorageConfig config) {
        return engine.storage(writerId, config);
    }

    private StreamStorage storage(String writerId) {
        return storage(writerId, StorageConfig.defaults().withWal(WAL));
    }


    static byte[] payload(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }


    @Test
    void openWal_registersTheFirstSliceBeforeAnyAppend_andTheFirstAppendIsWrittenIntoIt() throws Exception {
        StreamStorage storage = storage("broker-a");
        assertThat(metadata.slices().slices(WalSliceState.OPEN, 0, 10).get(10, TimeUnit.SECONDS)).isEmpty();
        storage.openWal();
        storage.openWal(); // a second call while the first slice is being created or open changes nothing
        Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(metadata.slices().slices(WalSliceState.OPEN, 0, 10).get(10, TimeUnit.SECONDS)).hasSize(1));
        long opened = metadata.slices().slices(WalSliceState.OPEN, 0, 10).get(10, TimeUnit.SECONDS).firstKey();
        NereusStream stream = await(storage.openStream("first-append"));
        await(stream.acquireWriter());
        await(stream.append(List.of(AppendEntry.of(payload("first")))));
        assertThat(metadata.slices().slices(WalSliceState.OPEN, 0, 10).get(10, TimeUnit.SECONDS).keySet())
                .containsExactly(opened);
        assertThat(readAll(stream, 0, 10)).extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8))
                .containsExactly("first");
    }

    @Test
    void hundredStreams_concurrentAppends_everyAckedEntryReadsBackExactAndDense() {
        StreamStorage storage = storage("broker-a");
        int streams = 100;
        int appendsPerStream = 10;
        List<NereusStream> handles = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            NereusStream s = await(storage.openStream("topic-" + i));
            await(s.acquireWriter());
            handles.add(s);
        }
        List<List<CompletableFuture<OffsetRange>>> acks = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            acks.add(new ArrayList<>());
        }
        for (int round = 0; round < appendsPerStream; round++) {
            for (int i = 0; i < streams; i++) {
                List<AppendEntry> entries = new ArrayList<>();
                for (int e = 0; e <= round % 3; e++) {
                    entries.add(AppendEntry.of(payload("s" + i + "-r" + round + "-e" + e)));
                }
                acks.get(i).add(handles.get(i).append(entries));
            }
        }
        for (int i = 0; i < streams; i++) {
            long expectedStart = 0;
            for (int round = 0; round < appendsPerStream; round++) {
                OffsetRange r = await(acks.get(i).get(round));
                assertThat(r.start()).as("stream %d round %d", i, round).isEqualTo(expectedStart);
                assertThat(r.length()).isEqualTo(round % 3 + 1);
                expectedStart = r.end();
            }
        }
        // a second instance reads without the tail cache, through the resolver and the WAL
        StreamStorage reader = storage("reader");
        for (int i = 0; i < streams; i++) {
            for (NereusStream s : List.of(handles.get(i), await(reader.openStream("topic-" + i)))) {
                List<StreamEntry> all = readAll(s, 0, 50);
                List<String> expected = new ArrayList<>();
                for (int round = 0; round < appendsPerStream; round++) {
                    for (int e = 0; e <= round % 3; e++) {
                        expected.add("s" + i + "-r" + round + "-e" + e);
                    }
                }
                assertThat(all).extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8))
                        .containsExactlyElementsOf(expected);
                for (int k = 0; k < all.size(); k++) {
                    assertThat(all.get(k).range()).isEqualTo(OffsetRange.single(k));
                }
            }
        }
    }

    @Test
    void rangedEntries_readInsideAnEntry_returnsTheWholeEntryInContainingMode() {
        StreamStorage storage = storage("broker-a");
        NereusStream s = await(storage.openStream("kafka-like"));
        await(s.acquireWriter());
        OffsetRange r = await(s.append(List.of(new AppendEntry(payload("batch-0..4"), 5),
                new AppendEntry(payload("batch-5..7"), 3))));
        assertThat(r).isEqualTo(OffsetRange.of(0, 8));

        NereusStream cold = await(storage("reader").openStream("kafka-like"));
        for (NereusStream handle : List.of(s, cold)) {
            ReadResult inside = await(handle.read(ReadView.COMMITTED, 6, 10, 1 << 20, BoundaryMode.CONTAINING_ENTRY));
            assertThat(inside.entries()).hasSize(1);
            assertThat(inside.entries().get(0).range()).isEqualTo(OffsetRange.of(5, 8));
            assertThat(inside.entries().get(0).bytes()).isEqualTo(payload("batch-5..7"));
            assertThat(inside.nextOffset()).isEqualTo(8);

            ReadResult fromStart = await(handle.read(ReadView.COMMITTED, 0, 10, 1 << 20, BoundaryMode.EXACT_START));
            assertThat(fromStart.entries()).extracting(StreamEntry::range)
                    .containsExactly(OffsetRange.of(0, 5), OffsetRange.of(5, 8));

            assertThatThrownBy(() -> await(handle.read(ReadView.COMMITTED, 3, 10, 1 << 20, BoundaryMode.EXACT_START)))
                    .isInstanceOfSatisfying(NereusException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_ENTRY_BOUNDARY));
        }
    }

    @Test
    void appendAtExpectedStart_storesOnlyAtThatOffset_anotherOffsetIsRefusedAndStoresNothing() {
        StreamStorage storage = storage("broker-a");
        NereusStream s = await(storage.openStream("conditional"));
        await(s.acquireWriter());
        assertThat(await(s.append(List.of(new AppendEntry(payload("a"), 3)), 0))).isEqualTo(OffsetRange.of(0, 3));
        for (long wrong : new long[] {0, 2, 4}) {
            assertThatThrownBy(() -> await(s.append(List.of(AppendEntry.of(payload("x"))), wrong)))
                    .isInstanceOfSatisfying(NereusException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_ABANDONED);
                        assertThat(e.context()).containsEntry("expectedStart", wrong).containsEntry("nextOffset", 3L);
                    });
        }
        assertThat(await(s.append(List.of(AppendEntry.of(payload("b"))), 3))).isEqualTo(OffsetRange.of(3, 4));
        assertThat(readAll(s, 0, 10)).extracting(StreamEntry::range)
                .containsExactly(OffsetRange.of(0, 3), OffsetRange.of(3, 4));
        assertThat(await(s.head()).committedEnd()).isEqualTo(4);
    }

    @Test
    void read_respectsEntryAndByteLimits_andReturnsNothingAtTheEnd() {
        NereusStream s = await(storage("broker-a").openStream("limits"));
        await(s.acquireWriter());
        for (int i = 0; i < 5; i++) {
            await(s.append(List.of(AppendEntry.of(new byte[100]))));
        }
        assertThat(await(s.read(ReadView.COMMITTED, 0, 2, 1 << 20, BoundaryMode.EXACT_START)).entries()).hasSize(2);
        assertThat(await(s.read(ReadView.COMMITTED, 0, 10, 250, BoundaryMode.EXACT_START)).entries()).hasSize(2);
        assertThat(await(s.read(ReadView.COMMITTED, 0, 10, 0, BoundaryMode.EXACT_START)).entries()).hasSize(1);
        ReadResult end = await(s.read(ReadView.COMMITTED, 5, 10, 1 << 20, BoundaryMode.EXACT_START));
        assertThat(end.entries()).isEmpty();
        assertThat(end.committedEnd()).isEqualTo(5);
    }

    @Test
    void restart_newInstanceReadsEverythingAndContinuesAtTheCommittedEnd() {
        StreamStorage first = storage("broker-a");
        List<NereusStream> streams = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            NereusStream s = await(first.openStream("restart-" + i));
            await(s.acquireWriter());
            for (int k = 0; k <= i; k++) {
                await(s.append(List.of(AppendEntry.of(payload("before-" + i + "-" + k)))));
            }
            streams.add(s);
        }
        first.close();

        StreamStorage second = storage("broker-a");
        for (int i = 0; i < 3; i++) {
            NereusStream s = await(second.openStream("restart-" + i));
            String prefix = "before-" + i;
            assertThat(readAll(s, 0, 50)).extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8))
                    .hasSize(i + 1).allMatch(p -> p.startsWith(prefix));
            await(s.acquireWriter());
            OffsetRange next = await(s.append(List.of(AppendEntry.of(payload("after-" + i)))));
            assertThat(next).isEqualTo(OffsetRange.single(i + 1));
            assertThat(readAll(s, 0, 50)).hasSize(i + 2);
        }
    }

    @Test
    void fencing_secondWriterFencesFirst_inFlightAndLaterAppendsFailFenced() {
        StreamStorage slow = storage("broker-a", StorageConfig.defaults()
                .withWal(WAL.withFlush(1024, Duration.ofSeconds(20)).withFlushWhenIdle(false)));
        NereusStream a = await(slow.openStream("owned"));
        await(a.acquireWriter());
        // flushed at once because it reaches flushBytes
        OffsetRange acked = await(a.append(List.of(AppendEntry.of(new byte[2048]))));
        // stays in the open batch (below flushBytes, long delay)
        CompletableFuture<OffsetRange> inFlight = a.append(List.of(AppendEntry.of(payload("in-flight"))));

        NereusStream b = await(storage("broker-b").openStream("owned"));
        await(b.acquireWriter());
        // this append fills the open batch, sealing it with the in-flight one
        CompletableFuture<OffsetRange> later = a.append(List.of(AppendEntry.of(new byte[2048])));

        for (CompletableFuture<OffsetRange> f : List.of(inFlight, later)) {
            assertThatThrownBy(() -> await(f)).isInstanceOfSatisfying(NereusException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCED));
        }
        assertThatThrownBy(() -> await(a.append(List.of(AppendEntry.of(payload("after")))))).isInstanceOfSatisfying(
                NereusException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCED));

        assertThat(await(b.append(List.of(AppendEntry.of(payload("b-0")))))).isEqualTo(OffsetRange.single(acked.end()));
        assertThat(readAll(b, 0, 50)).extracting(StreamEntry::size).containsExactly(2048, 3);
    }

    @Test
    void corruptWalBatch_isDetectedByChecksum() throws Exception {
        StreamStorage storage = storage("broker-a");
        NereusStream s = await(storage.openStream("corrupt"));
        long epoch = await(metadata.streams().acquireWriter(s.id(), "forger")).writerEpoch();
        WalSection section = WalSection.of(s.id(), 0, List.of(new AppendEntry(payload("genuine"), 1)));
        byte[] stored = encoded(new WalBatch(0, 0, List.of(
                WalSection.of(s.id(), 0, List.of(new AppendEntry(payload("tampered"), 1))))));
        WriteHandle lh = TestLedgers.create(engine.bk, WAL.password());
        long entry = lh.append(stored);
        // registered as a slice, as the WAL writer registers each before committing into it
        long lease = await(metadata.slices().takeLease("forger", Duration.ofSeconds(30)));
        await(metadata.slices().register(lh.getId(), "forger", lease));
        CommitResult r = await(metadata.streams().commit(List.of(new StreamAppend(s.id(), epoch, OffsetRange.single(0),
                new WalTarget(lh.getId(), entry, 0), section.checksum(), 1, 7))));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);

        assertThatThrownBy(() -> await(s.read(ReadView.COMMITTED, 0, 1, 100, BoundaryMode.EXACT_START)))
                .isInstanceOfSatisfying(NereusException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.CHECKSUM_MISMATCH));
        lh.close();
    }

    @Test
    void read_belowTrim_returnsOffsetTrimmed() {
        NereusStream s = await(storage("broker-a").openStream("trimmed"));
        long epoch = await(s.acquireWriter());
        await(s.append(List.of(AppendEntry.of(payload("0")), AppendEntry.of(payload("1")))));
        await(metadata.streams().trim(s.id(), 1, epoch));
        assertThatThrownBy(() -> await(s.read(ReadView.COMMITTED, 0, 1, 100, BoundaryMode.EXACT_START)))
                .isInstanceOfSatisfying(NereusException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.OFFSET_TRIMMED));
        assertThat(await(s.read(ReadView.COMMITTED, 1, 1, 100, BoundaryMode.EXACT_START)).entries())
                .extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8)).containsExactly("1");
    }

    @Test
    void read_withTheWritersReadableRange_answersAsTheHeadDoes_evenWhenItLagsATrim() {
        StreamStorage storage = storage("broker-a");
        NereusStream s = await(storage.openStream("known-range"));
        long epoch = await(s.acquireWriter());
        for (int i = 0; i < 4; i++) {
            await(s.append(List.of(AppendEntry.of(payload("p" + i)))));
        }
        OffsetRange known = new OffsetRange(0, 4);
        assertThat(await(s.read(ReadView.COMMITTED, 1, 10, 1 << 20, BoundaryMode.EXACT_START, known)).entries())
                .extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8)).containsExactly("p1", "p2", "p3");
        ReadResult atEnd = await(s.read(ReadView.COMMITTED, 4, 10, 1 << 20, BoundaryMode.EXACT_START, known));
        assertThat(atEnd.entries()).isEmpty();
        assertThat(atEnd.committedEnd()).isEqualTo(4);
        assertThatThrownBy(() -> await(s.read(ReadView.COMMITTED, 0, 1, 100, BoundaryMode.EXACT_START,
                new OffsetRange(2, 4)))).isInstanceOfSatisfying(NereusException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.OFFSET_TRIMMED));

        // a range that lags a trim (the stored head moved on) still never serves a trimmed offset from storage
        await(metadata.streams().trim(s.id(), 2, epoch));
        NereusStream cold = await(storage("broker-b").openStream("known-range"));
        assertThatThrownBy(() -> await(cold.read(ReadView.COMMITTED, 0, 1, 100, BoundaryMode.EXACT_START, known)))
                .isInstanceOfSatisfying(NereusException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.OFFSET_TRIMMED));
    }

    @Test
    void read_withAReadableRange_refusesMissingArguments() {
        NereusStream s = await(storage("broker-a").openStream("bad-range"));
        assertThatThrownBy(() -> await(s.read(ReadView.COMMITTED, 0, 1, 100, BoundaryMode.EXACT_START, null)))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("readable");
        assertThatThrownBy(() -> await(s.read(ReadView.COMMITTED, -1, 1, 100, BoundaryMode.EXACT_START,
                new OffsetRange(0, 0)))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void commitUnknownResult_appliedOrNot_leavesNoDuplicateOrMissingOffsets() {
        NereusStream s = await(storage("broker-a").openStream("unknown"));
        await(s.acquireWriter());
        await(s.append(List.of(AppendEntry.of(payload("0")))));
        fdb.injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        assertThat(await(s.append(List.of(AppendEntry.of(payload("1")))))).isEqualTo(OffsetRange.single(1));
        fdb.injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);
        assertThat(await(s.append(List.of(AppendEntry.of(payload("2")))))).isEqualTo(OffsetRange.single(2));

        assertThat(readAll(s, 0, 50)).extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8))
                .containsExactly("0", "1", "2");
        assertThat(await(s.head()).committedEnd()).isEqualTo(3);
    }
}
