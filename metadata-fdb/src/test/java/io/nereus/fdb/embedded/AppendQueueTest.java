package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link AppendQueue} without a flusher thread: {@code take} never blocks here, because something is queued or the
 * queue is closed.
 */
class AppendQueueTest {
    private final AppendQueue queue = new AppendQueue(Path.of("log-dir"), 10);

    private static LogRecord rec(long version) {
        return new LogRecord(version, List.of(Effect.set(new byte[] {1}, new byte[] {2})));
    }

    private static List<Long> versions(List<AppendQueue.Pending> batch) {
        return batch.stream().map(p -> p.record().version()).toList();
    }

    private static Throwable failureOf(CompletableFuture<Void> f) {
        assertThat(f).isCompletedExceptionally();
        return f.handle((v, t) -> t).join();
    }

    @Test
    void take_returnsEverythingQueuedInOrder_andQueuesLaterRecordsInTheHandedOverList() {
        CompletableFuture<Void> first = queue.add(rec(11), 30);
        queue.add(rec(12), 40);
        ArrayList<AppendQueue.Pending> empty = new ArrayList<>();

        ArrayList<AppendQueue.Pending> batch = queue.take(empty);

        assertThat(versions(batch)).containsExactly(11L, 12L);
        assertThat(batch.get(0).payloadBytes()).isEqualTo(30);
        assertThat(batch.get(0).future()).isSameAs(first).isNotDone();
        queue.add(rec(13), 50);
        assertThat(versions(empty)).containsExactly(13L);
    }

    @Test
    void add_versionNotAboveTheLastAppendedOrRecovered_isRejectedAtTheCall() {
        assertThatThrownBy(() -> queue.add(rec(10), 1)).isInstanceOf(IllegalArgumentException.class);
        queue.add(rec(12), 1);
        assertThatThrownBy(() -> queue.add(rec(12), 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> queue.add(rec(11), 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void close_letsTheQueuedRecordsBeTaken_thenTakeReturnsNull() {
        queue.add(rec(11), 1);

        queue.close();

        assertThat(versions(queue.take(new ArrayList<>()))).containsExactly(11L);
        assertThat(queue.take(new ArrayList<>())).isNull();
    }

    @Test
    void add_afterClose_failsTheFutureInsteadOfQueueing() {
        queue.close();

        Throwable cause = failureOf(queue.add(rec(11), 1));

        assertThat(cause).isInstanceOf(IOException.class).hasMessageContaining("is closed");
        assertThat(queue.take(new ArrayList<>())).isNull();
    }

    @Test
    void add_afterAFailure_failsWithThatFailure_andVersionChecksStillComeFirst() {
        IOException diskFull = new IOException("disk full");

        queue.fail(diskFull);

        assertThat(queue.failure()).isSameAs(diskFull);
        assertThat(failureOf(queue.add(rec(11), 1))).isSameAs(diskFull);
        assertThatThrownBy(() -> queue.add(rec(10), 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
