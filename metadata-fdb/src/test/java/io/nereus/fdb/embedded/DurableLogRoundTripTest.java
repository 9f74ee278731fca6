package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogTestModel.b;
import static io.nereus.fdb.embedded.DurableLogTestModel.next;
import static io.nereus.fdb.embedded.DurableLogTestModel.rec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurableLogRoundTripTest {
    @TempDir
    Path dir;

    private final List<CompletableFuture<Void>> futures = new ArrayList<>();

    private void append(DurableLog log, DurableLogTestModel model, LogRecord record) {
        model.apply(record);
        futures.add(DurableLogTestModel.appendAndWrite(log, record));
    }

    private void awaitAll() throws Exception {
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        futures.clear();
    }

    private static DurableLogTestModel reopen(Path dir, long expectedVersion) throws IOException {
        DurableLogTestModel recovered = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), recovered)) {
            assertThat(log.recoveredVersion()).isEqualTo(expectedVersion);
        }
        return recovered;
    }

    @Test
    void emptyLogRecoversNothing() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir.resolve("new/sub"), DurableLogOptions.defaults(), model)) {
            assertThat(log.recoveredVersion()).isZero();
            assertThat(log.logBytes()).isEqualTo(DurableLogFormat.SEGMENT_HEADER_BYTES);
        }
        assertThat(reopen(dir.resolve("new/sub"), 0).snapshot()).isEmpty();
    }

    @Test
    void setsPointClearsAndRangeClearsSurviveReopen() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        byte[] high = {(byte) 0xFF, 0x01};
        byte[] zero = {0x00};
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            append(log, model, rec(10, Effect.set(b("a"), b("1")), Effect.set(b("b"), b("2")), Effect.set(b("c"), b("3"))));
            append(log, model, rec(11, Effect.set(high, b("high")), Effect.set(zero, new byte[0])));
            append(log, model, rec(15, Effect.clearRange(b("b"), next(b("b")))));             // point clear
            append(log, model, rec(16, Effect.set(b("b"), b("2'")), Effect.set(b("bb"), b("x"))));
            append(log, model, rec(20, Effect.clearRange(b("a"), b("bz")), Effect.set(b("ba"), b("after"))));
            append(log, model, rec(21));                                                      // no effects
            append(log, model, rec(30, Effect.set(new byte[0], b("empty key")), Effect.clearRange(b("z"), b("a"))));
            awaitAll();
        }
        // keys are shown in hex: "ba" = 6261, "c" = 63, "a" = 61, "b" = 62, "bb" = 6262
        assertThat(model.snapshot()).containsOnlyKeys("", "00", "ff01", "6261", "63");

        DurableLogTestModel recovered = reopen(dir, 30);
        assertThat(recovered.snapshot()).containsExactlyEntriesOf(model.snapshot());
        assertThat(recovered.version()).isEqualTo(30);

        // the recovered log keeps accepting appends, which survive the next reopen
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel())) {
            assertThatThrownBy(() -> log.append(rec(30, Effect.set(b("q"), b("q")))))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("30");
            append(log, model, rec(31, Effect.set(b("q"), b("q"))));
            append(log, model, rec(1_000_000_000_000L, Effect.clearRange(new byte[0], b("b"))));
            awaitAll();
        }
        DurableLogTestModel again = reopen(dir, 1_000_000_000_000L);
        assertThat(again.snapshot()).containsExactlyEntriesOf(model.snapshot());
    }

    @Test
    void reopenWithoutAppendsKeepsEverything() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            for (int v = 1; v <= 50; v++) {
                append(log, model, rec(v, Effect.set(b("k" + (v % 7)), b("v" + v))));
            }
            awaitAll();
        }
        for (int i = 0; i < 3; i++) {
            assertThat(reopen(dir, 50).snapshot()).containsExactlyEntriesOf(model.snapshot());
        }
        assertThat(DurableLogTestModel.files(dir, "wal-*.log")).hasSize(1);
    }

    @Test
    void aSecondOpenOfTheSameDirectoryIsRefused() throws Exception {
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel())) {
            assertThatThrownBy(() -> DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel()))
                    .isInstanceOf(IOException.class).hasMessageContaining("already open");
            DurableLogTestModel.appendAndWrite(log, rec(1)).get(10, TimeUnit.SECONDS); // the first one is unharmed
        }
        DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel()).close();
    }

    @Test
    void leftoverTemporaryFilesAreDeletedAndUnknownFilesKept() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            append(log, model, rec(1, Effect.set(b("a"), b("1"))));
            awaitAll();
        }
        Files.write(dir.resolve(DurableLogFormat.snapshotName(1) + ".tmp"), new byte[] {1, 2, 3});
        Files.write(dir.resolve(DurableLogFormat.segmentName(2) + ".tmp"), new byte[0]);
        Files.write(dir.resolve("notes.txt"), b("mine"));
        assertThat(reopen(dir, 1).snapshot()).containsExactlyEntriesOf(model.snapshot());
        assertThat(DurableLogTestModel.files(dir, "*.tmp")).isEmpty();
        assertThat(dir.resolve("notes.txt")).exists();
    }

    @Test
    void effectsValidateAndCompareByContent() {
        assertThat(Effect.set(b("k"), b("v"))).isEqualTo(Effect.set(b("k"), b("v")))
                .hasSameHashCodeAs(Effect.set(b("k"), b("v")))
                .isNotEqualTo(Effect.clearRange(b("k"), b("v")));
        assertThat(rec(3, Effect.set(b("k"), b("v")))).isEqualTo(rec(3, Effect.set(b("k"), b("v"))));
        assertThatThrownBy(() -> new Effect((byte) 3, b("k"), b("v"))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Effect.set(null, b("v"))).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> Effect.clearRange(b("a"), null)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> rec(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DurableLogOptions(0, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThat(DurableLogOptions.defaults().compactionThresholdBytes()).isEqualTo(64L << 20);
        assertThat(Effect.set(new byte[100], b("v")).toString()).contains("[100]").hasSizeLessThan(80);
    }
}
