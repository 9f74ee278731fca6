package io.nereus.metadata;

import com.apple.foundationdb.directory.DirectoryLayer;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Throughput of the metadata operations on an in-memory EmbeddedFdb: batch commits of 1 and of 100 streams
 * per transaction (one committer, each commit awaited, as the WAL writer applies commits in order), and
 * generation-index lookups (1 and 8 concurrent readers) over a stream of 10,000 records. Not a test: run it
 * with the command in docs/benchmarks.md.
 */
public final class MetadataBenchmark {
    private MetadataBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3.0;
        System.out.printf("Metadata benchmark on in-memory EmbeddedFdb: %d cores, %.1f s per measurement%n",
                Runtime.getRuntime().availableProcessors(), seconds);
        commits(1, 1.0, false);
        commits(1, seconds, true);
        commits(100, seconds, true);
        commits(1000, seconds, true);
        long fixed = Long.getLong("nereus.bench.fixedBatches", 0);
        if (fixed > 0) {
            // a store that keeps growing, as a broker's does until its slices are collected
            commits(1000, seconds, true, fixed);
        }
        if (Boolean.getBoolean("nereus.bench.commitsOnly")) {
            return;
        }
        lookups(1, 1.0, false);
        lookups(1, seconds, true);
        lookups(8, seconds, true);
    }

    /**
     * The store under a DirectoryLayer directory, as the broker opens it: its keys start with the directory's
     * short prefix, not with a packed tuple of names.
     */
    private static MetadataStore open(EmbeddedFdb db) throws Exception {
        return DirectoryLayer.getDefault().createOrOpen(db, List.of("nereus", "bench"))
                .thenCompose(root -> MetadataStore.open(db, new NereusKeyspace(root), db.getExecutor()))
                .get(30, TimeUnit.SECONDS);
    }

    /**
     * CPU time of this process: the benchmark's figure that load beside it moves least (the machines are shared),
     * though caches and frequency still do.
     */
    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static void commits(int streams, double seconds, boolean report) throws Exception {
        commits(streams, seconds, report, 0);
    }

    /** Commits transactions of {@code streams} appends for {@code seconds}, or {@code fixedBatches} of them if above 0. */
    private static void commits(int streams, double seconds, boolean report, long fixedBatches) throws Exception {
        try (EmbeddedFdb db = EmbeddedFdb.inMemory()) {
            MetadataStore store = open(db);
            List<StreamId> ids = new ArrayList<>();
            List<Long> epochs = new ArrayList<>();
            for (int i = 0; i < streams; i++) {
                StreamId s = store.catalog().openStream("bench-" + i).get().streamId();
                ids.add(s);
                epochs.add(store.streams().acquireWriter(s, "bench").get().writerEpoch());
            }
            long lease = store.slices().takeLease("bench", java.time.Duration.ofSeconds(30)).get(30, TimeUnit.SECONDS);
            long[] ends = new long[streams];
            long batches = 0;
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            long start = System.nanoTime();
            long cpuStart = processCpuNanos();
            while (fixedBatches > 0 ? batches < fixedBatches : System.nanoTime() < deadline) {
                if (batches % 10_000 == 0) {
                    // the WAL writer registers each slice before committing into it
                    store.slices().register(1 + batches / 10_000, "bench", lease).get(30, TimeUnit.SECONDS);
                }
                List<StreamAppend> batch = new ArrayList<>(streams);
                for (int i = 0; i < streams; i++) {
                    batch.add(new StreamAppend(ids.get(i), epochs.get(i), OffsetRange.of(ends[i], ends[i] + 1),
                            new WalTarget(1 + batches / 10_000, batches % 10_000, i), Checksum.crc32c(batches), 1, 1024));
                    ends[i]++;
                }
                CommitResult r = store.streams().commit(batch).get(30, TimeUnit.SECONDS);
                if (!(r instanceof CommitResult.Committed)) {
                    throw new IllegalStateException("benchmark commit refused: " + r);
                }
                batches++;
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            double cpuMicrosPerAppend = (processCpuNanos() - cpuStart) / 1e3 / (batches * streams);
            if (report) {
                System.out.printf("commit, %4d streams per transaction: %,8.0f transactions/s, %,10.0f stream appends/s, "
                        + "%.2f us of process CPU per stream append, %,d keys stored%n",
                        streams, batches / elapsed, batches * streams / elapsed, cpuMicrosPerAppend,
                        db.stats().liveKeys());
            }
        }
    }

    private static void lookups(int readers, double seconds, boolean report) throws Exception {
        int records = 10_000;
        try (EmbeddedFdb db = EmbeddedFdb.inMemory()) {
            MetadataStore store = open(db);
            StreamId s = store.catalog().openStream("lookup").get().streamId();
            long epoch = store.streams().acquireWriter(s, "bench").get().writerEpoch();
            long lease = store.slices().takeLease("bench", java.time.Duration.ofSeconds(30)).get(30, TimeUnit.SECONDS);
            store.slices().register(1, "bench", lease).get(30, TimeUnit.SECONDS);
            for (int i = 0; i < records; i++) {
                store.streams().commit(List.of(new StreamAppend(s, epoch, OffsetRange.of(4L * i, 4L * i + 4),
                        new WalTarget(1, i, 0), Checksum.crc32c(i), 4, 4096))).get(30, TimeUnit.SECONDS);
            }
            long deadline = System.nanoTime() + (long) (seconds * 1e9);
            long start = System.nanoTime();
            List<CompletableFuture<Long>> workers = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(readers);
            for (int w = 0; w < readers; w++) {
                SplittableRandom rnd = new SplittableRandom(w);
                workers.add(CompletableFuture.supplyAsync(() -> {
                    long n = 0;
                    while (System.nanoTime() < deadline) {
                        IndexLookup l = store.index().lookup(s, ReadView.COMMITTED, rnd.nextLong(4L * records)).join();
                        if (!(l instanceof IndexLookup.Resolved)) {
                            throw new IllegalStateException("benchmark lookup did not resolve: " + l);
                        }
                        n++;
                    }
                    return n;
                }, pool));
            }
            long total = 0;
            for (CompletableFuture<Long> w : workers) {
                total += w.get();
            }
            pool.shutdown();
            double elapsed = (System.nanoTime() - start) / 1e9;
            if (report) {
                System.out.printf("lookup, %d reader(s), %,d records: %,8.0f lookups/s%n", readers, records, total / elapsed);
            }
        }
    }
}
