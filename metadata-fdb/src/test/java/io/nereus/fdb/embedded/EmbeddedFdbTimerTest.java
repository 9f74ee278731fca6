package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The timer, time and jitter an EmbeddedFdb is given ({@link EmbeddedFdb.Builder#timer},
 * {@link EmbeddedFdb.Builder#jitter}): retry backoffs and transaction timeouts run on the given timer, timeouts are
 * measured in the given time, backoffs are jittered by the given source, and closing the database leaves the timer
 * to its owner.
 */
class EmbeddedFdbTimerTest {
    /** A timer that records the delay of everything scheduled on it. */
    private static final class RecordingTimer extends ScheduledThreadPoolExecutor {
        final List<Long> delaysMillis = new CopyOnWriteArrayList<>();

        RecordingTimer() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            delaysMillis.add(unit.toMillis(delay));
            return super.schedule(command, delay, unit);
        }
    }

    private final RecordingTimer timer = new RecordingTimer();
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final EmbeddedFdb db = EmbeddedFdb.builder().timer(timer, nanos::get).jitter(() -> 0.5).build();

    @AfterEach
    void close() {
        db.close();
        timer.shutdownNow();
    }

    @Test
    void retryAfterConflict_backsOffOnTheGivenTimer_jitteredByTheGivenSource() throws Exception {
        db.injectCommitFaults(CommitFault.NOT_COMMITTED, 1);
        CompletableFuture<Integer> attempts = new CompletableFuture<>();
        AtomicLong n = new AtomicLong();
        db.runAsync(tr -> {
            n.incrementAndGet();
            tr.set(Tuple.from("k").pack(), new byte[] {1});
            return CompletableFuture.completedFuture(null);
        }).thenRun(() -> attempts.complete((int) n.get())).get(5, TimeUnit.SECONDS);
        assertThat(attempts.get()).as("attempts").isEqualTo(2);
        // 1020 backs off by jitter * the initial backoff: 0.5 * 10 ms
        assertThat(timer.delaysMillis).containsExactly(5L);
    }

    @Test
    void timeout_isMeasuredInTheGivenTime() throws Exception {
        Transaction tr = db.createTransaction();
        nanos.addAndGet(TimeUnit.SECONDS.toNanos(2)); // two seconds pass on the database's time, none on the wall
        tr.options().setTimeout(1_000);
        List<Long> scheduled = List.copyOf(timer.delaysMillis);
        // the timeout is due at once on the timer; a task queued after it runs once it has fired (one timer thread)
        timer.submit(() -> { }).get(5, TimeUnit.SECONDS);
        assertThatThrownBy(() -> tr.get(Tuple.from("k").pack()).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(FDBException.class)
                .satisfies(e -> assertThat(((FDBException) e).getCode()).isEqualTo(1031));
        assertThat(scheduled).as("the timeout was due at once").containsExactly(0L);
        tr.close();
    }

    @Test
    void close_leavesTheGivenTimerRunning() {
        db.close();
        assertThat(timer.isShutdown()).isFalse();
    }
}
