package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.tuple.Tuple;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** EmbeddedFdb.open(dir): acknowledged commits survive reopen, crashes cut the log only at a prefix. */
class EmbeddedFdbDurabilityTest {
    @TempDir
    Path tmp;
    Path dir;

    @org.junit.jupiter.api.BeforeEach
    void setUp() {
        dir = tmp.resolve("db");
    }

    private static byte[] key(String name, long i) {
        return Tuple.from(name, i).pack();
    }

    /** Commit i sets ("k", i) and advances ("last") to i, so the recovered state names the prefix it holds. */
    private static void commitNumbered(Database db, long i) {
        db.run(tr -> {
            tr.set(key("k", i), Tuple.from(i).pack());
            tr.set(Tuple.from("last").pack(), Tuple.from(i).pack());
            tr.mutate(MutationType.ADD, Tuple.from("count").pack(), le(1));
            return null;
        });
    }

    private static byte[] le(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    /** The number of numbered commits the database holds, checking they form an exact prefix. */
    private static long prefixLength(Database db) {
        return db.read(tr -> {
            byte[] last = tr.get(Tuple.from("last").pack()).join();
            List<KeyValue> rows = tr.getRange(Range.startsWith(Tuple.from("k").pack())).asList().join();
            long n = last == null ? 0 : Tuple.fromBytes(last).getLong(0) + 1;
            assertThat(rows).hasSize((int) n);
            for (int i = 0; i < rows.size(); i++) {
                assertThat(Tuple.fromBytes(rows.get(i).getKey()).getLong(1)).isEqualTo(i);
            }
            byte[] count = tr.get(Tuple.from("count").pack()).join();
            long c = count == null ? 0 : ByteBuffer.wrap(count).order(ByteOrder.LITTLE_ENDIAN).getLong();
            assertThat(c).isEqualTo(n);
            return n;
        });
    }

    @Test
    void reopen_restoresExactlyTheCommittedState() {
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            for (int i = 0; i < 50; i++) {
                commitNumbered(db, i);
            }
            db.run(tr -> {
                tr.clear(key("k", 100), key("k", 200));
                return null;
            });
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            assertThat(prefixLength(db)).isEqualTo(50);
            commitNumbered(db, 50);
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            assertThat(prefixLength(db)).isEqualTo(51);
        }
    }

    @Test
    void reopen_versionsKeepIncreasing() {
        long before;
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            commitNumbered(db, 0);
            before = db.stats().committedVersion();
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            long rv = db.read(tr -> tr.getReadVersion().join());
            assertThat(rv).isGreaterThanOrEqualTo(before);
            var tr = db.createTransaction();
            tr.set(key("x", 1), new byte[] {1});
            tr.commit().join();
            assertThat(tr.getCommittedVersion()).isGreaterThan(before);
            tr.close();
        }
    }

    @Test
    void crashAtAnyByte_recoversAPrefixOfAcknowledgedCommits() throws IOException {
        int commits = 120;
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            for (int i = 0; i < commits; i++) {
                commitNumbered(db, i);
            }
        }
        Path segment = onlySegment(dir);
        long size = Files.size(segment);
        Random random = new Random(42);
        List<Long> cuts = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            cuts.add((long) random.nextInt((int) size));
        }
        cuts.add(size);
        cuts.sort(Long::compare);
        long previous = 0;
        int n = 0;
        for (long cut : cuts) {
            Path copy = dir.resolveSibling("cut-" + n++);
            copyDirectory(dir, copy);
            try (FileChannel ch = FileChannel.open(copy.resolve(segment.getFileName()), StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            try (EmbeddedFdb db = EmbeddedFdb.open(copy)) {
                long recovered = prefixLength(db);
                assertThat(recovered).as("prefix after a cut at byte %d", cut).isGreaterThanOrEqualTo(previous);
                previous = recovered;
                if (cut == size) {
                    assertThat(recovered).isEqualTo(commits);
                }
                commitNumbered(db, recovered);
            }
            try (EmbeddedFdb db = EmbeddedFdb.open(copy)) {
                assertThat(prefixLength(db)).isEqualTo(previous + 1);
            }
        }
    }

    @Test
    void liveCopy_holdsEveryAcknowledgedCommit() throws Exception {
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            List<CompletableFuture<Void>> acks = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                long n = i;
                acks.add(db.runAsync(tr -> {
                    tr.set(key("c", n), new byte[] {1});
                    return CompletableFuture.completedFuture(null);
                }));
            }
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            Path copy = dir.resolveSibling("live-copy");
            copyDirectory(dir, copy);
            Files.deleteIfExists(copy.resolve("LOCK"));
            try (EmbeddedFdb recovered = EmbeddedFdb.open(copy)) {
                int rows = recovered.read(tr -> tr.getRange(Range.startsWith(Tuple.from("c").pack())).asList().join()).size();
                assertThat(rows).isEqualTo(64);
            }
        }
    }

    @Test
    void compaction_keepsDirectoryBoundedAndStateExact() throws IOException {
        EmbeddedFdb db = EmbeddedFdb.builder().directory(dir).compactionThresholdBytes(64 * 1024).build();
        try (db) {
            for (int i = 0; i < 3000; i++) {
                long slot = i % 40;
                db.run(tr -> {
                    tr.set(key("slot", slot), new byte[200]);
                    return null;
                });
            }
        }
        long bytes;
        try (Stream<Path> files = Files.list(dir)) {
            bytes = files.mapToLong(p -> p.toFile().length()).sum();
        }
        assertThat(bytes).as("3000 commits of ~250 bytes leave at most a few thresholds on disk").isLessThan(4 * 64 * 1024);
        try (EmbeddedFdb reopened = EmbeddedFdb.open(dir)) {
            int rows = reopened.read(tr -> tr.getRange(Range.startsWith(Tuple.from("slot").pack())).asList().join()).size();
            assertThat(rows).isEqualTo(40);
        }
    }

    @Test
    void concurrentCommitsDuringCompaction_reopenHoldsEveryAcknowledgedCommit() throws Exception {
        int threads = 8;
        int perThread = 400;
        try (EmbeddedFdb db = EmbeddedFdb.builder().directory(dir).compactionThresholdBytes(32 * 1024).build()) {
            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                int thread = t;
                Thread w = new Thread(() -> {
                    try {
                        for (int i = 0; i < perThread; i++) {
                            long n = i;
                            db.run(tr -> {
                                tr.set(key("t" + thread, n), new byte[64]);
                                tr.mutate(MutationType.ADD, Tuple.from("total").pack(), le(1));
                                tr.clear(key("t" + thread, n - 50));
                                return null;
                            });
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                w.start();
                workers.add(w);
            }
            for (Thread w : workers) {
                w.join(120_000);
            }
            assertThat(failures).isEmpty();
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("snapshot-")).count())
                    .as("compaction ran while commits continued").isGreaterThanOrEqualTo(1);
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            byte[] total = db.read(tr -> tr.get(Tuple.from("total").pack()).join());
            assertThat(ByteBuffer.wrap(total).order(ByteOrder.LITTLE_ENDIAN).getLong()).isEqualTo((long) threads * perThread);
            for (int t = 0; t < threads; t++) {
                int thread = t;
                List<KeyValue> rows = db.read(tr -> tr.getRange(Range.startsWith(Tuple.from("t" + thread).pack())).asList().join());
                assertThat(rows).as("thread %d keeps its last 50 keys", thread).hasSize(50);
                assertThat(Tuple.fromBytes(rows.get(0).getKey()).getLong(1)).isEqualTo(perThread - 50);
            }
        }
    }

    @Test
    void corruptionInTheMiddle_refusesToOpenNamingFileAndOffset() throws IOException {
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            for (int i = 0; i < 20; i++) {
                commitNumbered(db, i);
            }
        }
        Path segment = onlySegment(dir);
        byte[] bytes = Files.readAllBytes(segment);
        bytes[bytes.length / 3] ^= 0x5a;
        Files.write(segment, bytes);
        assertThatThrownBy(() -> EmbeddedFdb.open(dir))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(segment.getFileName().toString())
                .hasMessageContaining("offset");
    }

    private static Path onlySegment(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> segments = files.filter(p -> p.getFileName().toString().startsWith("wal-")).toList();
            assertThat(segments).hasSize(1);
            return segments.get(0);
        }
    }

    private static void copyDirectory(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path p : files.toList()) {
                if (!p.getFileName().toString().equals("LOCK")) {
                    Files.copy(p, to.resolve(p.getFileName()));
                }
            }
        }
    }
}
