package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogTestModel.appendAndWrite;
import static io.nereus.fdb.embedded.DurableLogTestModel.b;
import static io.nereus.fdb.embedded.DurableLogTestModel.rec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurableLogFailureTest {
    @TempDir
    Path dir;

    @Test
    void appendAfterCloseFailsInsteadOfHanging() throws Exception {
        DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel());
        appendAndWrite(log, rec(1, Effect.set(b("a"), b("1")))).get(10, TimeUnit.SECONDS);
        log.close();
        log.close(); // idempotent
        CompletableFuture<Void> late = log.append(rec(2, Effect.set(b("b"), b("2"))));
        assertThatThrownBy(() -> late.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IOException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void closeFlushesEverythingQueued() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        Random random = new Random(9);
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            for (long v = 1; v <= 3000; v++) {
                LogRecord r = DurableLogTestModel.randomRecord(random, v, 100, 300);
                model.apply(r);
                futures.add(log.append(r));
            }
        } // no waiting before close
        assertThat(futures).allMatch(f -> f.isDone() && !f.isCompletedExceptionally());
        DurableLogTestModel recovered = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), recovered)) {
            assertThat(log.recoveredVersion()).isEqualTo(3000);
        }
        assertThat(recovered.snapshot()).isEqualTo(model.snapshot());
    }

    @Test
    void aFailedWriteKillsTheLogAndEveryLaterAppendFails() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            LogRecord acknowledged = rec(1, Effect.set(b("a"), b("1")));
            model.apply(acknowledged);
            appendAndWrite(log, acknowledged).get(10, TimeUnit.SECONDS);

            log.breakChannelForTest();
            CompletableFuture<Void> failed = appendAndWrite(log, rec(2, Effect.set(b("b"), b("2"))));
            assertThatThrownBy(() -> failed.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IOException.class);
            IOException cause = (IOException) failed.handle((ok, e) -> e).get(10, TimeUnit.SECONDS);

            // the log is dead: later appends fail at once with the same IOException
            CompletableFuture<Void> later = log.append(rec(3, Effect.set(b("c"), b("3"))));
            assertThat(later).isCompletedExceptionally();
            assertThatThrownBy(() -> later.get(1, TimeUnit.SECONDS)).hasCause(cause);
        } // close does not hang on a dead log

        DurableLogTestModel recovered = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), recovered)) {
            assertThat(log.recoveredVersion()).isEqualTo(1);
        }
        assertThat(recovered.snapshot()).isEqualTo(model.snapshot());
    }

    @Test
    void aFailedWriteFailsTheWholeBatchAndItsFollowers() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            log.testHook = point -> {
                if (point.equals("before-write")) {
                    throw new IOException("simulated disk failure");
                }
            };
            for (long v = 1; v <= 100; v++) {
                futures.add(appendAndWrite(log, rec(v, Effect.set(b("k" + v), b("v")))));
            }
            for (CompletableFuture<Void> f : futures) {
                assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS)).hasRootCauseMessage("simulated disk failure");
            }
        }
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel())) {
            assertThat(log.recoveredVersion()).isZero();
        }
    }

    @Test
    void closeFromACallbackOnTheSyncerThreadDoesNotDeadlock() throws Exception {
        DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel());
        CompletableFuture<Void> first = log.append(rec(1, Effect.set(b("a"), b("1"))));
        CompletableFuture<Void> second = log.append(rec(2, Effect.set(b("b"), b("2"))));
        CompletableFuture<Void> closedInCallback = first.thenRun(log::close); // completed once fsynced, by the syncer
        log.write();
        closedInCallback.get(10, TimeUnit.SECONDS);
        second.get(10, TimeUnit.SECONDS); // written before the close, so synced by it
        log.close(); // from another thread: waits until the log has released the files
        assertReopensAtVersion(2);
    }

    @Test
    void closeFromACallbackOnTheWritingThreadDoesNotDeadlock_andWritesWhatWasQueued() throws Exception {
        DurableLogOptions written = new DurableLogOptions(DurableLogOptions.DEFAULT_COMPACTION_THRESHOLD_BYTES,
                java.time.Duration.ofSeconds(30)); // acknowledged once written, by the writing thread
        DurableLog log = DurableLog.open(dir, written, new DurableLogTestModel());
        CompletableFuture<Void> first = log.append(rec(1, Effect.set(b("a"), b("1"))));
        CompletableFuture<Void> closedInCallback = first.thenRun(() -> {
            log.append(rec(2, Effect.set(b("b"), b("2")))); // queued while this thread writes, before the close
            log.close();
        });
        log.write();
        closedInCallback.get(10, TimeUnit.SECONDS);
        log.close(); // from another thread: waits until the log has released the files
        assertReopensAtVersion(2);
    }

    private void assertReopensAtVersion(long version) throws Exception {
        try (DurableLog again = DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel())) {
            assertThat(again.recoveredVersion()).isEqualTo(version);
        }
    }

    @Test
    void misuseIsRejectedAtTheCall() throws Exception {
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel())) {
            appendAndWrite(log, rec(5)).get(10, TimeUnit.SECONDS);
            assertThatThrownBy(() -> log.append(rec(5))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> log.append(rec(4))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> log.setSnapshotSource(null)).isInstanceOf(NullPointerException.class);
            appendAndWrite(log, rec(6)).get(10, TimeUnit.SECONDS); // still alive
        }
    }
}
