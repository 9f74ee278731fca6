package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.GenerationId;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamHead;
import io.nereus.object.BlockCache;
import io.nereus.object.ProcessFiles;
import io.nereus.runtime.EngineRuntime;
import io.nereus.object.StreamObjectSpill;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.ReadResult;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Topic compaction on a real bookie, EmbeddedFdb and a filesystem object store, with a policy of "key=value"
 * payloads (an empty value deletes the key, a payload without '=' has no key and is dropped): the compacted view
 * keeps the latest value per key at its original offset, is incremental, survives trims and never moves back.
 */
@Timeout(180)
class TopicCompactorTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final StorageConfig CONFIG = StorageConfig.defaults()
            .withWal(WalConfig.defaults().withQuorums(1, 1, 1).withFlush(64 * 1024, Duration.ofMillis(1)))
            .withMaterializer(MaterializerConfig.defaults().withEnabled(false).withObjects(16 * 1024, 256));

    /** "key=value": the latest value per key; "key=" deletes; no '=': no key, dropped. */
    static class KeyValuePolicy implements CompactionPolicy {
        @Override
        public void scan(StreamEntry entry, KeyTable keys) {
            String text = new String(entry.bytes(), StandardCharsets.UTF_8);
            int eq = text.indexOf('=');
            if (eq < 0) {
                return;
            }
            if (eq == text.length() - 1) {
                keys.remove(text.substring(0, eq));
            } else {
                keys.put(text.substring(0, eq), entry.range().start(), 0);
            }
        }

        @Override
        public Optional<byte[]> retain(StreamEntry entry, KeyTable keys) {
            String text = new String(entry.bytes(), StandardCharsets.UTF_8);
            int eq = text.indexOf('=');
            return eq >= 0 && keys.isLatest(text.substring(0, eq), entry.range().start(), 0)
                    ? Optional.of(entry.bytes()) : Optional.empty();
        }
    }

    private EngineFixture engine;
    private StreamStorage storage;
    private NereusStream stream;
    private long epoch;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "compactor");
        storage = engine.storage("broker-a", CONFIG);
        stream = await(storage.openStream("topic"));
        epoch = await(stream.acquireWriter());
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private void append(String... payloads) {
        List<AppendEntry> entries = new ArrayList<>();
        for (String p : payloads) {
            entries.add(AppendEntry.of(p.getBytes(StandardCharsets.UTF_8)));
        }
        await(stream.append(entries));
    }

    private IndexRecord compact() {
        CompactionResult r = await(storage.compact(stream, new KeyValuePolicy()));
        assertThat(r).isInstanceOf(CompactionResult.Published.class);
        return ((CompactionResult.Published) r).record();
    }

    private List<String> compacted(IndexRecord record) {
        List<StreamEntry> read = await(storage.compactor().read(record, 0, Integer.MAX_VALUE, Long.MAX_VALUE));
        try {
            return read.stream().map(e -> e.range().start() + ":" + new String(e.bytes(), StandardCharsets.UTF_8))
                    .toList();
        } finally {
            StreamEntry.releaseAll(read);
        }
    }

    @Test
    void compact_keepsTheLatestValuePerKeyAtItsOffset_andDropsDeletedAndKeylessOnes() {
        append("a=1", "b=1", "a=2", "nokey", "c=1", "b=", "a=3", "d=1");
        IndexRecord r = compact();
        assertThat(r.view()).isEqualTo(ReadView.TOPIC_COMPACTED);
        assertThat(r.range()).isEqualTo(OffsetRange.of(0, 8));
        assertThat(compacted(r)).containsExactly("4:c=1", "6:a=3", "7:d=1");
        assertThat(r.entryCount()).isEqualTo(3);
        assertThat(readAll(stream, 0, 100)).as("the COMMITTED view is untouched").hasSize(8);
        // reading from inside a gap starts at the next kept entry
        assertThat(await(storage.compactor().read(r, 5, 10, Long.MAX_VALUE))).extracting(e -> e.range().start())
                .containsExactly(6L, 7L);
    }

    @Test
    void compact_isIncremental_fromThePreviousGenerationAndTheCommittedOffsetsAfterIt() {
        append("a=1", "b=1", "a=2");
        IndexRecord first = compact();
        assertThat(compacted(first)).containsExactly("1:b=1", "2:a=2");
        append("b=", "c=1", "a=3");
        IndexRecord second = compact();
        assertThat(second.generation()).isEqualTo(GenerationId.of(2));
        assertThat(second.range()).isEqualTo(OffsetRange.of(0, 6));
        assertThat(compacted(second)).containsExactly("4:c=1", "5:a=3");
        assertThat(await(storage.compactor().compactedRecord(stream.id()))).contains(second);
        CompactionResult again = await(storage.compact(stream, new KeyValuePolicy()));
        assertThat(again).as("nothing new").isEqualTo(new CompactionResult.UpToDate(Optional.of(second)));
    }

    @Test
    void compactedView_survivesTrimmingTheCommittedView_andTheNextCompactionStartsFromIt() {
        append("a=1", "b=1", "a=2", "c=1");
        IndexRecord first = compact();
        await(engine.metadata.streams().trim(stream.id(), 4, epoch));
        assertThat(await(storage.compactor().compactedRecord(stream.id()))).contains(first);
        assertThat(compacted(first)).containsExactly("1:b=1", "2:a=2", "3:c=1");
        append("b=2");
        IndexRecord second = compact();
        assertThat(compacted(second)).containsExactly("2:a=2", "3:c=1", "4:b=2");
    }

    @Test
    void compact_everyKeyDeleted_publishesAnEmptyGenerationWithItsHorizon() {
        append("a=1", "a=");
        IndexRecord r = compact();
        assertThat(r.range()).isEqualTo(OffsetRange.of(0, 2));
        assertThat(r.entryCount()).isZero();
        assertThat(compacted(r)).isEmpty();
    }

    @Test
    void compactedView_afterAnotherBrokerTakesTheStreamOver_isTheSameAndMovesOnFromItsHorizon() {
        append("a=1", "b=1");
        IndexRecord first = compact();
        await(storage.closeAsync());
        storage = engine.storage("broker-b", CONFIG);
        stream = await(storage.openStream("topic"));
        await(stream.acquireWriter());
        assertThat(await(storage.compactor().compactedRecord(stream.id()))).contains(first);
        append("a=2");
        IndexRecord second = compact();
        assertThat(second.range()).isEqualTo(OffsetRange.of(0, 3));
        assertThat(compacted(second)).containsExactly("1:b=1", "2:a=2");
    }

    @Test
    void compact_keptDataManyTimesLargerThanItsBuffer_isStreamedToAFileAndPut_andTheBoundHolds(@TempDir Path spillDir)
            throws Exception {
        int keys = 3000;
        int valueBytes = 2048;
        int blockBytes = 64 * 1024;
        StringBuilder filler = new StringBuilder();
        for (int i = 0; i < valueBytes; i++) {
            filler.append((char) ('a' + i % 26));
        }
        for (int round = 0; round < 2; round++) { // the first round's values are all replaced by the second's
            for (int i = 0; i < keys; i += 100) {
                List<String> batch = new ArrayList<>();
                for (int k = i; k < i + 100; k++) {
                    batch.add("k" + k + "=" + round + filler);
                }
                append(batch.toArray(new String[0]));
            }
        }
        List<String> spilled = new ArrayList<>();
        // a compactor of its own, to see its spill directory
        try (TopicCompactor compactor = new TopicCompactor(engine.metadata.index(),
                new ObjectTargetReader(engine.objects, new BlockCache(0), 16), engine.objects, blockBytes, spillDir,
                Clock.systemUTC(), Duration.ofMinutes(5), s -> { }, EngineRuntime.THREADS)) {
            KeyValuePolicy policy = new KeyValuePolicy() {
                @Override
                public Optional<byte[]> retain(StreamEntry entry, KeyTable table) {
                    try (var files = Files.list(spillDir)) {
                        files.forEach(f -> spilled.add(f.getFileName().toString()));
                    } catch (java.io.IOException e) {
                        throw new IllegalStateException(e);
                    }
                    return super.retain(entry, table);
                }
            };
            StreamHead head = await(stream.head());
            CompactionResult r = await(compactor.compact(stream.id(), head, (from, n, bytes) -> stream.read(
                    ReadView.COMMITTED, from, n, bytes, BoundaryMode.EXACT_START).thenApply(ReadResult::entries),
                    policy));

            assertThat(r).isInstanceOf(CompactionResult.Published.class);
            CompactionResult.Published p = (CompactionResult.Published) r;
            assertThat(p.record().entryCount()).isEqualTo(keys);
            assertThat(p.keptBytes()).isGreaterThan((long) keys * valueBytes);
            // the bound: the spill's write buffer, one entry and the block index (at most one block per 32 KiB)
            long bound = StreamObjectSpill.WRITE_BUFFER_BYTES + (valueBytes + 64)
                    + 40 + 28 * (p.keptBytes() / (blockBytes / 2) + 1);
            assertThat(p.peakBufferedBytes()).isPositive().isLessThanOrEqualTo(bound);
            assertThat(p.keptBytes()).as("kept data many times the bound").isGreaterThan(50 * bound);
            assertThat(spilled).as("phase two wrote into a spill file").isNotEmpty()
                    .allMatch(n -> n.startsWith(SpillFiles.PREFIX));
            try (var files = Files.list(spillDir)) {
                assertThat(files.toList()).as("the spill file is deleted").isEmpty();
            }
            List<StreamEntry> read = new ArrayList<>();
            long from = 0;
            while (from < p.record().endOffset()) {
                List<StreamEntry> chunk = await(compactor.read(p.record(), from, 500, 1 << 20));
                if (chunk.isEmpty()) {
                    break;
                }
                read.addAll(chunk);
                from = chunk.get(chunk.size() - 1).range().end();
            }
            assertThat(read).hasSize(keys);
            for (int k = 0; k < keys; k++) {
                assertThat(read.get(k).range().start()).isEqualTo(keys + k);
                assertThat(new String(read.get(k).bytes(), StandardCharsets.UTF_8))
                        .isEqualTo("k" + k + "=1" + filler);
            }
        }
    }

    @Test
    void start_removesSpillFilesOfProcessesNoLongerRunning_andKeepsEveryOtherFile(@TempDir Path spillDir)
            throws Exception {
        Process exited = new ProcessBuilder("true").start();
        exited.waitFor();
        long dead = exited.pid();
        Path abandoned = Files.writeString(spillDir.resolve(SpillFiles.PREFIX + dead + "-1.object"), "x");
        Path ours = Files.writeString(spillDir.resolve(SpillFiles.PREFIX + ProcessHandle.current().pid()
                + "-2.object"), "x");
        long parentPid = ProcessHandle.current().parent().map(ProcessHandle::pid).orElseThrow();
        Path running = Files.writeString(spillDir.resolve(SpillFiles.PREFIX + parentPid + "-3.object"), "x");
        Path unnamed = Files.writeString(spillDir.resolve(SpillFiles.PREFIX + "4.object"), "x");
        Path other = Files.writeString(spillDir.resolve("other-" + dead + ".object"), "x");

        try (TopicCompactor compactor = new TopicCompactor(engine.metadata.index(),
                new ObjectTargetReader(engine.objects, new BlockCache(0), 16), engine.objects, 4096, spillDir,
                Clock.systemUTC(), Duration.ofMinutes(5), s -> { }, EngineRuntime.THREADS)) {
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !Files.exists(abandoned));
            assertThat(SpillFiles.removeAbandoned(spillDir)).as("nothing more to remove").isZero();
        }
        assertThat(ours).as("this process's").exists();
        assertThat(running).as("a running process's").exists();
        assertThat(unnamed).as("a name without a process id").exists();
        assertThat(other).as("not a spill file").exists();
        assertThat(ProcessFiles.pid(SpillFiles.PREFIX + "17-abc.object", SpillFiles.PREFIX, SpillFiles.SUFFIX)).hasValue(17);
        assertThat(ProcessFiles.pid(SpillFiles.PREFIX + "x7-abc.object", SpillFiles.PREFIX, SpillFiles.SUFFIX)).isEmpty();
        assertThat(ProcessFiles.pid(SpillFiles.PREFIX + "17-abc.tmp", SpillFiles.PREFIX, SpillFiles.SUFFIX)).isEmpty();
    }

    /** {@link KeyValuePolicy} whose first scan waits until released: holds a compaction after it read the view. */
    static final class HeldPolicy implements CompactionPolicy {
        final KeyValuePolicy inner = new KeyValuePolicy();
        final CountDownLatch scanning = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void scan(StreamEntry entry, KeyTable keys) {
            scanning.countDown();
            try {
                assertThat(release.await(60, TimeUnit.SECONDS)).as("released").isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            inner.scan(entry, keys);
        }

        @Override
        public Optional<byte[]> retain(StreamEntry entry, KeyTable keys) {
            return inner.retain(entry, keys);
        }
    }

    @Test
    void twoCompactionsRacing_oneIsPublished_theOtherIsRefusedAndItsObjectDeleted_theViewNeverGoesBack()
            throws Exception {
        append("a=1", "b=1");
        IndexRecord first = compact();
        append("a=2", "c=1");
        // broker b's compaction reads the view and the head [0, 4), then waits inside its first pass
        StreamStorage other = engine.storage("broker-b", CONFIG);
        try {
            NereusStream otherStream = await(other.openStream("topic"));
            HeldPolicy held = new HeldPolicy();
            CompletableFuture<CompactionResult> racing = other.compact(otherStream, held);
            assertThat(held.scanning.await(60, TimeUnit.SECONDS)).as("b's compaction is reading").isTrue();
            // meanwhile this broker's compaction publishes [0, 5)
            append("c=2");
            IndexRecord winner = compact();
            assertThat(winner.range()).isEqualTo(OffsetRange.of(0, 5));
            held.release.countDown();

            CompactionResult lost = racing.get(60, TimeUnit.SECONDS);
            assertThat(lost).isInstanceOf(CompactionResult.Refused.class);
            assertThat(((CompactionResult.Refused) lost).outcome())
                    .isEqualTo(new io.nereus.metadata.CompactionOutcome.Superseded(Optional.of(winner)));
            assertThat(await(storage.compactor().compactedRecord(stream.id()))).as("the view never went back")
                    .contains(winner);
            assertThat(compacted(winner)).containsExactly("1:b=1", "2:a=2", "4:c=2");
            assertThat(first.generation()).isLessThan(winner.generation());
            // the refused compaction deleted its object
            String prefix = "streams/" + stream.id().value() + "/" + ReadView.TOPIC_COMPACTED.code() + "/";
            // (the first generation's object waits for the collector)
            assertThat(await(engine.objects.list(prefix))).extracting(o -> o.name().value())
                    .containsExactlyInAnyOrder(((ObjectTarget) winner.target()).key(),
                            ((ObjectTarget) first.target()).key());
        } finally {
            await(other.closeAsync());
        }
    }

    @Test
    void droppedView_aCompactionThatReadItIsRefused_andTheNextStartsAfresh() throws Exception {
        append("a=1", "b=1");
        compact();
        append("a=2");
        StreamStorage other = engine.storage("broker-b", CONFIG);
        try {
            NereusStream otherStream = await(other.openStream("topic"));
            HeldPolicy held = new HeldPolicy();
            CompletableFuture<CompactionResult> racing = other.compact(otherStream, held);
            assertThat(held.scanning.await(60, TimeUnit.SECONDS)).isTrue();
            long before = storage.compactor().changes(stream.id());
            assertThat(await(storage.compactor().drop(stream.id()))).isEqualTo(1);
            assertThat(storage.compactor().changes(stream.id())).isGreaterThan(before);
            held.release.countDown();
            assertThat(racing.get(60, TimeUnit.SECONDS)).isEqualTo(new CompactionResult.Refused(
                    new io.nereus.metadata.CompactionOutcome.Superseded(Optional.empty())));
            assertThat(await(storage.compactor().compactedRecord(stream.id()))).isEmpty();
        } finally {
            await(other.closeAsync());
        }
        IndexRecord fresh = compact();
        assertThat(fresh.range()).isEqualTo(OffsetRange.of(0, 3));
        assertThat(compacted(fresh)).containsExactly("1:b=1", "2:a=2");
    }
}
