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
 * {@link AppendQueue} on the test's thread: who writes, what the writer takes, and what closing and failures do.
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
    void startWriting_takesEverythingQueuedInOrder_andMakesTheCallerTheWriterUntilNothingIsLeft() {
        CompletableFuture<Void> first = queue.add(rec(11), 30);
        queue.add(rec(12), 40);

        ArrayList<AppendQueue.Pending> batch = queue.startWriting();

        assertThat(versions(batch)).containsExactly(11L, 12L);
        assertThat(batch.get(0).payloadBytes()).isEqualTo(30);
        assertThat(batch.get(0).future()).isSameAs(first).isNotDone();
        assertThat(queue.isWriter()).isTrue();
        queue.add(rec(13), 50);
        batch.clear();
        ArrayList<AppendQueue.Pending> next = queue.continueWriting(batch);
        assertThat(versions(next)).as("what was queued while it wrote").containsExactly(13L);
        next.clear();
        assertThat(queue.continueWriting(next)).isNull();
        assertThat(queue.isWriter()).isFalse();
    }

    @Test
    void startWriting_whileAnotherThreadWrites_orWithNothingQueued_returnsNull() throws Exception {
        assertThat(queue.startWriting()).as("nothing queued").isNull();
        queue.add(rec(11), 1);
        ArrayList<AppendQueue.Pending> batch = queue.startWriting();
        queue.add(rec(12), 1);

        ArrayList<AppendQueue.Pending> other = CompletableFuture.supplyAsync(queue::startWriting).get();

        assertThat(other).isNull();
        batch.clear();
        assertThat(versions(queue.continueWriting(batch))).containsExactly(12L);
    }

    @Test
    void add_versionNotAboveTheLastAppendedOrRecovered_isRejectedAtTheCall() {
        assertThatThrownBy(() -> queue.add(rec(10), 1)).isInstanceOf(IllegalArgumentException.class);
        queue.add(rec(12), 1);
        assertThatThrownBy(() -> queue.add(rec(12), 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> queue.add(rec(11), 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void close_letsTheQueuedRecordsBeTakenOver_byOneWriterForGood() {
        queue.add(rec(11), 1);

        queue.close();

        assertThat(versions(queue.takeOverWriting())).containsExactly(11L);
        assertThat(queue.isWriter()).isTrue();
        assertThat(queue.takeOverWriting()).isEmpty();
    }

    @Test
    void takeOverWriting_beforeClose_isRefused() {
        assertThatThrownBy(queue::takeOverWriting).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void add_afterClose_failsTheFutureInsteadOfQueueing() {
        queue.close();

        Throwable cause = failureOf(queue.add(rec(11), 1));

        assertThat(cause).isInstanceOf(IOException.class).hasMessageContaining("is closed");
        assertThat(queue.takeOverWriting()).isEmpty();
    }

    @Test
    void add_afterAFailure_failsWithThatFailure_andVersionChecksStillComeFirst() {
        IOException diskFull = new IOException("disk full");

        queue.fail(diskFull);

        queue.fail(new IOException("a later fsync failure"));

        assertThat(queue.failure()).as("the first failure stays the one reported").isSameAs(diskFull);
        assertThat(failureOf(queue.add(rec(11), 1))).isSameAs(diskFull);
        assertThatThrownBy(() -> queue.add(rec(10), 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
