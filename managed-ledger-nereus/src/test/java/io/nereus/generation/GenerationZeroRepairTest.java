package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.encoded;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.CommitResult;
import io.nereus.metadata.IndexKey;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.NereusKeyspace;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamAppend;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalIntent;
import io.nereus.metadata.WalTarget;
import io.nereus.metadata.codec.WalIntentCodec;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import io.nereus.stream.ReadResult;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.StreamTesting;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalBatch;
import io.nereus.wal.WalBatchCodec;
import io.nereus.wal.WalConfig;
import io.nereus.wal.WalReader;
import io.nereus.wal.WalSection;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Generation-0 repair on a real in-process bookie: generation-0 records are deleted behind the engine's back
 * and a new storage instance (cold caches) must still serve byte-exact entries, rebuilding the records from
 * the WAL, or report OFFSET_TRIMMED, a retriable incomplete repair, or lost data.
 */
class GenerationZeroRepairTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    /** Small slices so that the streams' offsets span several slices. */
    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1)).withSlice(1500, Duration.ofHours(1));
    private static final int STREAMS = 3;
    private static final int ROUNDS = 8;

    private EngineFixture engine;
    private EmbeddedFdb fdb;
    private MetadataStore metadata;
    /** Everything appended, per managed-ledger name, in offset order. */
    private final Map<String, List<StreamEntry>> appended = new HashMap<>();
    private final Map<String, StreamId> ids = new HashMap<>();

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "repair");
        fdb = engine.fdb;
        metadata = engine.metadata;
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private StreamStorage storage(String writerId, int repairBatches) {
        return engine.storage(writerId, StorageConfig.defaults().withWal(WAL).withRepairMaxEntries(repairBatches));
    }


    /** Appends {@link #ROUNDS} rounds to {@link #STREAMS} streams; each round is awaited, so it is its own batch. */
    private void appendRounds() {
        StreamStorage writer = storage("broker-a", 10_000);
        List<NereusStream> handles = new ArrayList<>();
        for (int i = 0; i < STREAMS; i++) {
            NereusStream s = await(writer.openStream("topic-" + i));
            await(s.acquireWriter());
            handles.add(s);
            ids.put("topic-" + i, s.id());
            appended.put("topic-" + i, new ArrayList<>());
        }
        for (int round = 0; round < ROUNDS; round++) {
            List<CompletableFuture<?>> acks = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++) {
                List<AppendEntry> entries = new ArrayList<>();
                List<byte[]> payloads = new ArrayList<>();
                for (int e = 0; e <= (round + i) % 2; e++) {
                    byte[] p = ("topic-" + i + " round " + round + " entry " + e + " " + "x".repeat(60))
                            .getBytes(StandardCharsets.UTF_8);
                    payloads.add(p);
                    entries.add(AppendEntry.of(p));
                }
                String name = "topic-" + i;
                acks.add(handles.get(i).append(entries).thenAccept(r -> {
                    long offset = r.start();
                    synchronized (appended) {
                        for (byte[] p : payloads) {
                            appended.get(name).add(new StreamEntry(io.nereus.metadata.OffsetRange.single(offset), p));
                            offset++;
                        }
                    }
                }));
            }
            acks.forEach(StreamTesting::await);
        }
    }

    /** Clears the generation-0 records of {@code stream} in a raw transaction; returns what was cleared. */
    private List<IndexRecord> deleteGenerationZero(StreamId stream) {
        List<IndexRecord> records = await(metadata.index().indexRecords(stream, ReadView.COMMITTED)).stream()
                .filter(r -> r.generation().isAppend()).toList();
        NereusKeyspace ks = metadata.keyspace();
        fdb.run(tr -> {
            records.forEach(r -> tr.clear(ks.indexKey(IndexKey.of(r))));
            return null;
        });
        assertThat(await(metadata.index().indexRecords(stream, ReadView.COMMITTED))).isEmpty();
        return records;
    }


    private static void assertSameEntries(List<StreamEntry> actual, List<StreamEntry> expected) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.size(); i++) {
            assertThat(actual.get(i).range()).isEqualTo(expected.get(i).range());
            assertThat(actual.get(i).payload()).as("entry %d", i).isEqualTo(expected.get(i).payload());
        }
    }

    private static ErrorCode codeOf(Runnable r) {
        try {
            r.run();
        } catch (NereusException e) {
            return e.code();
        }
        throw new AssertionError("expected a NereusException");
    }

    @Test
    void read_afterGenerationZeroRecordsDeleted_coldInstanceRepairsAndReadsByteExact() {
        appendRounds();
        Map<String, List<IndexRecord>> before = new HashMap<>();
        for (String name : ids.keySet()) {
            assertThat(await(metadata.streams().intents(ids.get(name)))).as("slices of %s", name).hasSizeGreaterThan(1);
            before.put(name, deleteGenerationZero(ids.get(name)));
        }

        StreamStorage reader = storage("reader", 10_000);
        for (String name : ids.keySet()) {
            NereusStream s = await(reader.openStream(name));
            assertSameEntries(readAll(s, 0, 5), appended.get(name));
            // repair writes a record per section found in the WAL: the deleted runs come back as the sections they
            // listed, each exactly (slice, entry, position, range, checksum)
            List<IndexRecord> repaired = await(metadata.index().indexRecords(ids.get(name), ReadView.COMMITTED));
            assertThat(repaired).allSatisfy(r -> assertThat(r.walSections()).hasSize(1));
            assertThat(repaired.stream().flatMap(r -> r.walSections().stream()))
                    .as("sections of %s come back exactly", name)
                    .containsExactlyElementsOf(before.get(name).stream()
                            .flatMap(r -> r.walSections().stream()).toList());
        }
    }

    @Test
    void read_belowTrim_returnsOffsetTrimmed_andAboveTrimIsRepaired() {
        appendRounds();
        StreamId id = ids.get("topic-0");
        long trimAt = 5;
        long writerEpoch = await(metadata.streams().head(id)).orElseThrow().writerEpoch();
        await(metadata.streams().trim(id, trimAt, writerEpoch));
        deleteGenerationZero(id);

        NereusStream s = await(storage("reader", 10_000).openStream("topic-0"));
        assertThat(codeOf(() -> await(s.read(ReadView.COMMITTED, trimAt - 1, 5, 1 << 20, BoundaryMode.EXACT_START))))
                .isEqualTo(ErrorCode.OFFSET_TRIMMED);
        assertSameEntries(readAll(s, trimAt, 5), appended.get("topic-0").subList((int) trimAt, appended.get("topic-0").size()));
        WalEvidenceRepair repair = new WalEvidenceRepair(metadata.streams(), metadata.index(),
                new WalReader(engine.bk, WAL.password(), 4), 10_000,
                Duration.ofSeconds(10), Clock.systemUTC());
        assertThat(await(repair.repair(id, trimAt - 1)))
                .isEqualTo(new GenerationZeroRepair.Outcome.ProvedTrimmed(trimAt));
    }

    @Test
    void read_withTooSmallRepairBudget_isRetriable_andNothingNegativeIsCached() {
        appendRounds();
        StreamId id = ids.get("topic-1");
        deleteGenerationZero(id);
        long last = appended.get("topic-1").size() - 1;

        NereusStream starved = await(storage("starved", 1).openStream("topic-1"));
        NereusException e = null;
        try {
            await(starved.read(ReadView.COMMITTED, last, 1, 1 << 20, BoundaryMode.EXACT_START));
        } catch (NereusException x) {
            e = x;
        }
        assertThat(e).isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_REPAIR_INCOMPLETE);
        assertThat(e.retriable()).isTrue();
        assertThat(await(metadata.index().indexRecords(id, ReadView.COMMITTED))).isEmpty();

        NereusStream enough = await(storage("enough", 10_000).openStream("topic-1"));
        ReadResult r = await(enough.read(ReadView.COMMITTED, last, 1, 1 << 20, BoundaryMode.EXACT_START));
        assertThat(r.entries().get(0).payload()).isEqualTo(appended.get("topic-1").get((int) last).payload());
        // the starved instance kept no negative fact: it now finds the repaired record
        ReadResult again = await(starved.read(ReadView.COMMITTED, last, 1, 1 << 20, BoundaryMode.EXACT_START));
        assertThat(again.entries().get(0).payload()).isEqualTo(r.entries().get(0).payload());
    }

    @Test
    void repair_outOfTime_isIncomplete() {
        appendRounds();
        StreamId id = ids.get("topic-2");
        deleteGenerationZero(id);
        Clock late = new Clock() {
            private long calls;

            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public synchronized Instant instant() {
                return Instant.EPOCH.plusSeconds(3600 * calls++);
            }
        };
        WalEvidenceRepair repair = new WalEvidenceRepair(metadata.streams(), metadata.index(),
                new WalReader(engine.bk, WAL.password(), 4), 10_000,
                Duration.ofSeconds(10), late);

        assertThat(await(repair.repair(id, 0))).isInstanceOf(GenerationZeroRepair.Outcome.Incomplete.class);
        assertThat(await(metadata.index().indexRecords(id, ReadView.COMMITTED))).isEmpty();
    }

    @Test
    void read_withoutAnyWalEvidence_failsAsDataLoss() {
        appendRounds();
        StreamId id = ids.get("topic-0");
        deleteGenerationZero(id);
        NereusKeyspace ks = metadata.keyspace();
        fdb.run(tr -> {
            tr.clear(ks.intentRange(id));
            return null;
        });

        NereusStream s = await(storage("reader", 10_000).openStream("topic-0"));
        assertThat(codeOf(() -> await(s.read(ReadView.COMMITTED, 0, 1, 1 << 20, BoundaryMode.EXACT_START))))
                .isEqualTo(ErrorCode.DATA_LOSS);
        assertThatThrownBy(() -> await(s.read(ReadView.COMMITTED, 0, 1, 1 << 20, BoundaryMode.EXACT_START)))
                .isInstanceOf(NereusException.class).matches(x -> !((NereusException) x).retriable());
    }

    @Test
    void repair_takesTheLastSectionOfASlice_notAnEarlierFailedWriteOfTheSameOffsets() throws Exception {
        StreamId id = await(metadata.catalog().openStream("rewritten")).streamId();
        long epoch = await(metadata.streams().acquireWriter(id, "forger")).writerEpoch();
        WriteHandle lh = TestLedgers.create(engine.bk, WAL.password());
        long slice = lh.getId();
        WalSection failed = WalSection.of(id, 0, List.of(new AppendEntry(bytes("failed-0"), 1), new AppendEntry(bytes("failed-1"), 1)));
        WalSection kept = WalSection.of(id, 0, List.of(new AppendEntry(bytes("kept-0"), 1), new AppendEntry(bytes("kept-1"), 1)));
        lh.append(encoded(new WalBatch(slice, 0, List.of(failed))));
        long keptEntry = lh.append(encoded(new WalBatch(slice, 1, List.of(kept))));
        lh.close();
        // registered as a slice, as the WAL writer registers each before committing into it
        long lease = await(metadata.slices().takeLease("forger", Duration.ofSeconds(30)));
        await(metadata.slices().register(slice, "forger", lease));
        StreamAppend committed = new StreamAppend(id, epoch, kept.range(), new WalTarget(slice, keptEntry, 0),
                kept.checksum(), 2, kept.payloadBytes());
        assertThat(await(metadata.streams().commit(List.of(committed)))).isInstanceOf(CommitResult.Committed.class);
        deleteGenerationZero(id);

        WalEvidenceRepair repair = new WalEvidenceRepair(metadata.streams(), metadata.index(),
                new WalReader(engine.bk, WAL.password(), 4), 10_000,
                Duration.ofSeconds(10), Clock.systemUTC());
        assertThat(await(repair.repair(id, 1))).isEqualTo(new GenerationZeroRepair.Outcome.Repaired());

        assertThat(await(metadata.index().indexRecords(id, ReadView.COMMITTED))).containsExactly(committed.generationZeroRecord());
        NereusStream s = await(storage("reader", 10_000).openStream("rewritten"));
        assertThat(readAll(s, 0, 5)).extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8))
                .containsExactly("kept-0", "kept-1");
    }

    @Test
    void read_whenTheSliceHoldingTheOffsetIsMissing_failsAsDataLoss_notFromAnOlderSlice() {
        appendRounds();
        StreamId id = ids.get("topic-0");
        deleteGenerationZero(id);
        long offset = appended.get("topic-0").size() - 1;
        byte[] intentKey = metadata.keyspace().intentKey(id, 424_242);
        byte[] intent = WalIntentCodec.INSTANCE.encode(new WalIntent(offset, 1));
        fdb.run(tr -> {
            tr.set(intentKey, intent);
            return null;
        });

        NereusStream s = await(storage("reader", 10_000).openStream("topic-0"));
        assertThat(codeOf(() -> await(s.read(ReadView.COMMITTED, offset, 1, 1 << 20, BoundaryMode.EXACT_START))))
                .isEqualTo(ErrorCode.DATA_LOSS);
        assertThat(await(metadata.index().indexRecords(id, ReadView.COMMITTED))).isEmpty();
        // offsets before the fake intent's first offset still come from the real slices
        ReadResult first = await(s.read(ReadView.COMMITTED, 0, 1, 1 << 20, BoundaryMode.EXACT_START));
        assertThat(first.entries().get(0).payload()).isEqualTo(appended.get("topic-0").get(0).payload());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
