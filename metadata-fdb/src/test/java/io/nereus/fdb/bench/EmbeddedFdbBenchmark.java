package io.nereus.fdb.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Throughput of small read-modify-write transactions on EmbeddedFdb: in memory on one thread, and durable
 * with 1, 8 and 32 concurrent committers (each commit fsynced, and with a sync interval of a second) beside the raw
 * rate of synced 128-byte writes on the same disk, all in one run. Not a test: run it with the command in
 * docs/benchmarks.md.
 *
 * <p>Each transaction reads one key of 100,000 at random, writes it back incremented, and commits.
 */
public final class EmbeddedFdbBenchmark {
    private static final int KEYS = 100_000;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5.0;
        Path work = Files.createTempDirectory("nereus-fdb-bench");
        try {
            System.out.printf("EmbeddedFdb benchmark: %d cores, %.1f s per measurement, work dir on the same disk as %s%n",
                    Runtime.getRuntime().availableProcessors(), seconds, work);
            System.out.printf("raw synced 128-byte writes (write + fdatasync, 1 thread): %,.0f writes/s%n",
                    rawSyncedWrites(work.resolve("raw"), seconds));
            try (EmbeddedFdb db = EmbeddedFdb.inMemory()) {
                measure("in memory, 1 thread, direct executor", db, 1, seconds, Runnable::run);
                measure("in memory, 1 thread, default executor", db, 1, seconds, db.getExecutor());
            }
            try (EmbeddedFdb db = EmbeddedFdb.open(work.resolve("durable"))) {
                for (int committers : new int[] {1, 8, 32}) {
                    measure("durable, " + committers + " committers", db, committers, seconds, Runnable::run);
                }
            }
            // the standalone broker's default: acknowledged once written, fsynced once a second
            try (EmbeddedFdb db = EmbeddedFdb.builder().directory(work.resolve("interval"))
                    .syncInterval(java.time.Duration.ofSeconds(1)).build()) {
                for (int committers : new int[] {1, 8, 32}) {
                    measure("sync interval 1 s, " + committers + " committers", db, committers, seconds,
                            Runnable::run);
                }
            }
            System.out.printf("raw synced 128-byte writes again (write + fdatasync, 1 thread): %,.0f writes/s%n",
                    rawSyncedWrites(work.resolve("raw2"), seconds));
        } finally {
            try (Stream<Path> files = Files.walk(work)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static double rawSyncedWrites(Path file, double seconds) throws IOException {
        ByteBuffer record = ByteBuffer.allocate(128);
        long n = 0;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            long start = System.nanoTime();
            long end = start + (long) (seconds * 1e9);
            while (System.nanoTime() < end) {
                record.clear();
                ch.write(record);
                ch.force(false);
                n++;
            }
            return n / ((System.nanoTime() - start) / 1e9);
        }
    }

    private static void measure(String name, Database db, int threads, double seconds, Executor executor)
            throws InterruptedException {
        AtomicLong commits = new AtomicLong();
        AtomicLong attempts = new AtomicLong();
        long warmupEnd = System.nanoTime() + 1_000_000_000L;
        long[] window = new long[2];
        List<Thread> workers = new ArrayList<>();
        long measureStart = warmupEnd;
        long measureEnd = warmupEnd + (long) (seconds * 1e9);
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (true) {
                    long now = System.nanoTime();
                    if (now >= measureEnd) {
                        return;
                    }
                    byte[] key = Tuple.from("bench", random.nextInt(KEYS)).pack();
                    db.run(tr -> {
                        attempts.incrementAndGet();
                        byte[] v = tr.get(key).join();
                        long n = v == null ? 0 : ByteBuffer.wrap(v).getLong();
                        tr.set(key, ByteBuffer.allocate(8).putLong(n + 1).array());
                        return null;
                    }, executor);
                    if (System.nanoTime() >= measureStart) {
                        commits.incrementAndGet();
                    } else {
                        attempts.set(0);
                    }
                }
            });
            w.start();
            workers.add(w);
        }
        for (Thread w : workers) {
            w.join();
        }
        window[0] = commits.get();
        System.out.printf("%-45s %,10.0f transactions/s  (%d retries)%n", name, window[0] / seconds,
                Math.max(0, attempts.get() - window[0]));
    }

    private EmbeddedFdbBenchmark() {
    }
}
