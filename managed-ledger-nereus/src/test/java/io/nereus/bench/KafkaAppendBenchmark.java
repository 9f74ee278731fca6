package io.nereus.bench;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.generation.MaterializerConfig;
import io.nereus.kafka.KafkaLogConfig;
import io.nereus.kafka.KafkaPartitionLog;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.NereusKeyspace;
import io.nereus.object.ObjectStore;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import io.nereus.wal.WalObserver;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.pulsar.metadata.bookkeeper.BKCluster;

/**
 * Append throughput of Kafka record batches through {@link KafkaPartitionLog} (16 KiB uncompressed v2 batches of 100
 * records, built once by kafka-clients and appended again and again: each append validates the batch, copies it,
 * rewrites its base offset and stores it as one ranged entry) beside Pulsar-entry appends straight to
 * {@link NereusStream} (1 KiB entries, and 16 KiB entries for the same bytes per append), all to one in-process
 * bookie (quorums 1/1/1, WAL defaults, materializer off), metadata in an in-memory EmbeddedFdb. The three measurements alternate, round
 * after round, so the machine's noise spreads over all of them. Not a test; see {@code docs/kafka.md} for the command.
 *
 * <p>Each measurement keeps a bounded number of appends in flight over one stream (a semaphore), warms up for one
 * second, then measures for the given seconds and drains.
 *
 * <p>Arguments: {@code [rounds, default 3] [seconds per measurement, default 5] [Kafka appends in flight, default 64]
 * [Pulsar 1 KiB appends in flight, default 1000]}.
 */
public final class KafkaAppendBenchmark {
    private static final int RECORDS_PER_BATCH = 100;
    private static final int BATCH_BYTES = 16 * 1024;

    private KafkaAppendBenchmark() {
    }

    private record Result(String name, long appends, long nanos, Histogram latencyMicros) {
        double perSecond() {
            return appends * 1e9 / nanos;
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int kafkaInFlight = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        int pulsarInFlight = args.length > 3 ? Integer.parseInt(args[3]) : 1000;
        MemoryRecords batch = kafkaBatch();
        byte[] entry1k = new byte[1024];
        byte[] entry16k = new byte[batch.sizeInBytes()];
        new Random(42).nextBytes(entry1k);
        new Random(43).nextBytes(entry16k);
        System.out.printf("machine: %d cores, java %s; %d rounds, %d s per measurement; Kafka batch %d bytes, %d records,"
                        + " %d in flight; Pulsar entries %d in flight (1 KiB), %d in flight (16 KiB)%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), rounds, seconds,
                batch.sizeInBytes(), RECORDS_PER_BATCH, kafkaInFlight, pulsarInFlight, kafkaInFlight);

        String bookieMetadata = "memory:nereus-kafka-bench-" + UUID.randomUUID();
        BKCluster cluster = BKCluster.builder().metadataServiceUri(bookieMetadata).numBookies(1).build();
        ClientConfiguration clientConf = BKCluster.newBaseClientConfiguration();
        clientConf.setMetadataServiceUri("metadata-store:" + bookieMetadata);
        clientConf.setThrottleValue(0);
        List<List<Result>> byKind = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        try (EmbeddedFdb fdb = EmbeddedFdb.inMemory(); BookKeeper bk = new BookKeeper(clientConf);
                ObjectStore objects = EngineFixture.temporaryObjectStore()) {
            MetadataStore metadata = MetadataStore.open(fdb, new NereusKeyspace(new Subspace(Tuple.from("nereus",
                    "kafka-bench"))), fdb.getExecutor()).get(30, TimeUnit.SECONDS);
            WalConfig wal = WalConfig.defaults().withQuorums(1, 1, 1);
            // the materializer off: it would copy sealed slices into objects while appends are measured
            StorageConfig config = StorageConfig.defaults().withWal(wal)
                    .withMaterializer(MaterializerConfig.defaults().withEnabled(false));
            try (StreamStorage storage = StreamStorage.create(config, bk, metadata,
                    objects, "bench", Clock.systemUTC(), WalObserver.NONE)) {
                KafkaPartitionLog log = KafkaPartitionLog.open(storage, metadata, "kafka-0", KafkaLogConfig.defaults())
                        .get(30, TimeUnit.SECONDS);
                NereusStream pulsar = storage.openStream("pulsar-0").get(30, TimeUnit.SECONDS);
                pulsar.acquireWriter().get(30, TimeUnit.SECONDS);
                List<AppendEntry> small = List.of(AppendEntry.of(entry1k));
                List<AppendEntry> large = List.of(AppendEntry.of(entry16k));
                for (int round = 1; round <= rounds; round++) {
                    byKind.get(0).add(run("Kafka 16 KiB batches", seconds, kafkaInFlight,
                            i -> log.append(batch).thenApply(r -> null)));
                    byKind.get(1).add(run("Pulsar 1 KiB entries", seconds, pulsarInFlight,
                            i -> pulsar.append(small).thenApply(r -> null)));
                    byKind.get(2).add(run("Pulsar 16 KiB entries", seconds, kafkaInFlight,
                            i -> pulsar.append(large).thenApply(r -> null)));
                    System.out.printf("round %d: Kafka %.0f batches/s (%.0f records/s), Pulsar 1 KiB %.0f entries/s,"
                                    + " Pulsar 16 KiB %.0f entries/s%n", round, byKind.get(0).get(round - 1).perSecond(),
                            byKind.get(0).get(round - 1).perSecond() * RECORDS_PER_BATCH,
                            byKind.get(1).get(round - 1).perSecond(), byKind.get(2).get(round - 1).perSecond());
                }
                log.close().get(30, TimeUnit.SECONDS);
            }
        } finally {
            cluster.close();
        }
        System.out.println("summary over rounds: median (min..max); latency p50/p99 of the median round");
        summary(byKind.get(0), batch.sizeInBytes(), "batches", RECORDS_PER_BATCH);
        summary(byKind.get(1), entry1k.length, "entries", 1);
        summary(byKind.get(2), entry16k.length, "entries", 1);
    }

    private static void summary(List<Result> results, int bytes, String unit, int recordsPer) {
        List<Result> sorted = new ArrayList<>(results);
        sorted.sort((a, b) -> Double.compare(a.perSecond(), b.perSecond()));
        Result median = sorted.get(sorted.size() / 2);
        double min = sorted.get(0).perSecond();
        double max = sorted.get(sorted.size() - 1).perSecond();
        System.out.printf("%-24s %8.0f %s/s (%.0f..%.0f)  %9.0f records/s  %6.1f MiB/s  p50 %6.2f ms  p99 %6.2f ms%n",
                median.name(), median.perSecond(), unit, min, max, median.perSecond() * recordsPer,
                median.perSecond() * bytes / (1 << 20), median.latencyMicros().getValueAtPercentile(50) / 1000.0,
                median.latencyMicros().getValueAtPercentile(99) / 1000.0);
    }

    /** One uncompressed v2 batch of 100 records (random 120-byte values, 8-byte keys) of about 16 KiB. */
    private static MemoryRecords kafkaBatch() {
        Random random = new Random(7);
        ByteBuffer buf = ByteBuffer.allocate(2 * BATCH_BYTES);
        MemoryRecordsBuilder b = MemoryRecords.builder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L);
        int valueBytes = (BATCH_BYTES - 61) / RECORDS_PER_BATCH - 8 - 12;
        long now = System.currentTimeMillis();
        for (int i = 0; i < RECORDS_PER_BATCH; i++) {
            byte[] key = ByteBuffer.allocate(8).putLong(i).array();
            byte[] value = new byte[valueBytes];
            random.nextBytes(value);
            b.append(now + i, key, value);
        }
        return b.build();
    }

    /** Runs {@code append} (given a sequence number) with at most {@code inFlight} outstanding. */
    private static Result run(String name, int seconds, int inFlight, IntFunction<CompletableFuture<Void>> append)
            throws Exception {
        Recorder recorder = new Recorder(3);
        Semaphore permits = new Semaphore(inFlight);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong completed = new AtomicLong();
        int seq = 0;
        for (boolean measuring : new boolean[] {false, true}) {
            long duration = TimeUnit.SECONDS.toNanos(measuring ? seconds : 1);
            recorder.reset();
            long completedBefore = completed.get();
            long start = System.nanoTime();
            long end = start + duration;
            while (System.nanoTime() < end && failure.get() == null) {
                if (!permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    continue;
                }
                long t0 = System.nanoTime();
                append.apply(seq++).whenComplete((v, t) -> {
                    if (t != null) {
                        failure.compareAndSet(null, t);
                    } else {
                        recorder.recordValue(Math.max(1, (System.nanoTime() - t0) / 1000));
                        completed.incrementAndGet();
                    }
                    permits.release();
                });
            }
            if (!permits.tryAcquire(inFlight, 60, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name + ": appends did not drain within 60 s");
            }
            long nanos = System.nanoTime() - start;
            permits.release(inFlight);
            if (failure.get() != null) {
                throw new IllegalStateException(name + ": an append failed", failure.get());
            }
            if (measuring) {
                return new Result(name, completed.get() - completedBefore, nanos, recorder.getIntervalHistogram());
            }
        }
        throw new AssertionError("unreachable");
    }
}
