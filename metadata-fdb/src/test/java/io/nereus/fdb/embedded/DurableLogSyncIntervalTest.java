package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
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
