package io.nereus.pulsar;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.CursorState;
import io.nereus.metadata.WriteOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.junit.jupiter.api.Test;

/** CursorPersistence with a saver the test completes by hand and a fake clock: no I/O, no timing. */
class CursorPersistenceTest {
    private final List<CursorState> saved = new ArrayList<>();
    private final List<CompletableFuture<WriteOutcome>> pending = new ArrayList<>();
    private final List<CursorState> persistedNotices = new ArrayList<>();
    private final List<Runnable> scheduledFlushes = new ArrayList<>();
    private final List<Long> scheduledDelays = new ArrayList<>();
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final CursorStatsBean stats = new CursorStatsBean("c", "ml");

    private CursorPersistence persistence(double rate) {
        CursorPersistence.Scheduler manual = (delay, task) -> {
            scheduledDelays.add(delay);
            scheduledFlushes.add(task);
        };
        return new CursorPersistence(s -> {
            saved.add(s);
            CompletableFuture<WriteOutcome> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        }, CursorState.at(0), rate, persistedNotices::add, stats, manual, nanos::get);
    }

    private void completeNext(WriteOutcome outcome) {
        pending.remove(0).complete(outcome);
    }

    @Test
    void save_whileOneInFlight_coalescesToNewestState() {
        CursorPersistence p = persistence(0);
        CompletableFuture<Void> a = p.save(CursorState.at(1));
        CompletableFuture<Void> b = p.save(CursorState.at(2));
        CompletableFuture<Void> c = p.save(CursorState.at(3));
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(1L);
        completeNext(WriteOutcome.WRITTEN);
        assertThat(a).isCompleted();
        assertThat(b).isNotDone();
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(1L, 3L);
        completeNext(WriteOutcome.WRITTEN);
        assertThat(b).isCompleted();
        assertThat(c).isCompleted();
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(3);
        assertThat(persistedNotices).extracting(CursorState::markDeleteEnd).containsExactly(1L, 3L);
        assertThat(stats.getPersistZookeeperSucceed()).isEqualTo(2);
    }

    @Test
    void saveThrottled_overRate_completesAtOnceAndFlushSavesIt() {
        CursorPersistence p = persistence(1.0); // one save per second
        CompletableFuture<Void> first = p.saveThrottled(CursorState.at(1));
        assertThat(saved).hasSize(1);
        completeNext(WriteOutcome.WRITTEN);
        assertThat(first).isCompleted();
        nanos.addAndGet(100_000_000L); // 0.1 s later: over the rate
        CompletableFuture<Void> second = p.saveThrottled(CursorState.at(2));
        CompletableFuture<Void> third = p.saveThrottled(CursorState.at(3));
        assertThat(second).isCompleted();
        assertThat(third).isCompleted();
        assertThat(saved).hasSize(1);
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(1);
        assertThat(scheduledFlushes).hasSize(1);
        scheduledFlushes.get(0).run();
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(1L, 3L);
        completeNext(WriteOutcome.WRITTEN);
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(3);
        assertThat(p.isDirty()).isFalse();
    }

    @Test
    void saveThrottled_afterInterval_savesAtOnce() {
        CursorPersistence p = persistence(2.0);
        p.saveThrottled(CursorState.at(1));
        completeNext(WriteOutcome.WRITTEN);
        nanos.addAndGet(600_000_000L);
        p.saveThrottled(CursorState.at(2));
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(1L, 2L);
        assertThat(scheduledFlushes).isEmpty();
    }

    @Test
    void save_fenced_failsThisQueuedAndLaterRequests() {
        CursorPersistence p = persistence(0);
        CompletableFuture<Void> a = p.save(CursorState.at(1));
        CompletableFuture<Void> b = p.save(CursorState.at(2));
        completeNext(new WriteOutcome.Fenced(5, 4));
        assertThat(a).failsWithin(java.time.Duration.ZERO).withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(ManagedLedgerException.ManagedLedgerFencedException.class);
        assertThat(b).isCompletedExceptionally();
        assertThat(p.save(CursorState.at(3))).isCompletedExceptionally();
        assertThat(p.saveThrottled(CursorState.at(3))).isCompletedExceptionally();
        assertThat(saved).hasSize(1);
        assertThat(p.persisted().markDeleteEnd()).isZero();
        assertThat(stats.getPersistZookeeperErrors()).isEqualTo(1);
    }

    @Test
    void save_failed_isRetriedByFlush() {
        CursorPersistence p = persistence(0);
        CompletableFuture<Void> a = p.save(CursorState.at(4));
        pending.remove(0).completeExceptionally(new IllegalStateException("metadata store unavailable"));
        assertThat(a).isCompletedExceptionally();
        assertThat(p.isDirty()).isTrue();
        CompletableFuture<Void> flushed = p.flush();
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(4L, 4L);
        completeNext(WriteOutcome.WRITTEN);
        assertThat(flushed).isCompleted();
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(4);
    }

    @Test
    void stop_thenSave_failsWithReason() {
        CursorPersistence p = persistence(0);
        p.stop(new ManagedLedgerException.ManagedLedgerAlreadyClosedException("ledger closed"));
        assertThat(p.save(CursorState.at(1))).isCompletedExceptionally();
        assertThat(p.idle()).isCompleted();
        assertThat(saved).isEmpty();
    }

    @Test
    void flush_withSaveInFlight_completesWhenItLands() {
        CursorPersistence p = persistence(0);
        p.save(CursorState.at(1));
        CompletableFuture<Void> flushed = p.flush();
        assertThat(flushed).isNotDone();
        completeNext(WriteOutcome.WRITTEN);
        assertThat(flushed).isCompleted();
    }

    @Test
    void saveThrottled_veryLowRate_flushScheduledWithinSixtySeconds() {
        CursorPersistence p = persistence(0.001);
        p.saveThrottled(CursorState.at(1));
        completeNext(WriteOutcome.WRITTEN);
        p.saveThrottled(CursorState.at(2));
        assertThat(scheduledDelays).containsExactly(CursorPersistence.MAX_FLUSH_DELAY_NANOS);
        assertThat(p.isDirty()).isTrue();
    }
}
