package io.nereus.kafka;

import static io.nereus.kafka.KafkaBatches.batch;
import static io.nereus.kafka.KafkaBatches.bytes;
import static io.nereus.kafka.KafkaBatches.concat;
import static io.nereus.kafka.KafkaBatches.offsetsAndKeys;
import static io.nereus.kafka.KafkaBatches.rebased;
import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.generation.MaterializerConfig;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.ProducerSnapshot;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalTarget;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalConfig;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A Kafka partition log on a real in-process bookie, EmbeddedFdb and a filesystem object store, with batches built by
 * kafka-clients: offsets, fetches, validation, idempotent producers across a restart, reads from generation 0 and from
 * objects, trim and ListOffsets by time.
 */
@Timeout(180)
class KafkaPartitionLogTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1));
    /** Background passes off (the tests run them); 16 KiB objects of 2 KiB blocks, so a log makes several. */
    private static final MaterializerConfig MATERIALIZER = MaterializerConfig.defaults().withEnabled(false)
            .withObjects(16 * 1024, 2048);
    private static final StorageConfig CONFIG = StorageConfig.defaults().withWal(WAL).withMaterializer(MATERIALIZER);
    /** No automatic producer-state saves: a restart replays the stream. */
    private static final KafkaLogConfig NO_SNAPSHOTS = KafkaLogConfig.defaults().withSnapshotEveryBatches(1_000_000);

    private EngineFixture engine;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "kafka");
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private KafkaPartitionLog open(StreamStorage storage, String name, KafkaLogConfig config) {
        return await(KafkaPartitionLog.open(storage, engine.metadata, name, config));
    }

    private KafkaPartitionLog open(String writer, String name) {
        return open(engine.storage(writer, CONFIG), name, KafkaLogConfig.defaults());
    }

    private static NereusException refused(ThrowingCallable call, ErrorCode code) {
        Throwable[] caught = new Throwable[1];
        assertThatThrownBy(call).isInstanceOfSatisfying(NereusException.class, e -> {
            assertThat(e.code()).isEqualTo(code);
            caught[0] = e;
        });
        return (NereusException) caught[0];
    }

    private long committedEnd(KafkaPartitionLog log) {
        return await(engine.metadata.streams().head(log.streamId())).orElseThrow().committedEnd();
    }

    @Test
    void append_everyCompression_severalBatchesPerAppend_getConsecutiveOffsets_andReadBackByteExact() {
        KafkaPartitionLog log = open("broker-a", "topic-0");
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        List<String> expectedRecords = new ArrayList<>();
        long next = 0;
        int n = 0;
        for (Compression c : KafkaBatches.compressions()) {
            List<MemoryRecords> parts = List.of(batch("c" + n + "a", 10).compressed(c).build(),
                    batch("c" + n + "b", 1).compressed(c).build(), batch("c" + n + "c", 25).compressed(c).build());
            AppendResult r = await(log.append(concat(parts)));
            assertThat(r.batches()).containsExactly(new AppendResult.Batch(next, next + 9, false),
                    new AppendResult.Batch(next + 10, next + 10, false),
                    new AppendResult.Batch(next + 11, next + 35, false));
            long base = next;
            for (MemoryRecords p : parts) {
                expected.writeBytes(rebased(p, base));
                for (String rec : offsetsAndKeys(p)) {
                    String[] f = rec.split(":", 2);
                    expectedRecords.add((base + Long.parseLong(f[0])) + ":" + f[1]);
                }
                base += p.batches().iterator().next().countOrNull();
            }
            next += 36;
            n++;
        }
        assertThat(log.highWatermark()).isEqualTo(next);
        assertThat(committedEnd(log)).isEqualTo(next);

        FetchResult all = await(log.read(0, Integer.MAX_VALUE));
        assertThat(bytes(all.records())).isEqualTo(expected.toByteArray());
        assertThat(offsetsAndKeys(all.records())).isEqualTo(expectedRecords);
        assertThat(all.highWatermark()).isEqualTo(next);
        for (RecordBatch b : all.records().batches()) {
            b.ensureValid(); // the CRC still holds after the base offset was rewritten
        }
        assertThat(all.records().batches()).extracting(RecordBatch::compressionType).extracting(Enum::name)
                .containsSubsequence("NONE", "GZIP", "LZ4", "ZSTD");
    }

    @Test
    void fetchInsideABatch_returnsTheWholeBatch_andTheConsumerSkipsToTheFetchedRecord() {
        KafkaPartitionLog log = open("broker-a", "topic-0");
        await(log.append(concat(batch("a", 5).build(), batch("b", 10).compressed(Compression.lz4().build()).build(),
                batch("c", 5).build())));

        FetchResult one = await(log.read(9, 1));
        List<RecordBatch> batches = new ArrayList<>();
        one.records().batches().forEach(batches::add);
        assertThat(batches).hasSize(1);
        assertThat(batches.get(0).baseOffset()).isEqualTo(5);
        assertThat(batches.get(0).lastOffset()).isEqualTo(14);
        // what a Kafka consumer does with a fetch that starts inside a batch: skip records below the fetch offset
        List<String> delivered = new ArrayList<>();
        for (RecordBatch b : one.records().batches()) {
            for (Record r : b) {
                if (r.offset() >= 9) {
                    delivered.add(r.offset() + ":" + StandardCharsets.UTF_8.decode(r.key()));
                }
            }
        }
        assertThat(delivered).containsExactly("9:b-4", "10:b-5", "11:b-6", "12:b-7", "13:b-8", "14:b-9");

        FetchResult more = await(log.read(14, Integer.MAX_VALUE));
        assertThat(offsetsAndKeys(more.records())).hasSize(15).startsWith("5:b-0").endsWith("19:c-4");
        assertThat(await(log.read(20, 100)).records().sizeInBytes()).isZero();
        NereusException beyond = refused(() -> await(log.read(21, 100)), ErrorCode.OFFSET_OUT_OF_RANGE);
        assertThat(beyond.context()).containsEntry("highWatermark", 20L).containsEntry("logStartOffset", 0L);
    }

    @Test
    void invalidBatches_areRefusedNamingTheBatchAndRule_andNothingOfTheAppendIsStored() {
        KafkaPartitionLog log = open("broker-a", "topic-0");
        await(log.append(batch("ok", 3).build()));
        MemoryRecords good = batch("good", 4).build();

        byte[] corrupt = bytes(concat(good, batch("bad", 4).build()));
        corrupt[corrupt.length - 3] ^= 0x55; // a value byte of the second batch: covered by its CRC
        NereusException crc = refused(() -> await(log.append(MemoryRecords.readableRecords(ByteBuffer.wrap(corrupt)))),
                ErrorCode.INVALID_RECORD_BATCH);
        assertThat(crc.context()).containsEntry("batch", 1).containsEntry("rule", BatchRule.CRC)
                .containsEntry("position", good.sizeInBytes());

        MemoryRecords v1 = batch("old", 2).build(RecordBatch.MAGIC_VALUE_V1);
        assertThat(refused(() -> await(log.append(concat(good, v1))), ErrorCode.INVALID_RECORD_BATCH).context())
                .containsEntry("batch", 1).containsEntry("rule", BatchRule.MAGIC).containsEntry("magic", (byte) 1);

        byte[] whole = bytes(concat(good, batch("cut", 6).build()));
        MemoryRecords truncated = MemoryRecords.readableRecords(ByteBuffer.wrap(whole, 0, whole.length - 10).slice());
        assertThat(refused(() -> await(log.append(truncated)), ErrorCode.INVALID_RECORD_BATCH).context())
                .containsEntry("batch", 1).containsEntry("rule", BatchRule.LENGTH);

        byte[] delta = bytes(good);
        ByteBuffer.wrap(delta).putInt(DefaultRecordBatch.LAST_OFFSET_DELTA_OFFSET, 7); // 8 offsets for 4 records
        KafkaBatches.fixCrc(delta, 0, delta.length); // a well-formed batch whose count and delta disagree
        assertThat(refused(() -> await(log.append(MemoryRecords.readableRecords(ByteBuffer.wrap(delta)))),
                ErrorCode.INVALID_RECORD_BATCH).context())
                .containsEntry("batch", 0).containsEntry("rule", BatchRule.RECORD_COUNT)
                .containsEntry("count", 4).containsEntry("lastOffsetDelta", 7L);

        assertThat(log.highWatermark()).isEqualTo(3);
        assertThat(committedEnd(log)).isEqualTo(3);
        assertThat(offsetsAndKeys(await(log.read(0, Integer.MAX_VALUE)).records()))
                .containsExactly("0:ok-0", "1:ok-1", "2:ok-2");
        assertThat(await(log.append(good)).baseOffset()).isEqualTo(3);
    }

    @Test
    void idempotentProducer_retriesAreAcknowledgedWithTheirOffsets_outOfOrderAndFencedEpochsRefused() {
        KafkaPartitionLog log = open("broker-a", "topic-0");
        long pid = 4_000;
        assertThat(await(log.append(batch("p", 10).producer(pid, 0, 0).build())).baseOffset()).isZero();
        // a batch and its retry in flight together: the retry waits for the original and gets its offsets
        CompletableFuture<AppendResult> first = log.append(batch("q", 10).producer(pid, 0, 10).build());
        CompletableFuture<AppendResult> retry = log.append(batch("q", 10).producer(pid, 0, 10).build());
        assertThat(await(first).batches()).containsExactly(new AppendResult.Batch(10, 19, false));
        assertThat(await(retry).batches()).containsExactly(new AppendResult.Batch(10, 19, true));
        // an older retry (within the last five batches) too
        assertThat(await(log.append(batch("p", 10).producer(pid, 0, 0).build())).batches())
                .containsExactly(new AppendResult.Batch(0, 9, true));
        assertThat(log.highWatermark()).isEqualTo(20);

        assertThat(refused(() -> await(log.append(batch("gap", 5).producer(pid, 0, 30).build())),
                ErrorCode.OUT_OF_ORDER_SEQUENCE).context()).containsEntry("producerId", pid)
                .containsEntry("sequence", 30).containsEntry("lastSequence", 19);
        assertThat(refused(() -> await(log.append(batch("e1", 5).producer(pid, 1, 7).build())),
                ErrorCode.OUT_OF_ORDER_SEQUENCE).context()).containsEntry("epoch", 1);
        assertThat(await(log.append(batch("e1", 5).producer(pid, 1, 0).build())).baseOffset()).isEqualTo(20);
        assertThat(refused(() -> await(log.append(batch("zombie", 5).producer(pid, 0, 20).build())),
                ErrorCode.INVALID_PRODUCER_EPOCH).context()).containsEntry("epoch", 0).containsEntry("currentEpoch", 1);
        // a refused batch refuses its whole append: the new batch before it is not stored either
        refused(() -> await(log.append(concat(batch("x", 1).build(), batch("zombie", 5).producer(pid, 0, 20).build()))),
                ErrorCode.INVALID_PRODUCER_EPOCH);
        assertThat(log.highWatermark()).isEqualTo(25);
        assertThat(committedEnd(log)).isEqualTo(25);
        // a producer the log never saw may start anywhere; batches without a producer id are never deduplicated
        assertThat(await(log.append(batch("late", 2).producer(9, 3, 500).build())).baseOffset()).isEqualTo(25);
        assertThat(await(log.append(batch("plain", 2).build())).baseOffset()).isEqualTo(27);
        assertThat(await(log.append(batch("plain", 2).build())).baseOffset()).isEqualTo(29);
    }

    @Test
    void producerRetries_areDeduplicatedAfterARestart_fromTheReplayedStreamAndFromTheSavedState() {
        StreamStorage a = engine.storage("broker-a", CONFIG);
        KafkaPartitionLog log = open(a, "topic-0", NO_SNAPSHOTS);
        long pid = 77;
        for (int seq = 0; seq < 30; seq += 10) {
            await(log.append(batch("s" + seq, 10).producer(pid, 2, seq).build()));
        }
        assertThat(await(engine.metadata.producers().load(log.streamId()))).isEqualTo(ProducerSnapshot.empty());

        // a crash: nothing saved; the new writer replays the stream's batches and fences the old one
        KafkaPartitionLog restarted = open(engine.storage("broker-b", CONFIG), "topic-0", NO_SNAPSHOTS);
        assertThat(restarted.highWatermark()).isEqualTo(30);
        assertThat(restarted.producerState(pid).orElseThrow().last().lastSequence()).isEqualTo(29);
        assertThat(await(restarted.append(batch("s20", 10).producer(pid, 2, 20).build())).batches())
                .containsExactly(new AppendResult.Batch(20, 29, true));
        assertThat(await(restarted.append(batch("s10", 10).producer(pid, 2, 10).build())).batches())
                .containsExactly(new AppendResult.Batch(10, 19, true));
        refused(() -> await(log.append(batch("s30", 10).producer(pid, 2, 30).build())), ErrorCode.FENCED);
        assertThat(await(restarted.append(batch("s30", 10).producer(pid, 2, 30).build())).baseOffset()).isEqualTo(30);

        // a clean close saves the state; the next writer starts from it and replays nothing
        await(restarted.close());
        ProducerSnapshot saved = await(engine.metadata.producers().load(restarted.streamId()));
        assertThat(saved.endOffset()).isEqualTo(40);
        assertThat(saved.producers().get(pid).batches()).hasSize(4);
        KafkaPartitionLog third = open(engine.storage("broker-c", CONFIG), "topic-0", NO_SNAPSHOTS);
        assertThat(await(third.append(batch("s30", 10).producer(pid, 2, 30).build())).batches())
                .containsExactly(new AppendResult.Batch(30, 39, true));
        assertThat(await(third.append(batch("s40", 10).producer(pid, 2, 40).build())).baseOffset()).isEqualTo(40);
        assertThat(committedEnd(third)).isEqualTo(50);
    }

    /**
     * The WAL slice's ledger is fenced under the log (a recovery open from another client), so the appends in flight
     * fail; the log re-reads the head, and the producer's retries of the failed batches are stored in sequence at the
     * committed end, not taken for duplicates (they were never committed).
     */
    @Test
    void aFailedWalWrite_failsTheAppendsInFlight_thenTheLogRecovers_andTheProducersRetriesAreStoredInSequence()
            throws Exception {
        // a WAL batch is sealed when it reaches 1 KiB (each of these batches does) and never by the timer
        StreamStorage storage = engine.storage("broker-a", CONFIG.withWal(WAL.withFlush(1024, Duration.ofSeconds(20))
                .withFlushWhenIdle(false)));
        KafkaPartitionLog log = open(storage, "topic-0", NO_SNAPSHOTS);
        long pid = 11;
        assertThat(await(log.append(batch("p0", 2).producer(pid, 0, 0).valueBytes(1024).build())).baseOffset())
                .isZero();
        IndexRecord first = await(engine.metadata.index().indexRecords(log.streamId(), ReadView.COMMITTED)).get(0);
        TestLedgers.recover(BK.newClient(), ((WalTarget) first.target()).sliceId(), WAL.password());

        CompletableFuture<AppendResult> lost1 = log.append(batch("p1", 2).producer(pid, 0, 2).valueBytes(1024).build());
        CompletableFuture<AppendResult> lost2 = log.append(batch("p2", 2).producer(pid, 0, 4).valueBytes(1024).build());
        assertThatThrownBy(() -> await(lost1)).isInstanceOfSatisfying(NereusException.class,
                e -> assertThat(e.retriable()).as("%s", e.code()).isTrue());
        // the second batch fails with the write too, or, when the log has already seen the first one fail and
        // re-read its head, is refused as out of sequence (the batch before it was never stored), as Kafka's broker
        // refuses it; either way the producer retries both, in order, as below
        assertThatThrownBy(() -> await(lost2)).isInstanceOfSatisfying(NereusException.class,
                e -> assertThat(e.retriable() || e.code() == ErrorCode.OUT_OF_ORDER_SEQUENCE).as("%s", e.code())
                        .isTrue());
        assertThat(await(log.append(batch("p1", 2).producer(pid, 0, 2).valueBytes(1024).build())).batches())
                .containsExactly(new AppendResult.Batch(2, 3, false));
        assertThat(await(log.append(batch("p2", 2).producer(pid, 0, 4).valueBytes(1024).build())).batches())
                .containsExactly(new AppendResult.Batch(4, 5, false));
        assertThat(await(log.append(batch("p2", 2).producer(pid, 0, 4).valueBytes(1024).build())).batches())
                .containsExactly(new AppendResult.Batch(4, 5, true));
        assertThat(committedEnd(log)).isEqualTo(6);
        assertThat(offsetsAndKeys(await(log.read(0, Integer.MAX_VALUE)).records())).containsExactly("0:p0-0",
                "1:p0-1", "2:p1-0", "3:p1-1", "4:p2-0", "5:p2-1");
    }

    @Test
    void reads_areByteExactFromGenerationZero_andFromObjectsAfterMaterialization_whichKeepBatchesWhole() throws Exception {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        KafkaPartitionLog log = open(storage, "topic-0", KafkaLogConfig.defaults());
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        Set<Long> batchStarts = new TreeSet<>();
        long next = 0;
        List<Compression> compressions = KafkaBatches.compressions();
        for (int i = 0; i < 40; i++) {
            MemoryRecords m = batch("r" + i, 3 + i % 7).compressed(compressions.get(i % 4)).valueBytes(300).build();
            await(log.append(m));
            expected.writeBytes(rebased(m, next));
            batchStarts.add(next);
            next += 3 + i % 7;
        }
        storage.clearTailCache();
        byte[] fromWal = bytes(await(log.read(0, Integer.MAX_VALUE)).records());
        assertThat(fromWal).isEqualTo(expected.toByteArray());
        assertThat(storage.walBytesRead()).isPositive();

        await(storage.rollWalSlice());
        await(storage.materializeSealedSlices());
        List<IndexRecord> records = await(engine.metadata.index().indexRecords(log.streamId(), ReadView.COMMITTED));
        long end = next;
        assertThat(records).hasSizeGreaterThan(1).allSatisfy(r -> {
            assertThat(r.target()).isInstanceOf(ObjectTarget.class);
            // an object starts and ends on batch boundaries: no ranged entry is split
            assertThat(batchStarts).contains(r.range().start());
            assertThat(r.range().end() == end || batchStarts.contains(r.range().end())).isTrue();
        });
        // the WAL is gone: every read below comes from the objects
        for (long id : await(engine.metadata.slices().slices(WalSliceState.SEALED, 0, 1000)).keySet()) {
            TestLedgers.delete(engine.bk, id);
        }
        storage.clearTailCache();
        long objectBytesBefore = storage.objectBytesRead();
        assertThat(bytes(await(log.read(0, Integer.MAX_VALUE)).records())).isEqualTo(expected.toByteArray());
        assertThat(storage.objectBytesRead()).isGreaterThan(objectBytesBefore);
        KafkaPartitionLog cold = open(engine.storage("broker-b", CONFIG), "topic-0", KafkaLogConfig.defaults());
        for (long offset = 0; offset < next; offset++) {
            FetchResult r = await(cold.read(offset, 1));
            RecordBatch b = r.records().batches().iterator().next();
            assertThat(b.baseOffset()).isLessThanOrEqualTo(offset);
            assertThat(b.lastOffset()).isGreaterThanOrEqualTo(offset);
            byte[] got = bytes(r.records());
            int from = positionOf(expected.toByteArray(), b.baseOffset());
            assertThat(got).isEqualTo(java.util.Arrays.copyOfRange(expected.toByteArray(), from, from + got.length));
        }
    }

    /** The byte position of the batch whose base offset is {@code base} in a log's concatenated batches. */
    private static int positionOf(byte[] log, long base) {
        int at = 0;
        for (RecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(log)).batches()) {
            if (b.baseOffset() == base) {
                return at;
            }
            at += b.sizeInBytes();
        }
        throw new AssertionError("no batch at " + base);
    }

    @Test
    void offsetForTimestamp_findsTheFirstRecordAtOrAfterTheTime_acrossBatches_andFromTheLogStart() {
        KafkaPartitionLog log = open("broker-a", "topic-0");
        await(log.append(batch("a", 5).at(1_000).build()));
        await(log.append(concat(batch("b", 10).at(2_000).compressed(Compression.zstd().build()).build(),
                batch("c", 5).at(3_000).build())));
        assertThat(await(log.offsetForTimestamp(0))).contains(new TimestampOffset(1_000, 0));
        assertThat(await(log.offsetForTimestamp(1_003))).contains(new TimestampOffset(1_003, 3));
        assertThat(await(log.offsetForTimestamp(1_005))).contains(new TimestampOffset(2_000, 5));
        assertThat(await(log.offsetForTimestamp(2_005))).contains(new TimestampOffset(2_005, 10));
        assertThat(await(log.offsetForTimestamp(2_010))).contains(new TimestampOffset(3_000, 15));
        assertThat(await(log.offsetForTimestamp(3_004))).contains(new TimestampOffset(3_004, 19));
        assertThat(await(log.offsetForTimestamp(3_005))).isEqualTo(Optional.empty());

        assertThat(await(log.trim(7))).isEqualTo(7);
        assertThat(await(log.offsetForTimestamp(0))).contains(new TimestampOffset(2_002, 7));
    }

    @Test
    void trim_raisesTheLogStart_insideABatch_fetchesBelowAreOutOfRange_andAtItReturnTheWholeBatch() {
        KafkaPartitionLog log = open("broker-a", "topic-0");
        long pid = 5;
        await(log.append(batch("a", 5).producer(pid, 0, 0).build()));
        await(log.append(batch("b", 10).producer(pid, 0, 5).build()));
        assertThat(await(log.trim(8))).isEqualTo(8);
        assertThat(log.logStartOffset()).isEqualTo(8);
        assertThat(await(log.trim(3))).isEqualTo(8);
        assertThat(refused(() -> await(log.read(7, 100)), ErrorCode.OFFSET_OUT_OF_RANGE).context())
                .containsEntry("logStartOffset", 8L);
        FetchResult at = await(log.read(8, 100));
        assertThat(at.logStartOffset()).isEqualTo(8);
        assertThat(at.records().batches().iterator().next().baseOffset()).isEqualTo(5);
        refused(() -> await(log.trim(16)), ErrorCode.OFFSET_OUT_OF_RANGE);
        // the producer state was saved before the trim, so a restart needs none of the trimmed batches
        assertThat(await(engine.metadata.producers().load(log.streamId())).endOffset()).isEqualTo(15);
        KafkaPartitionLog restarted = open(engine.storage("broker-b", CONFIG), "topic-0", KafkaLogConfig.defaults());
        assertThat(restarted.logStartOffset()).isEqualTo(8);
        assertThat(await(restarted.append(batch("b", 10).producer(pid, 0, 5).build())).batches())
                .containsExactly(new AppendResult.Batch(5, 14, true));
    }
}
