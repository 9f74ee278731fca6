package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A durable log that acknowledges records once written and fsyncs them on an interval: fewer fsyncs, a mark of what
 * was synced, and recovery that drops the damage an OS crash can leave past the last fsync, while damage before it
 * is still corruption.
 */
class DurableLogSyncIntervalTest {
    @TempDir
    Path dir;

    private final Random random = new Random(11);

    private List<LogRecord> records(int n, long firstVersion) {
        List<LogRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(DurableLogTestModel.randomRecord(random, firstVersion + i, 20, 150));
        }
        return out;
    }

    private static DurableLogOptions every(Duration interval) {
        return new DurableLogOptions(DurableLogOptions.DEFAULT_COMPACTION_THRESHOLD_BYTES, interval);
    }

    private Path segment() throws Exception {
        return DurableLogTestModel.files(dir, "wal-*.log").get(0);
    }

    @Test
    void recordsAreAcknowledgedWithoutAnFsync_thenSyncedOnClose() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, every(Duration.ofSeconds(30)), model)) {
            for (LogRecord r : records(50, 1)) {
                model.appendAll(log, List.of(r));
            }
            assertThat(log.fsyncCount()).as("acknowledged once written, the interval not yet passed").isZero();
        }
        Optional<SyncMark.Mark> mark = SyncMark.read(dir);
        assertThat(mark).as("closing fsyncs and marks the whole segment").isPresent();
        assertThat(mark.get().syncedLength()).isEqualTo(Files.size(segment()));
        DurableLogTestModel reopened = new DurableLogTestModel();
        DurableLog.open(dir, DurableLogOptions.defaults(), reopened).close();
        assertThat(reopened.version()).isEqualTo(50);
        assertThat(SyncMark.read(dir)).as("a log fsyncing every group keeps no mark").isEmpty();
    }

    @Test
    void anIdleLogIsFsyncedOnceTheIntervalPasses() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, every(Duration.ofMillis(100)), model)) {
            model.appendAll(log, records(5, 1));
            await().atMost(Duration.ofSeconds(10)).until(() -> log.fsyncCount() >= 1);
            long afterIdle = log.fsyncCount();
            assertThat(SyncMark.read(dir).orElseThrow().syncedLength()).isEqualTo(Files.size(segment()));
            Thread.sleep(300);
            assertThat(log.fsyncCount()).as("nothing written since: no further fsync").isEqualTo(afterIdle);
        }
    }

    @Test
    void aSlowFsyncOnTheInterval_holdsUpNoAppend_andTheNextSyncCoversEverythingWrittenMeanwhile() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        CountDownLatch inFsync = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<String> syncingThread = new AtomicReference<>();
        try (DurableLog log = DurableLog.open(dir, every(Duration.ofMillis(50)), model)) {
            log.testHook = point -> {
                if (point.equals("before-fsync") && inFsync.getCount() > 0) {
                    syncingThread.set(Thread.currentThread().getName());
                    inFsync.countDown();
                    awaitUninterruptibly(release); // a disk that takes its time
                }
            };
            model.appendAll(log, records(5, 1));
            assertThat(inFsync.await(10, TimeUnit.SECONDS)).as("the interval passed: a sync started").isTrue();
            assertThat(syncingThread.get()).isEqualTo("nereus-durable-log-syncer");
            // the sync waits for the disk; appends are written and acknowledged meanwhile
            for (LogRecord r : records(40, 6)) {
                model.appendAll(log, List.of(r));
            }
            assertThat(log.fsyncCount()).as("the first sync has not finished").isZero();
            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> SyncMark.read(dir).map(SyncMark.Mark::syncedLength)
                    .orElse(0L) == Files.size(segment()));
            assertThat(log.fsyncCount()).as("the held sync, then one covering the 40 written while it was held")
                    .isGreaterThanOrEqualTo(2);
        }
        DurableLogTestModel reopened = new DurableLogTestModel();
        DurableLog.open(dir, every(Duration.ofMillis(50)), reopened).close();
        assertThat(reopened.version()).isEqualTo(45);
    }

    @Test
    void aFailedFsyncOnTheInterval_killsTheLog_laterAppendsFailNamingIt() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, every(Duration.ofMillis(20)), model)) {
            log.testHook = point -> {
                if (point.equals("before-fsync")) {
                    throw new IOException("Input/output error");
                }
            };
            model.appendAll(log, records(3, 1)); // acknowledged once written, before any fsync
            LogRecord next = records(1, 4).get(0);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    catchThrowable(() -> DurableLogTestModel.appendAndWrite(log, next).get(10, TimeUnit.SECONDS)))
                    .isInstanceOf(ExecutionException.class).hasRootCauseMessage("Input/output error"));
            assertThat(log.fsyncCount()).isZero();
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        while (true) {
            try {
                latch.await();
                return;
            } catch (InterruptedException e) {
                // the hook runs on the log's own threads; go on waiting
            }
        }
    }

    @Test
    void damagePastTheLastFsync_isDroppedEvenWithWellFormedRecordsAfterIt_damageBeforeItIsCorruption()
            throws Exception {
        Duration never = Duration.ofHours(1);
        DurableLogTestModel first = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, every(never), first)) {
            for (LogRecord r : records(40, 1)) {
                first.appendAll(log, List.of(r));
            }
        }
        // reopening fsyncs and marks the 40 records; the next 60 are written after the last fsync
        DurableLog.open(dir, every(never), new DurableLogTestModel()).close();
        byte[] markAt40 = Files.readAllBytes(dir.resolve(SyncMark.FILE));
        DurableLogTestModel second = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, every(never), second)) {
            for (LogRecord r : records(60, 41)) {
                second.appendAll(log, List.of(r));
            }
        }
        Path segment = segment();
        byte[] original = Files.readAllBytes(segment);
        List<Long> boundaries = DurableLogTestModel.recordBoundaries(original);
        assertThat(boundaries).hasSizeGreaterThan(100);
        assertThat(SyncMark.read(dir).orElseThrow().syncedLength()).isEqualTo(original.length);

        // an OS crash: the mark of the 40 survived, and record 51 of the unsynced part did not reach the disk
        Files.write(dir.resolve(SyncMark.FILE), markAt40);
        byte[] crashed = original.clone();
        for (long i = boundaries.get(50); i < boundaries.get(51); i++) {
            crashed[(int) i] = 0;
        }
        Files.write(segment, crashed);
        DurableLogTestModel recovered = new DurableLogTestModel();
        DurableLog.open(dir, every(never), recovered).close();
        assertThat(recovered.version()).as("records 1..50 kept, the damaged 51st and everything after it dropped")
                .isEqualTo(50);
        assertThat(Files.size(segment)).isEqualTo(boundaries.get(50));

        // the same damage inside the fsynced part is corruption: refused, nothing truncated
        Files.write(segment, original);
        Files.write(dir.resolve(SyncMark.FILE), markAt40);
        byte[] rotten = original.clone();
        rotten[(int) (boundaries.get(20) + 9)] ^= 0x5A;
        Files.write(segment, rotten);
        CorruptLogException e = catchThrowableOfType(CorruptLogException.class,
                () -> DurableLog.open(dir, every(never), new DurableLogTestModel()).close());
        assertThat(e).isNotNull();
        assertThat(e.offset()).isEqualTo(boundaries.get(20));
        assertThat(Files.size(segment)).isEqualTo(original.length);
    }
}
