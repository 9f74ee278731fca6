package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.GenerationId;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.IndexRecordState;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSliceState;
import io.nereus.object.ByteRange;
import io.nereus.object.ObjectContent;
import io.nereus.object.ObjectInfo;
import io.nereus.object.ObjectName;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The materializer on a real bookie, EmbeddedFdb and a filesystem object store: sealed WAL slices become stream
 * objects that serve every read, also with the WAL gone; crashes, races, corruption and changed sources.
 */
@Timeout(180)
class MaterializerTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1));
    /** Background passes off (the tests run them); 16 KiB objects of 2 KiB blocks, so a stream makes several. */
    private static final MaterializerConfig MATERIALIZER = MaterializerConfig.defaults().withEnabled(false)
            .withObjects(16 * 1024, 2048).withMergeMinObjects(4);
    private static final StorageConfig CONFIG = StorageConfig.defaults().withWal(WAL).withMaterializer(MATERIALIZER);

    private EngineFixture engine;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "materializer");
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private static String payload(int stream, int round, int entry) {
        return "s" + stream + "-r" + round + "-e" + entry + "-" + "x".repeat(40 + (stream * 7 + round) % 60);
    }

    /** Appends {@code rounds} rounds of 1..3 entries to each stream; returns the payloads per stream. */
    private static List<List<String>> append(List<NereusStream> streams, int rounds, int firstRound) {
        List<List<String>> expected = new ArrayList<>();
        List<CompletableFuture<OffsetRange>> acks = new ArrayList<>();
        for (int i = 0; i < streams.size(); i++) {
            expected.add(new ArrayList<>());
        }
        for (int round = firstRound; round < firstRound + rounds; round++) {
            for (int i = 0; i < streams.size(); i++) {
                List<AppendEntry> entries = new ArrayList<>();
                for (int e = 0; e <= round % 3; e++) {
                    String p = payload(i, round, e);
                    entries.add(AppendEntry.of(p.getBytes(StandardCharsets.UTF_8)));
                    expected.get(i).add(p);
                }
                acks.add(streams.get(i).append(entries));
            }
        }
        acks.forEach(f -> await(f));
        return expected;
    }

    private static List<String> texts(List<StreamEntry> entries) {
        return entries.stream().map(e -> new String(e.bytes(), StandardCharsets.UTF_8)).toList();
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

    private List<IndexRecord> lookupSpace(StreamId s) {
        return await(engine.metadata.index().indexRecords(s, ReadView.COMMITTED));
    }

    private static List<Path> spillFilesOfThisProcess() throws IOException {
        try (var files = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return files.filter(f -> f.getFileName().toString().startsWith(SpillFiles.MATERIALIZER_PREFIX
                    + ProcessHandle.current().pid() + "-")).toList();
        }
    }

    private void deleteSealedSlices() throws Exception {
        for (long id : await(engine.metadata.slices().slices(WalSliceState.SEALED, 0, 1000)).keySet()) {
            TestLedgers.delete(engine.bk, id);
        }
    }

    @Test
    void hundredStreams_materialized_everyOffsetReadsBackFromObjects_alsoColdAndWithTheWalDeleted() throws Exception {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        List<NereusStream> streams = open(storage, 100, "topic-");
        List<List<String>> expected = append(streams, 30, 0);
        await(storage.rollWalSlice());
        long readBefore = storage.walBytesRead();
        await(storage.materializeSealedSlices());

        // the streams' parts (about 500 KiB) are far more than two 16 KiB objects: one pass over the slice, the
        // entries waiting in a spill file, kept for the next pass and deleted by one that spills nothing (reading
        // the slice once per group of streams that fit in memory, as the materializer did before, fails this)
        long payload = expected.stream().flatMap(List::stream).mapToLong(String::length).sum();
        assertThat(storage.walBytesRead() - readBefore).as("WAL bytes the materializer read, payload %s", payload)
                .isBetween(payload, 2 * payload);
        assertThat(spillFilesOfThisProcess()).hasSize(1);
        assertThat(storage.materializerStats().bytesSpilled()).as("bytes spilled").isGreaterThan(payload / 2);
        await(storage.materializeSealedSlices());
        assertThat(spillFilesOfThisProcess()).as("deleted by a pass that spilled nothing").isEmpty();

        MaterializerStats stats = storage.materializerStats();
        assertThat(stats.objectsPublished()).isGreaterThanOrEqualTo(100);
        assertThat(stats.refusedPublications()).isZero();
        assertThat(stats.entriesPublished()).isGreaterThanOrEqualTo(expected.stream().mapToLong(List::size).sum());
        for (NereusStream s : streams) {
            List<IndexRecord> records = lookupSpace(s.id());
            // the resolver's lookup space holds only objects now, exactly covering the stream; the WAL records wait
            // in FALLBACK
            assertThat(records).allSatisfy(r -> {
                assertThat(r.generation().value()).isGreaterThanOrEqualTo(1);
                assertThat(r.target()).isInstanceOf(ObjectTarget.class);
            });
            long end = 0;
            for (IndexRecord r : records) {
                assertThat(r.range().start()).isEqualTo(end);
                end = r.range().end();
            }
            assertThat(end).isEqualTo(expected.get(streams.indexOf(s)).size());
            assertThat(await(engine.metadata.index().fallbackRecords(s.id(), ReadView.COMMITTED))).isNotEmpty();
        }

        // one topic's history read by a cold instance touches only that topic's objects, never the shared WAL
        StreamStorage one = engine.storage("one-topic-reader", CONFIG);
        int probe = 7;
        assertThat(texts(readAll(await(one.openStream("topic-" + probe)), 0, 1000)))
                .containsExactlyElementsOf(expected.get(probe));
        long topicObjectBytes = lookupSpace(streams.get(probe).id()).stream()
                .mapToLong(r -> ((ObjectTarget) r.target()).objectSize()).sum();
        long allObjectBytes = streams.stream().flatMap(s -> lookupSpace(s.id()).stream())
                .mapToLong(r -> ((ObjectTarget) r.target()).objectSize()).sum();
        assertThat(one.walBytesRead()).isZero();
        // each object: its tail (footer and index; for these small objects all of it) and then its blocks
        assertThat(one.objectBytesRead()).isBetween(topicObjectBytes, 2 * topicObjectBytes);
        assertThat(allObjectBytes).isGreaterThan(50 * topicObjectBytes);
        System.out.printf("one topic of 100 read cold: %d object bytes fetched, its objects %d bytes, all topics'"
                + " objects %d bytes, WAL bytes fetched %d%n", one.objectBytesRead(), topicObjectBytes, allObjectBytes,
                one.walBytesRead());

        // with the WAL gone, only objects can serve: every offset, from this instance and from a cold one
        deleteSealedSlices();
        storage.clearTailCache();
        StreamStorage cold = engine.storage("reader", CONFIG);
        for (int i = 0; i < streams.size(); i++) {
            assertThat(texts(readAll(streams.get(i), 0, 7))).containsExactlyElementsOf(expected.get(i));
            NereusStream c = await(cold.openStream("topic-" + i));
            List<StreamEntry> read = readAll(c, 0, 1000);
            assertThat(texts(read)).containsExactlyElementsOf(expected.get(i));
            for (int k = 0; k < read.size(); k++) {
                assertThat(read.get(k).range()).isEqualTo(OffsetRange.single(k));
            }
        }
        assertThat(cold.objectBlocks().misses()).isPositive();
        assertThat(cold.quarantinedRecords()).isZero();
    }

    /**
     * The spill file of one pass's copy is written again from its start by the next pass's: the second slice is
     * smaller, so the file holds the first one's bytes past the second's end, which no read may reach.
     */
    @Test
    void spillFile_reusedByTheNextPassFromItsStart_everyOffsetReadsBack_thenDeletedByAnIdlePass() throws Exception {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        List<NereusStream> streams = open(storage, 100, "topic-");
        List<List<String>> expected = append(streams, 30, 0);
        await(storage.rollWalSlice());
        await(storage.materializeSealedSlices());
        List<Path> first = spillFilesOfThisProcess();
        assertThat(first).hasSize(1);
        long firstSize = Files.size(first.get(0));
        long spilledBefore = storage.materializerStats().bytesSpilled();

        List<List<String>> more = append(streams, 12, 30);
        await(storage.rollWalSlice());
        await(storage.materializeSealedSlices());

        long spilledNow = storage.materializerStats().bytesSpilled() - spilledBefore;
        assertThat(spilledNow).as("bytes spilled by the second copy").isPositive().isLessThan(firstSize);
        assertThat(spillFilesOfThisProcess()).as("the same file, kept").isEqualTo(first);
        assertThat(Files.size(first.get(0))).as("not truncated").isEqualTo(firstSize);
        deleteSealedSlices();
        storage.clearTailCache();
        StreamStorage cold = engine.storage("reader", CONFIG);
        for (int i = 0; i < streams.size(); i++) {
            List<String> all = new ArrayList<>(expected.get(i));
            all.addAll(more.get(i));
            assertThat(texts(readAll(await(cold.openStream("topic-" + i)), 0, 1000))).as("topic-%d", i)
                    .containsExactlyElementsOf(all);
        }
        assertThat(cold.quarantinedRecords()).isZero();

        await(storage.materializeSealedSlices());
        assertThat(spillFilesOfThisProcess()).as("deleted by a pass that spilled nothing").isEmpty();
    }

    @Test
    void oneStreamLargerThanTheMemory_isReadOnceWithoutASpill() {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        List<NereusStream> streams = open(storage, 1, "large-");
        // about 210 KiB, more than the two 16 KiB objects' memory (the commit makes its runs long: a run is copied
        // whole, so the objects here are few and large); one stream holds at most one object, so none of it spills
        List<List<String>> expected = append(streams, 1200, 0);
        await(storage.rollWalSlice());
        long readBefore = storage.walBytesRead();
        await(storage.materializeSealedSlices());

        long payload = expected.get(0).stream().mapToLong(String::length).sum();
        assertThat(payload).isGreaterThan(4 * 16 * 1024);
        assertThat(storage.walBytesRead() - readBefore).isBetween(payload, 2 * payload);
        MaterializerStats stats = storage.materializerStats();
        assertThat(stats.bytesSpilled()).as("one stream holds one object at a time: nothing to spill").isZero();
        assertThat(stats.objectsPublished()).isPositive();
        assertThat(lookupSpace(streams.get(0).id())).allSatisfy(r -> assertThat(r.target())
                .isInstanceOf(ObjectTarget.class));
        storage.clearTailCache();
        assertThat(texts(readAll(streams.get(0), 0, 10_000))).containsExactlyElementsOf(expected.get(0));
    }

    /**
     * A copy still running when the materializer closes never completes (its next step is refused by the stopped
     * thread): its spill file is deleted at close, not left in the directory until the next start.
     */
    @Test
    void closeWhileACopyThatSpilledRuns_deletesItsSpillFile() throws Exception {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        List<NereusStream> streams = open(storage, 100, "closing-");
        append(streams, 30, 0);
        await(storage.rollWalSlice());
        AtomicInteger reached = new AtomicInteger();
        AtomicInteger spillsAtClose = new AtomicInteger(-1);
        storage.materializer().beforePublish(request -> {
            if (reached.incrementAndGet() == 1) {
                try {
                    spillsAtClose.set(spillFilesOfThisProcess().size());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                storage.materializer().close();
            }
            return new CompletableFuture<>(); // the copy stops here, as at a shutdown
        });
        storage.materializeSealedSlices();
        // the hook counts itself before it looks at the spill files: wait for what it saw, not for the count
        org.awaitility.Awaitility.await().until(() -> spillsAtClose.get() >= 0);
        assertThat(spillsAtClose.get()).as("the copy spilled (100 streams, two objects in memory)").isEqualTo(1);
        org.awaitility.Awaitility.await().untilAsserted(() -> assertThat(spillFilesOfThisProcess())
                .as("the running copy's spill file, deleted at close").isEmpty());
    }

    @Test
    void crashBetweenWritingAndPublishing_leavesTheIndexUnchanged_andALaterPassPublishes() {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        List<NereusStream> streams = open(storage, 3, "crash-");
        List<List<String>> expected = append(streams, 10, 0);
        await(storage.rollWalSlice());
        AtomicInteger reached = new AtomicInteger();
        storage.materializer().beforePublish(request -> {
            reached.incrementAndGet();
            storage.materializer().close(); // the materializer dies here: the object is written, nothing published
            return new CompletableFuture<>();
        });
        storage.materializeSealedSlices();
        // the three streams' objects are published at once: each is written and verified, then the process dies
        org.awaitility.Awaitility.await().until(() -> reached.get() == 3);

        List<ObjectInfo> written = await(engine.objects.list(""));
        assertThat(written).hasSize(3);
        for (NereusStream s : streams) {
            assertThat(lookupSpace(s.id())).allSatisfy(r -> assertThat(r.generation()).isEqualTo(GenerationId.APPEND));
        }
        StreamStorage next = engine.storage("broker-b", CONFIG);
        for (int i = 0; i < streams.size(); i++) {
            assertThat(texts(readAll(await(next.openStream("crash-" + i)), 0, 100)))
                    .containsExactlyElementsOf(expected.get(i));
        }
        // another instance materializes the slice (it owns it once broker-a's lease is gone; offload asks directly)
        for (NereusStream s : streams) {
            await(next.offload(s.id(), Long.MAX_VALUE));
            assertThat(lookupSpace(s.id())).allSatisfy(r -> assertThat(r.generation().value()).isPositive());
        }
        // the unpublished object is still there, named by no record: garbage for the collector
        assertThat(await(engine.objects.list(""))).extracting(ObjectInfo::name).contains(written.get(0).name());
        for (int i = 0; i < streams.size(); i++) {
            assertThat(texts(readAll(await(next.openStream("crash-" + i)), 0, 100)))
                    .containsExactlyElementsOf(expected.get(i));
        }
    }

    @Test
    void twoMaterializersRacingForOneRange_publishExactlyOnce() {
        StreamStorage a = engine.storage("broker-a", CONFIG);
        StreamStorage b = engine.storage("broker-b", CONFIG);
        NereusStream s = open(a, 1, "race-").get(0);
        List<String> expected = append(List.of(s), 5, 0).get(0);
        await(a.rollWalSlice());
        // both have written and verified their object before either publishes
        java.util.concurrent.CountDownLatch bothReady = new java.util.concurrent.CountDownLatch(2);
        Materializer.PublishHook meet = request -> CompletableFuture.runAsync(() -> {
            bothReady.countDown();
            try {
                bothReady.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        a.materializer().beforePublish(meet);
        b.materializer().beforePublish(meet);
        CompletableFuture<Long> fa = a.offload(s.id(), Long.MAX_VALUE);
        CompletableFuture<Long> fb = b.offload(s.id(), Long.MAX_VALUE);
        assertThat(await(fa)).isEqualTo(expected.size());
        assertThat(await(fb)).isEqualTo(expected.size());

        long published = a.materializerStats().objectsPublished() + b.materializerStats().objectsPublished();
        long refused = a.materializerStats().refusedPublications() + b.materializerStats().refusedPublications();
        assertThat(published).isEqualTo(1);
        assertThat(refused).isEqualTo(1);
        assertThat(lookupSpace(s.id())).hasSize(1);
        // the loser deleted its object: one object left, the published one
        assertThat(await(engine.objects.list(""))).extracting(o -> o.name().value())
                .containsExactly(((ObjectTarget) lookupSpace(s.id()).get(0).target()).key());
    }

    @Test
    void flippedByteInAnObject_readServedFromTheWal_andTheRecordQuarantinedForGood() {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        NereusStream s = open(storage, 1, "flip-").get(0);
        List<String> expected = append(List.of(s), 10, 0).get(0);
        await(storage.offload(s.id(), Long.MAX_VALUE));
        IndexRecord first = lookupSpace(s.id()).get(0);
        ObjectTarget t = (ObjectTarget) first.target();
        ObjectName name = ObjectName.of(t.key());
        byte[] bytes = await(engine.objects.get(name, ByteRange.of(0, t.objectSize())));
        bytes[60] ^= 0x10; // inside the first block's first entry
        await(engine.objects.delete(name));
        await(engine.objects.putNew(name, ObjectContent.of(bytes)));

        StreamStorage cold = engine.storage("reader", CONFIG);
        NereusStream c = await(cold.openStream("flip-0"));
        assertThat(texts(readAll(c, 0, 100))).containsExactlyElementsOf(expected);
        assertThat(cold.quarantinedRecords()).isEqualTo(1);
        IndexRecord after = lookupSpace(s.id()).get(0);
        assertThat(after.range()).isEqualTo(first.range());
        assertThat(after.state()).isEqualTo(IndexRecordState.QUARANTINED);

        // never chosen again: another cold reader reads everything without touching the quarantined object
        StreamStorage colder = engine.storage("reader-2", CONFIG);
        assertThat(texts(readAll(await(colder.openStream("flip-0")), 0, 100))).containsExactlyElementsOf(expected);
        assertThat(colder.quarantinedRecords()).isZero();
    }

    @Test
    void offloadOfAStreamUnderContinuousAppends_completesWhileTheyCommit_andCoversTheRange(
            @org.junit.jupiter.api.io.TempDir Path dir) {
        // a durable metadata engine, as a broker runs: its commits take an fsync, so one is always in progress
        engine.close();
        engine = new EngineFixture(BK, "busy", EngineFixture.temporaryObjectStore(),
                io.nereus.fdb.embedded.EmbeddedFdb.open(dir));
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        NereusStream s = open(storage, 1, "busy-").get(0);
        for (int round = 0; round < 2000; round++) { // 2000 sections: the publication names 2000 source records
            append(List.of(s), 1, round);
        }
        long upTo = await(s.head()).committedEnd();
        CompletableFuture<Long> offload = storage.offload(s.id(), upTo);
        // every append commits a new head of the stream, 32 in flight; the publication reads the head without a
        // conflict (in a broker under load a conflicting read made it retry until the appends paused)
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(32);
        List<CompletableFuture<OffsetRange>> acks = new ArrayList<>();
        while (!offload.isDone() && System.nanoTime() < deadline) {
            inFlight.acquireUninterruptibly();
            CompletableFuture<OffsetRange> ack = s.append(List.of(AppendEntry.of(new byte[100])));
            ack.whenComplete((r, e) -> inFlight.release());
            acks.add(ack);
        }
        acks.forEach(a -> await(a));
        assertThat(offload).as("offload done while appends kept committing").isDone();
        assertThat(await(offload)).isEqualTo(upTo);
        // the run of appends reaching across upTo (the open slice's, rolled over by the offload) is in objects whole
        assertThat(await(storage.objectCoverage(s.id())).endOffset()).isGreaterThanOrEqualTo(upTo);
    }

    @Test
    void objectAndWalBothGone_readFailsLoudly_namingStreamOffsetAndEvidence() throws Exception {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        NereusStream s = open(storage, 1, "lost-").get(0);
        append(List.of(s), 3, 0);
        await(storage.offload(s.id(), Long.MAX_VALUE));
        IndexRecord object = lookupSpace(s.id()).get(0);
        await(engine.objects.delete(ObjectName.of(((ObjectTarget) object.target()).key())));
        deleteSealedSlices();

        StreamStorage cold = engine.storage("reader", CONFIG);
        NereusStream c = await(cold.openStream("lost-0"));
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> readAll(c, 0, 100));
        assertThat(t).isInstanceOf(io.nereus.error.NereusException.class);
        io.nereus.error.NereusException e = (io.nereus.error.NereusException) t;
        assertThat(e.code()).isEqualTo(io.nereus.error.ErrorCode.DATA_LOSS);
        assertThat(e.context()).containsEntry("stream", s.id()).containsEntry("offset", 0L);
        assertThat(io.nereus.error.Failures.unwrap(e.getCause())).isInstanceOf(io.nereus.error.NereusException.class)
                .hasMessageContaining("slice");
        assertThat(lookupSpace(s.id()).get(0).state()).isEqualTo(IndexRecordState.QUARANTINED);
    }

    @Test
    void sourceTrimmedOrQuarantinedUnderTheMaterializer_publicationRefused_objectDeleted() {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        List<NereusStream> streams = open(storage, 2, "changed-");
        List<List<String>> expected = append(streams, 4, 0);
        await(storage.rollWalSlice());
        StreamId trimmed = streams.get(0).id();
        StreamId repaired = streams.get(1).id();
        storage.materializer().beforePublish(request -> {
            if (request.stream().equals(trimmed)) {
                return engine.metadata.streams().head(trimmed).thenCompose(head -> engine.metadata.streams()
                        .trim(trimmed, 1, head.orElseThrow().writerEpoch())).thenApply(h -> null);
            }
            return engine.metadata.index().quarantine(request.sources().get(0).key()).thenApply(r -> null);
        });
        await(storage.materializeSealedSlices());
        assertThat(storage.materializerStats().objectsPublished()).isZero();
        assertThat(storage.materializerStats().refusedPublications()).isEqualTo(2);
        assertThat(await(engine.objects.list(""))).isEmpty();
        assertThat(lookupSpace(trimmed)).allSatisfy(r -> assertThat(r.generation()).isEqualTo(GenerationId.APPEND));
        assertThat(lookupSpace(repaired)).allSatisfy(r -> assertThat(r.generation()).isEqualTo(GenerationId.APPEND));
        assertThat(texts(readAll(streams.get(0), 1, 100))).containsExactlyElementsOf(
                expected.get(0).subList(1, expected.get(0).size()));
    }

    @Test
    void smallObjectsOfSeveralSlices_mergeIntoAHigherGeneration_andRetire() {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        NereusStream s = open(storage, 1, "slow-").get(0);
        List<String> expected = new ArrayList<>();
        for (int slice = 0; slice < 6; slice++) {
            expected.addAll(append(List.of(s), 2, slice * 2).get(0));
            await(storage.rollWalSlice());
            await(storage.materializeSealedSlices());
        }
        MaterializerStats stats = storage.materializerStats();
        assertThat(stats.objectsPublished()).isEqualTo(6);
        assertThat(stats.mergesPublished()).isPositive();
        List<IndexRecord> records = lookupSpace(s.id());
        assertThat(records.size()).isLessThan(6);
        assertThat(records).extracting(r -> r.generation().value()).anySatisfy(g -> assertThat(g).isGreaterThan(4));
        assertThat(await(engine.metadata.index().retiredRecords(s.id(), 100))).hasSizeGreaterThanOrEqualTo(4)
                .allSatisfy(r -> assertThat(r.target()).isInstanceOf(ObjectTarget.class));
        storage.clearTailCache();
        assertThat(texts(readAll(s, 0, 100))).containsExactlyElementsOf(expected);
    }

    @Test
    void offload_rollsTheOpenSliceOver_andCompletesOnceTheRangeIsInObjects() {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        NereusStream s = open(storage, 1, "offload-").get(0);
        List<String> expected = new ArrayList<>();
        for (int round = 0; round < 12; round++) { // one WAL section per round, all one run: materialized whole
            expected.addAll(append(List.of(s), 1, round).get(0));
        }
        long upTo = expected.size() / 2;
        long reached = await(storage.offload(s.id(), upTo));
        assertThat(reached).isEqualTo(upTo);
        ObjectCoverage c = await(storage.objectCoverage(s.id()));
        assertThat(c.firstOffset()).isZero();
        assertThat(c.endOffset()).as("the run reaching across upTo is in objects whole").isGreaterThan(reached);
        // the rest: beyond the committed end is clamped
        assertThat(await(storage.offload(s.id(), Long.MAX_VALUE))).isEqualTo(expected.size());
        assertThat(await(storage.objectCoverage(s.id())).endOffset()).isEqualTo(expected.size());
        storage.clearTailCache();
        assertThat(texts(readAll(s, 0, 5))).containsExactlyElementsOf(expected);
        // appends continue in the new slice
        List<String> more = append(List.of(s), 2, 12).get(0);
        assertThat(texts(readAll(s, expected.size(), 100))).containsExactlyElementsOf(more);
    }
}
