package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurableLogCompactionTest {
    private static final long THRESHOLD = 64 * 1024;
    private static final DurableLogOptions OPTIONS = new DurableLogOptions(THRESHOLD, Duration.ZERO);

    @TempDir
    Path tmp;

    private final Random random = new Random(11);
    private long version;

    private List<LogRecord> chunk(int n) {
        List<LogRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            version += 1 + random.nextInt(3);
            out.add(DurableLogTestModel.randomRecord(random, version, 32, 200));
        }
        return out;
    }

    private static DurableLogTestModel reopen(Path dir, long expectedVersion) throws IOException {
        DurableLogTestModel recovered = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, OPTIONS, recovered)) {
            assertThat(log.recoveredVersion()).isEqualTo(expectedVersion);
        }
        return recovered;
    }

    @Test
    void snapshotsReplaceOldSegmentsAndReopenGivesTheExactState() throws Exception {
        Path dir = tmp.resolve("log");
        DurableLogTestModel model = new DurableLogTestModel(true);
        long maxBytes = 0;
        try (DurableLog log = DurableLog.open(dir, OPTIONS, model)) {
            log.setSnapshotSource(model);
            for (int round = 0; round < 50; round++) {
                model.appendAll(log, chunk(100)); // ~25 KiB a round; appends go on while a compaction runs
                maxBytes = Math.max(maxBytes, DurableLogTestModel.directoryBytes(dir));
                log.awaitCompaction(30, TimeUnit.SECONDS);
                assertThat(DurableLogTestModel.directoryBytes(dir)).isLessThan(3 * THRESHOLD);
                assertThat(log.logBytes()).isLessThan(2 * THRESHOLD);
            }
            assertThat(model.snapshotsServed.get()).isGreaterThan(10);
            assertThat(model.openSnapshots.get()).as("every snapshot closed, so no version stays pinned").isZero();
            assertThat(log.snapshotVersion()).isEqualTo(model.snapshotVersions.get(model.snapshotVersions.size() - 1));
        }
        assertThat(maxBytes).isLessThan(4 * THRESHOLD);
        assertThat(DurableLogTestModel.files(dir, "snapshot-*.snap")).hasSize(1);
        assertThat(dir.resolve(DurableLogFormat.segmentName(1))).doesNotExist();
        assertThat(DurableLogTestModel.files(dir, "wal-*.log")).hasSizeLessThanOrEqualTo(2);
        assertThat(DurableLogTestModel.files(dir, "*.tmp")).isEmpty();

        assertThat(reopen(dir, version).snapshot()).isEqualTo(model.snapshot());

        // and it goes on: more appends and compactions after a reopen
        DurableLogTestModel continued = new DurableLogTestModel(true);
        try (DurableLog log = DurableLog.open(dir, OPTIONS, continued)) {
            log.setSnapshotSource(continued);
            for (int round = 0; round < 10; round++) {
                continued.appendAll(log, chunk(100));
            }
            log.awaitCompaction(30, TimeUnit.SECONDS);
            assertThat(continued.snapshotsServed.get()).isPositive();
        }
        assertThat(reopen(dir, version).snapshot()).isEqualTo(continued.snapshot());
    }

    @Test
    void aCrashBetweenSnapshotRenameAndSegmentDeletionRecovers() throws Exception {
        Path dir = tmp.resolve("log");
        Path crashed = tmp.resolve("crashed");
        DurableLogTestModel model = new DurableLogTestModel(true);
        model.pruneHistory = false; // the crash copy may recover any version after its snapshot
        AtomicBoolean copied = new AtomicBoolean();
        try (DurableLog log = DurableLog.open(dir, OPTIONS, model)) {
            log.setSnapshotSource(model);
            log.testHook = point -> {
                if (point.equals("snapshot-renamed")) {
                    if (copied.compareAndSet(false, true)) { // the directory as a crash right now would leave it
                        Files.createDirectories(crashed);
                        for (Path p : DurableLogTestModel.files(dir, "*")) {
                            Files.copy(p, crashed.resolve(p.getFileName()));
                        }
                    }
                    throw new IOException("simulated crash before the old segments are deleted");
                }
            };
            for (int round = 0; round < 12; round++) {
                model.appendAll(log, chunk(100));
            }
            log.awaitCompaction(30, TimeUnit.SECONDS);
            assertThat(model.snapshotsServed.get()).isGreaterThanOrEqualTo(2);
            assertThat(model.openSnapshots.get()).isZero();
        }
        assertThat(copied).isTrue();
        // both directories hold a snapshot and the segments it covers
        for (Path d : List.of(dir, crashed)) {
            assertThat(DurableLogTestModel.files(d, "snapshot-*.snap")).isNotEmpty();
            assertThat(d.resolve(DurableLogFormat.segmentName(1))).exists();
        }

        assertThat(reopen(dir, version).snapshot()).isEqualTo(model.snapshot());
        assertThat(DurableLogTestModel.files(dir, "snapshot-*.snap")).hasSize(1);
        assertThat(dir.resolve(DurableLogFormat.segmentName(1))).doesNotExist();

        long snapshotVersion = DurableLogFormat.parseSnapshotName(
                DurableLogTestModel.files(crashed, "snapshot-*.snap").get(0).getFileName().toString());
        DurableLogTestModel recovered = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(crashed, OPTIONS, recovered)) {
            // the copy was taken while appends went on, so it holds some prefix at or beyond the snapshot
            assertThat(log.recoveredVersion()).isGreaterThanOrEqualTo(snapshotVersion);
            assertThat(recovered.snapshot()).isEqualTo(model.stateAt(log.recoveredVersion()));
        }
        assertThat(crashed.resolve(DurableLogFormat.segmentName(1))).doesNotExist();
    }

    @Test
    void failingCompactionsNeverFailAppendsAndAreRetried() throws Exception {
        Path dir = tmp.resolve("log");
        DurableLogTestModel model = new DurableLogTestModel(true);
        AtomicBoolean broken = new AtomicBoolean(true);
        int[] attempts = {0};
        try (DurableLog log = DurableLog.open(dir, OPTIONS, model)) {
            log.setSnapshotSource(at -> {
                attempts[0]++;
                if (broken.get()) {
                    throw new IllegalStateException("simulated engine failure");
                }
                return model.openSnapshot(at);
            });
            for (int round = 0; round < 12; round++) {
                model.appendAll(log, chunk(100));
                log.awaitCompaction(30, TimeUnit.SECONDS);
            }
            assertThat(attempts[0]).isGreaterThanOrEqualTo(2);
            assertThat(DurableLogTestModel.files(dir, "snapshot-*")).isEmpty();
            assertThat(log.logBytes()).isGreaterThan(2 * THRESHOLD); // nothing could be freed

            broken.set(false);
            for (int round = 0; round < 6; round++) {
                model.appendAll(log, chunk(100));
                log.awaitCompaction(30, TimeUnit.SECONDS);
            }
            assertThat(DurableLogTestModel.files(dir, "snapshot-*.snap")).hasSize(1);
            assertThat(log.logBytes()).isLessThan(2 * THRESHOLD);
        }
        assertThat(reopen(dir, version).snapshot()).isEqualTo(model.snapshot());
    }

    @Test
    void closeAbandonsARunningSnapshotWrite() throws Exception {
        Path dir = tmp.resolve("log");
        DurableLogTestModel model = new DurableLogTestModel();
        CountDownLatch writing = new CountDownLatch(1);
        CountDownLatch closing = new CountDownLatch(1);
        DurableLog log = DurableLog.open(dir, OPTIONS, model);
        log.testHook = point -> {
            if (point.equals("closing")) {
                closing.countDown();
            }
        };
        log.setSnapshotSource(at -> new StateSnapshot() {
            @Override
            public Iterator<Map.Entry<byte[], byte[]>> entries() {
                return new Iterator<>() { // endless: only closing the log stops the snapshot
                    long next;

                    @Override
                    public boolean hasNext() {
                        return true;
                    }

                    @Override
                    public Map.Entry<byte[], byte[]> next() {
                        if (next == 5000) { // a snapshot write is under way: hold it until close() has begun
                            writing.countDown();
                            try {
                                assertThat(closing.await(30, TimeUnit.SECONDS)).isTrue();
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                        }
                        return Map.entry(ByteBuffer.allocate(8).putLong(next++).array(), new byte[0]);
                    }
                };
            }

            @Override
            public void close() {
            }
        });
        while (writing.getCount() > 0) {
            model.appendAll(log, chunk(100));
            assertThat(version).as("no compaction started").isLessThan(100_000);
        }
        CompletableFuture.runAsync(log::close).get(30, TimeUnit.SECONDS);
        assertThat(DurableLogTestModel.files(dir, "snapshot-*")).isEmpty();
        assertThat(reopen(dir, version).snapshot()).isEqualTo(model.snapshot());
    }

    @Test
    void withoutASnapshotSourceSegmentsStillRollAndReplay() throws Exception {
        Path dir = tmp.resolve("log");
        DurableLogTestModel model = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, OPTIONS, model)) {
            for (int round = 0; round < 10; round++) {
                model.appendAll(log, chunk(100));
            }
        }
        assertThat(DurableLogTestModel.files(dir, "wal-*.log")).hasSizeGreaterThan(2);
        for (Path segment : DurableLogTestModel.files(dir, "wal-*.log")) {
            assertThat(Files.size(segment)).isLessThan(THRESHOLD + 30 * 1024);
        }
        assertThat(DurableLogTestModel.files(dir, "snapshot-*")).isEmpty();
        assertThat(reopen(dir, version).snapshot()).isEqualTo(model.snapshot());
    }
}
