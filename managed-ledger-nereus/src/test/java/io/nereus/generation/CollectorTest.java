package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.CollectionStore;
import io.nereus.metadata.IndexKey;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.SliceCollection;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSliceState;
import io.nereus.object.ObjectContent;
import io.nereus.object.ObjectInfo;
import io.nereus.object.ObjectName;
import io.nereus.runtime.EngineRuntime;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.MutableClock;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The garbage collector on a real bookie, EmbeddedFdb and a filesystem object store: WAL slices whose data is in
 * objects, trimmed or deleted leave BookKeeper and the metadata, a slice still holding the only copy of committed
 * data stays, reads keep working throughout, every step resumes after a crash, unreferenced objects go and
 * published ones stay, a deleted stream leaves nothing behind.
 */
@Timeout(180)
class CollectorTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1));
    /** Background passes off (the tests run them); small objects, so a stream makes several. */
    private static final MaterializerConfig MATERIALIZER = MaterializerConfig.defaults().withEnabled(false)
            .withObjects(16 * 1024, 2048).withMergeMinObjects(4);
    private static final Duration WAL_GRACE = Duration.ofSeconds(60);
    private static final Duration OBJECT_GRACE = Duration.ofMinutes(10);
    /** Passes an hour apart: the tests run them. */
    private static final CollectorConfig COLLECTOR = new CollectorConfig(Duration.ofHours(1), WAL_GRACE,
            OBJECT_GRACE);
    private static final StorageConfig CONFIG = StorageConfig.defaults().withWal(WAL).withMaterializer(MATERIALIZER)
            .withCollector(COLLECTOR);

    private EngineFixture engine;
    private final MutableClock clock = new MutableClock();

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "collector");
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private StreamStorage storage(String writerId) {
        return engine.storage(writerId, CONFIG, clock);
    }

    private static String payload(int stream, int offset) {
        return "s" + stream + "-o" + offset + "-" + "y".repeat(50 + (stream * 5 + offset) % 70);
    }

    /** Appends {@code rounds} rounds of 1..3 entries to each stream; adds the payloads to {@code expected}. */
    private static void append(List<NereusStream> streams, int rounds, List<List<String>> expected) {
        while (expected.size() < streams.size()) {
            expected.add(new ArrayList<>());
        }
        List<CompletableFuture<OffsetRange>> acks = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < streams.size(); i++) {
                List<AppendEntry> entries = new ArrayList<>();
                for (int e = 0; e <= round % 3; e++) {
                    String p = payload(i, expected.get(i).size());
                    entries.add(AppendEntry.of(p.getBytes(StandardCharsets.UTF_8)));
                    expected.get(i).add(p);
                }
                acks.add(streams.get(i).append(entries));
            }
        }
        acks.forEach(f -> await(f));
    }

    private List<NereusStream> open(StreamStorage storage, int n, String prefix) {
        List<NereusStream> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            NereusStream s = await(storage.openStream(prefix + i));
            await(s.acquireWriter());
            out.add(s);
        }
        return out;
    }

    private static List<String> texts(List<StreamEntry> entries) {
        return entries.stream().map(e -> new String(e.bytes(), StandardCharsets.UTF_8)).toList();
    }

    private Set<Long> slices(WalSliceState state) {
        return await(engine.metadata.slices().slices(state, 0, 10_000)).keySet();
    }

    /** True when BookKeeper still has ledger {@code id}. */
    private boolean ledgerExists(long id) throws Exception {
        return TestLedgers.exists(engine.bk, id, new byte[0]);
    }

    private void readsBack(List<NereusStream> streams, List<List<String>> expected, String coldWriter) {
        StreamStorage cold = storage(coldWriter);
        for (int i = 0; i < streams.size(); i++) {
            assertThat(texts(readAll(streams.get(i), 0, 7))).containsExactlyElementsOf(expected.get(i));
            NereusStream c = await(cold.openStream(streams.get(i).catalog().managedLedgerName()));
            List<StreamEntry> read = readAll(c, 0, 1000);
            assertThat(texts(read)).containsExactlyElementsOf(expected.get(i));
            for (int k = 0; k < read.size(); k++) {
                assertThat(read.get(k).range()).isEqualTo(OffsetRange.single(k));
            }
        }
    }

    private int streamKeys(StreamId s) {
        return engine.fdb.read(tr -> tr.getRange(engine.metadata.keyspace().streamRange(s)).asList().join().size());
    }

    @Test
    void materializedSlice_isDeletedAfterTheGrace_andEveryOffsetStillReads() throws Exception {
        StreamStorage storage = storage("broker-a");
        List<NereusStream> streams = open(storage, 20, "topic-");
        List<List<String>> expected = new ArrayList<>();
        append(streams, 20, expected);
        await(storage.rollWalSlice());
        Set<Long> sealed = slices(WalSliceState.SEALED);
        assertThat(sealed).isNotEmpty();
        // a read served from the WAL before collection, whose resolution this instance caches
        storage.clearTailCache();
        assertThat(texts(readAll(streams.get(3), 0, 1000))).containsExactlyElementsOf(expected.get(3));

        await(storage.collectGarbage());
        assertThat(slices(WalSliceState.SEALED)).as("not materialized: every slice holds data").isEqualTo(sealed);
        assertThat(storage.collectorStats().slicesHeld()).isEqualTo(sealed.size());

        await(storage.materializeSealedSlices());
        await(storage.collectGarbage());
        assertThat(slices(WalSliceState.COLLECTING)).isEqualTo(sealed);
        for (long id : sealed) {
            assertThat(ledgerExists(id)).as("within the grace period the ledger stays").isTrue();
        }
        // a read in flight across the grace period: the cached resolution of the WAL still reads
        assertThat(texts(readAll(streams.get(3), 0, 1000))).containsExactlyElementsOf(expected.get(3));

        clock.advance(WAL_GRACE);
        await(storage.collectGarbage());
        for (long id : sealed) {
            assertThat(ledgerExists(id)).as("ledger %s deleted", id).isFalse();
            assertThat(await(engine.metadata.slices().slice(id))).isEmpty();
            assertThat(await(engine.metadata.slices().ranges(id))).isEmpty();
        }
        assertThat(storage.collectorStats().slicesCollected()).isEqualTo(sealed.size());
        for (NereusStream s : streams) {
            assertThat(await(engine.metadata.index().fallbackRecords(s.id(), ReadView.COMMITTED))).isEmpty();
            assertThat(await(engine.metadata.index().retiredRecords(s.id(), 1000))).isEmpty();
            assertThat(await(engine.metadata.streams().intents(s.id())).keySet()).doesNotContainAnyElementsOf(sealed);
        }
        storage.clearTailCache();
        readsBack(streams, expected, "reader");

        // appends go on into the open slice, and the next slices are collected the same way
        append(streams, 3, expected);
        await(storage.rollWalSlice());
        await(storage.materializeSealedSlices());
        await(storage.collectGarbage());
        clock.advance(WAL_GRACE);
        await(storage.collectGarbage());
        assertThat(slices(WalSliceState.SEALED)).isEmpty();
        assertThat(slices(WalSliceState.COLLECTING)).isEmpty();
        readsBack(streams, expected, "reader-2");
    }

    @Test
    void sliceWithOneUnmaterializedRange_isKept_untilThatRangeIsTrimmed() throws Exception {
        StreamStorage storage = storage("broker-a");
        List<NereusStream> streams = open(storage, 3, "keep-");
        List<List<String>> expected = new ArrayList<>();
        append(streams, 10, expected);
        await(storage.rollWalSlice());
        long slice = slices(WalSliceState.SEALED).iterator().next();
        // streams 0 and 1 are trimmed to their end, stream 2 keeps its data in this slice only
        for (int i = 0; i < 2; i++) {
            await(engine.metadata.streams().trim(streams.get(i).id(), expected.get(i).size(),
                    await(streams.get(i).head()).writerEpoch()));
        }
        clock.advance(WAL_GRACE);
        await(storage.collectGarbage());
        await(storage.collectGarbage());
        assertThat(slices(WalSliceState.SEALED)).containsExactly(slice);
        assertThat(ledgerExists(slice)).isTrue();
        storage.clearTailCache();
        StreamStorage cold = storage("reader");
        assertThat(texts(readAll(await(cold.openStream("keep-2")), 0, 1000))).containsExactlyElementsOf(expected.get(2));

        await(engine.metadata.streams().trim(streams.get(2).id(), expected.get(2).size(),
                await(streams.get(2).head()).writerEpoch()));
        await(storage.collectGarbage());
        clock.advance(WAL_GRACE);
        await(storage.collectGarbage());
        assertThat(ledgerExists(slice)).as("all of it trimmed: no materialization needed").isFalse();
        assertThat(await(engine.metadata.slices().slice(slice))).isEmpty();
    }

    @Test
    void quarantinedObject_keepsItsSlice() throws Exception {
        StreamStorage storage = storage("broker-a");
        List<NereusStream> streams = open(storage, 2, "q-");
        List<List<String>> expected = new ArrayList<>();
        append(streams, 10, expected);
        await(storage.rollWalSlice());
        await(storage.materializeSealedSlices());
        long slice = slices(WalSliceState.SEALED).iterator().next();
        IndexRecord object = await(engine.metadata.index().indexRecords(streams.get(1).id(), ReadView.COMMITTED)).get(0);
        await(engine.metadata.index().quarantine(IndexKey.of(object)));
        clock.advance(WAL_GRACE);
        await(storage.collectGarbage());
        await(storage.collectGarbage());
        assertThat(slices(WalSliceState.SEALED)).containsExactly(slice);
        assertThat(ledgerExists(slice)).isTrue();
        storage.clearTailCache();
        readsBack(streams, expected, "reader");
    }

    @Test
    void crashAtEachStepOfCollection_resumesAndCompletesWithoutLoss() throws Exception {
        StreamStorage storage = storage("broker-a");
        List<NereusStream> streams = open(storage, 4, "crash-");
        List<List<String>> expected = new ArrayList<>();
        CollectionStore collection = engine.metadata.collection();
        List<Long> made = new ArrayList<>();
        for (int round = 0; round < 4; round++) {
            append(streams, 4, expected);
            await(storage.rollWalSlice());
            for (long id : slices(WalSliceState.SEALED)) {
                if (!made.contains(id)) {
                    made.add(id);
                }
            }
        }
        await(storage.materializeSealedSlices());
        assertThat(made).hasSize(4);
        // slice 0: a crash after the records of one stream were retired, before the others
        long s0 = made.get(0);
        var ranges0 = await(engine.metadata.slices().ranges(s0));
        var firstStream = ranges0.entrySet().iterator().next();
        assertThat(await(collection.retireSliceRecords(s0, firstStream.getKey(), firstStream.getValue()))).isEmpty();
        // slice 1: a crash after it was marked COLLECTING, before the ledger was deleted
        long s1 = made.get(1);
        retireAll(s1);
        assertThat(await(collection.markCollecting(s1))).isInstanceOf(SliceCollection.Collecting.class);
        // slice 2: a crash after the ledger was deleted, before the records were forgotten
        long s2 = made.get(2);
        retireAll(s2);
        await(collection.markCollecting(s2));
        TestLedgers.delete(engine.bk, s2);
        // slice 3: a crash in the middle of forgetting (its ranges partly removed)
        long s3 = made.get(3);
        retireAll(s3);
        await(collection.markCollecting(s3));
        TestLedgers.delete(engine.bk, s3);
        var ranges3 = await(engine.metadata.slices().ranges(s3));
        engine.fdb.run(tr -> {
            tr.clear(engine.metadata.keyspace().walStreamKey(s3, ranges3.firstKey()));
            return null;
        });

        // the instance is gone; another one collects what is left
        storage.close();
        StreamStorage next = storage("broker-b");
        await(next.recoverAbandonedSlices());
        await(next.collectGarbage());
        clock.advance(WAL_GRACE);
        await(next.collectGarbage());
        for (long id : made) {
            assertThat(ledgerExists(id)).as("ledger %s", id).isFalse();
            assertThat(await(engine.metadata.slices().slice(id))).as("slice %s", id).isEmpty();
        }
        readsBack(streams.stream().map(s -> await(next.openStream(s.catalog().managedLedgerName()))).toList(),
                expected, "reader");
    }

    @Test
    void orphanObjects_areDeletedAfterTheGrace_publishedAndRetiredOnesAsTheirRecordsSay() {
        StreamStorage storage = storage("broker-a");
        NereusStream s = open(storage, 1, "slow-").get(0);
        List<List<String>> expected = new ArrayList<>();
        for (int slice = 0; slice < 6; slice++) {
            append(List.of(s), 2, expected);
            await(storage.rollWalSlice());
            await(storage.materializeSealedSlices());
        }
        List<IndexRecord> retired = await(engine.metadata.collection().retiredObjectRecords(s.id()));
        assertThat(retired).as("merged objects").hasSizeGreaterThanOrEqualTo(4);
        Set<String> live = await(engine.metadata.index().indexRecords(s.id(), ReadView.COMMITTED)).stream()
                .map(r -> ((ObjectTarget) r.target()).key()).collect(Collectors.toSet());
        // an object written but never published (a crash in between), and one of a stream that never existed
        ObjectName orphan = StreamObjectNames.newName(s.id(), ReadView.COMMITTED, OffsetRange.of(0, 3),
                EngineRuntime.THREADS.uniqueId());
        ObjectName stranger = StreamObjectNames.newName(StreamId.of(987_654), ReadView.COMMITTED, OffsetRange.of(0, 1),
                EngineRuntime.THREADS.uniqueId());
        ObjectName foreign = ObjectName.of("other/data");
        for (ObjectName n : List.of(orphan, stranger, foreign)) {
            await(engine.objects.putNew(n, ObjectContent.of("garbage".getBytes(StandardCharsets.UTF_8))));
        }

        await(storage.collectGarbage());
        assertThat(names()).as("younger than the grace: nothing deleted").contains(orphan.value(), stranger.value())
                .containsAll(live).containsAll(retired.stream().map(r -> ((ObjectTarget) r.target()).key()).toList());

        clock.advance(OBJECT_GRACE);
        await(storage.collectGarbage());
        Set<String> after = names();
        assertThat(after).doesNotContain(orphan.value(), stranger.value())
                .doesNotContainAnyElementsOf(retired.stream().map(r -> ((ObjectTarget) r.target()).key()).toList())
                .containsAll(live).contains(foreign.value());
        assertThat(await(engine.metadata.collection().retiredObjectRecords(s.id()))).isEmpty();
        assertThat(storage.collectorStats().orphansDeleted()).isEqualTo(2);
        assertThat(storage.collectorStats().objectsDeleted()).isEqualTo(retired.size());
        storage.clearTailCache();
        assertThat(texts(readAll(s, 0, 1000))).containsExactlyElementsOf(expected.get(0));
    }

    private Set<String> names() {
        return await(engine.objects.list("")).stream().map(ObjectInfo::name).map(ObjectName::value)
                .collect(Collectors.toSet());
    }

    @Test
    void deletedStream_leavesNoKeyAndNoObject_andTheNameIsReusedAtOnce() throws Exception {
        StreamStorage storage = storage("broker-a");
        List<NereusStream> streams = open(storage, 2, "del-");
        List<List<String>> expected = new ArrayList<>();
        append(streams, 12, expected);
        await(storage.rollWalSlice());
        await(storage.materializeSealedSlices());
        StreamId gone = streams.get(0).id();
        assertThat(await(engine.objects.list(StreamObjectNames.streamPrefix(gone)))).isNotEmpty();
        await(engine.metadata.cursors().saveCursor(gone, "sub", 1, io.nereus.metadata.CursorState.at(3)));

        await(storage.deleteStream("del-0"));
        NereusStream again = await(storage.openStream("del-0"));
        assertThat(again.id()).isNotEqualTo(gone);
        await(storage.collectGarbage());
        assertThat(streamKeys(gone)).isZero();
        assertThat(await(engine.objects.list(StreamObjectNames.streamPrefix(gone)))).isEmpty();
        assertThat(await(engine.metadata.collection().purges(10))).isEmpty();
        assertThat(storage.collectorStats().streamsPurged()).isEqualTo(1);

        // the slice held both streams: with one purged and the other in objects, it goes
        clock.advance(WAL_GRACE);
        await(storage.collectGarbage());
        assertThat(slices(WalSliceState.SEALED)).isEmpty();
        assertThat(slices(WalSliceState.COLLECTING)).isEmpty();
        storage.clearTailCache();
        assertThat(texts(readAll(streams.get(1), 0, 1000))).containsExactlyElementsOf(expected.get(1));
        assertThat(readAll(again, 0, 1000)).isEmpty();
        assertThat(storage.collectorStats().census()).isPresent();
    }

    /** Retires the records of every stream of {@code slice}, as a collector pass does before marking it. */
    private void retireAll(long slice) {
        await(engine.metadata.slices().ranges(slice)).forEach((stream, range) -> assertThat(
                await(engine.metadata.collection().retireSliceRecords(slice, stream, range))).isEmpty());
    }
}
