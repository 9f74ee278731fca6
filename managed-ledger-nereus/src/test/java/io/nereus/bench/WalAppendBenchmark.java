package io.nereus.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.NereusKeyspace;
import io.nereus.object.ObjectStore;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalConfig;
import io.nereus.wal.WalObserver;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
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
import java.util.function.Function;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.pulsar.metadata.bookkeeper.BKCluster;

/**
 * Append throughput and latency of 1 KiB entries: raw BookKeeper ledger writes beside Nereus stream appends
 * (1, 100 and 1,000 streams by default), all to one in-process bookie in the same run, with quorums 1/1/1, and the
 * FoundationDB write transactions per second during each Nereus measurement. Not a test; see
 * {@code docs/benchmarks.md} for the command.
 *
 * <p>Each measurement keeps a bounded number of appends in flight (a semaphore; the driver thread blocks,
 * callbacks release), warms up for one second, then measures for the given seconds and drains. Latency is
 * from the call to the completion of its future or callback. Metadata is an in-memory {@link EmbeddedFdb};
 * its write transactions are counted by wrapping {@link Database#runAsync}.
 *
 * <p>Arguments: {@code [seconds per measurement, default 5] [appends in flight, default 1000]
 * [stream counts, comma-separated, default 1,100,1000] [payload: heap (default) or direct]}; {@code direct} appends
 * a pooled direct buffer, as the broker hands its entries to the ledger. Each measured window is printed with its
 * instants and appends (a line starting {@code window}), to read a recording of the run over it; with
 * {@code -Dnereus.bench.jfr=FILE} the run records itself with JFR's {@code profile} settings into {@code FILE}.
 */
public final class WalAppendBenchmark {
    private static final int ENTRY_BYTES = 1024;
    private static final byte[] PASSWORD = new byte[0];

    private WalAppendBenchmark() {
    }

    /** One measurement: a name, the appends completed, elapsed nanoseconds, latencies in microseconds. */
    private record Result(String name, int entryBytes, long entries, long nanos, Histogram latencyMicros,
            long fdbWrites) {
        double perSecond() {
            return entries * 1e9 / nanos;
        }

        String line() {
            return String.format("%-32s %9.0f entries/s %7.1f MiB/s  p50 %6.2f ms  p99 %6.2f ms  p99.9 %6.2f ms"
                            + "  fdb write tx/s %7.0f",
                    name, perSecond(), perSecond() * entryBytes / (1 << 20),
                    latencyMicros.getValueAtPercentile(50) / 1000.0, latencyMicros.getValueAtPercentile(99) / 1000.0,
                    latencyMicros.getValueAtPercentile(99.9) / 1000.0, fdbWrites * 1e9 / nanos);
        }
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int inFlight = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        int[] streamCounts = args.length > 2 ? java.util.Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt)
                .toArray() : new int[] {1, 100, 1000};
        boolean directPayload = args.length > 3 && args[3].equals("direct");
        System.out.printf("machine: %d cores, java %s, %s %s; %d s per measurement, %d appends in flight%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
                System.getProperty("os.name"), System.getProperty("os.arch"), seconds, inFlight);
        byte[] payload = new byte[ENTRY_BYTES];
        new Random(42).nextBytes(payload);

        // -Dnereus.bench.jfr=FILE: a JFR recording (profile settings) of the run, written before the bookie stops
        // (the in-process bookie ends the JVM before a recording started on the command line is written)
        jdk.jfr.Recording recording = null;
        if (System.getProperty("nereus.bench.jfr") != null) {
            recording = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
            recording.start();
        }
        String bookieMetadata = "memory:nereus-bench-" + UUID.randomUUID();
        BKCluster cluster = BKCluster.builder().metadataServiceUri(bookieMetadata).numBookies(1).build();
        // as Pulsar's broker does: no client-side rate limit (the BookKeeper default is 5,000 adds/s)
        ClientConfiguration clientConf = BKCluster.newBaseClientConfiguration();
        clientConf.setMetadataServiceUri("metadata-store:" + bookieMetadata);
        clientConf.setThrottleValue(0);
        AtomicLong fdbWrites = new AtomicLong();
        try (EmbeddedFdb fdb = EmbeddedFdb.inMemory(); BookKeeper bk = new BookKeeper(clientConf)) {
            Database counted = countingWrites(fdb, fdbWrites);
            MetadataStore metadata = MetadataStore.open(counted,
                    new NereusKeyspace(new Subspace(Tuple.from("nereus", "bench"))), fdb.getExecutor())
                    .get(30, TimeUnit.SECONDS);
            List<Result> results = new ArrayList<>();
            List<String> groupLines = new ArrayList<>();

            results.add(raw("raw BookKeeper", bk, payload, seconds, inFlight, fdbWrites));
            WalConfig wal = WalConfig.defaults().withQuorums(1, 1, 1);
            // the same bytes as WAL-batch-sized entries with the WAL's pipeline depth: the bookie's byte rate
            byte[] batchSized = new byte[wal.flushBytes()];
            new Random(43).nextBytes(batchSized);
            Result rawBatches = raw("raw BookKeeper, 256 KiB entries", bk, batchSized, seconds,
                    wal.maxInFlightBatches(), fdbWrites);

            for (int streams : streamCounts) {
                try (ObjectStore objects = EngineFixture.temporaryObjectStore();
                        StreamStorage storage = StreamStorage.create(StorageConfig.defaults().withWal(wal), bk,
                                metadata, objects, "bench-" + streams, Clock.systemUTC(), WalObserver.NONE)) {
                    List<NereusStream> handles = new ArrayList<>();
                    for (int s = 0; s < streams; s++) {
                        NereusStream h = storage.openStream("bench-" + streams + "-" + s).get(30, TimeUnit.SECONDS);
                        h.acquireWriter().get(30, TimeUnit.SECONDS);
                        handles.add(h);
                    }
                    // "direct": the payload as the broker hands it over, a pooled direct buffer (the stream takes
                    // a retained slice of it per append); otherwise a heap array
                    ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(ENTRY_BYTES).writeBytes(payload);
                    List<AppendEntry> entry = List.of(directPayload ? AppendEntry.of(direct) : AppendEntry.of(payload));
                    String name = "Nereus, " + streams + " stream" + (streams > 1 ? "s" : "");
                    io.nereus.wal.WalStats before = storage.walStats();
                    long t0 = System.nanoTime();
                    results.add(run(name, ENTRY_BYTES, seconds, inFlight, fdbWrites,
                            i -> handles.get(i % streams).append(entry).thenApply(r -> null)));
                    double s = (System.nanoTime() - t0) / 1e9;
                    io.nereus.wal.WalStats after = storage.walStats();
                    groupLines.add(String.format("%s (warm-up included): WAL batches %.0f/s, commit groups %.0f/s, "
                            + "commit transactions %.0f/s, stream appends per transaction %.1f; EmbeddedFdb %s",
                            name, (after.batchesWritten() - before.batchesWritten()) / s,
                            (after.commitGroups() - before.commitGroups()) / s,
                            (after.commitTransactions() - before.commitTransactions()) / s,
                            (double) (after.appendsCommitted() - before.appendsCommitted())
                                    / Math.max(1, after.commitTransactions() - before.commitTransactions()),
                            fdb.stats()));
                    direct.release();
                }
            }

            // once more at the end: the first measurement also pays for JIT warm-up of the shared client paths
            results.add(raw("raw BookKeeper, again", bk, payload, seconds, inFlight, fdbWrites));

            System.out.printf("WAL: flush %d bytes or %s, %d batches in flight; quorums 1/1/1; BookKeeper client"
                    + " throttle off; metadata: EmbeddedFdb in memory%n",
                    wal.flushBytes(), wal.flushDelay(), wal.maxInFlightBatches());
            for (Result r : results) {
                System.out.println(r.line());
            }
            double raw = Math.max(results.get(0).perSecond(), results.get(results.size() - 1).perSecond());
            for (Result r : results.subList(1, results.size() - 1)) {
                System.out.printf("%s: / raw 1 KiB entries (the better run) %.2f, bytes / raw 256 KiB entries %.2f,"
                        + " entries per fdb write tx %.0f%n", r.name(), r.perSecond() / raw,
                        r.perSecond() * ENTRY_BYTES / (rawBatches.perSecond() * rawBatches.entryBytes()),
                        r.fdbWrites() == 0 ? 0.0 : (double) r.entries() / r.fdbWrites());
            }
            System.out.println(rawBatches.line());
            groupLines.forEach(System.out::println);
        } finally {
            if (recording != null) {
                recording.dump(java.nio.file.Path.of(System.getProperty("nereus.bench.jfr")));
                recording.close();
            }
            cluster.close();
        }
    }

    /** Pipelined {@code appendAsync} of {@code payload} to one new ledger with quorums 1/1/1. */
    private static Result raw(String name, BookKeeper bk, byte[] payload, int seconds, int inFlight,
            AtomicLong fdbWrites) throws Exception {
        WriteHandle ledger = TestLedgers.create(bk, PASSWORD);
        try {
            return run(name, payload.length, seconds, inFlight, fdbWrites,
                    i -> ledger.appendAsync(Unpooled.wrappedBuffer(payload)).thenApply(entryId -> null));
        } finally {
            ledger.close();
        }
    }

    /** Runs {@code append} (given a sequence number) with at most {@code inFlight} outstanding. */
    private static Result run(String name, int entryBytes, int seconds, int inFlight, AtomicLong fdbWrites,
            IntFunction<CompletableFuture<Void>> append) throws Exception {
        Recorder recorder = new Recorder(3);
        Semaphore permits = new Semaphore(inFlight);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong completed = new AtomicLong();
        int seq = 0;
        // warm-up, then the measured window
        for (boolean measuring : new boolean[] {false, true}) {
            long duration = TimeUnit.SECONDS.toNanos(measuring ? seconds : 1);
            recorder.reset();
            long completedBefore = completed.get();
            long writesBefore = fdbWrites.get();
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
                // for reading a recording of the run (e.g. JFR allocation samples) over exactly this window
                System.out.printf("window %s: %s %s, %d appends%n", name,
                        java.time.Instant.now().minusNanos(nanos), java.time.Instant.now(),
                        completed.get() - completedBefore);
                return new Result(name, entryBytes, completed.get() - completedBefore, nanos,
                        recorder.getIntervalHistogram(), fdbWrites.get() - writesBefore);
            }
        }
        throw new AssertionError("unreachable");
    }

    /** {@code db} with every {@code runAsync} (a read-write transaction, retries included once) counted. */
    private static Database countingWrites(EmbeddedFdb db, AtomicLong writes) {
        InvocationHandler handler = (proxy, method, args) -> {
            if (method.getName().equals("runAsync") && args != null && args[0] instanceof Function) {
                writes.incrementAndGet();
            }
            try {
                return method.invoke(db, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (Database) Proxy.newProxyInstance(Database.class.getClassLoader(), new Class<?>[] {Database.class},
                handler);
    }
}
