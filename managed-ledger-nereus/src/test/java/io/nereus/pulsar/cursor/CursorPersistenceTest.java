package io.nereus.pulsar.cursor;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.CursorState;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WriteOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.junit.jupiter.api.Test;

/**
 * CursorPersistence with a saver the test completes by hand, a fake clock and a source whose newest state the
 * test sets (version v holds mark-delete end v): no I/O, no timing.
 */
class CursorPersistenceTest {
    private final List<CursorState> saved = new ArrayList<>();
    private final List<CompletableFuture<WriteOutcome>> pending = new ArrayList<>();
    private final List<CursorState> persistedNotices = new ArrayList<>();
    private final List<Runnable> scheduled = new ArrayList<>();
    private final List<Long> scheduledDelays = new ArrayList<>();
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final CursorStatsBean stats = new CursorStatsBean("c", "ml");
    /** The source's newest version; its state has mark-delete end = version. */
    private final AtomicLong newest = new AtomicLong(0);

    private CursorPersistence persistence(double rate) {
        CursorPersistence.Scheduler manual = (delay, task) -> {
            scheduledDelays.add(delay);
            scheduled.add(task);
        };
        CursorPersistence.Source source = new CursorPersistence.Source() {
            @Override
            public long version() {
                return newest.get();
            }

            @Override
            public CursorAckState.Snapshot snapshot() {
                long v = newest.get();
                return new CursorAckState.Snapshot(v, CursorState.at(v));
            }
        };
        return new CursorPersistence("c", "ml", s -> {
            saved.add(s);
            CompletableFuture<WriteOutcome> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        }, source, CursorState.at(0), 0, rate, persistedNotices::add, stats, manual, nanos::get);
    }

    /** A change applied to the source: its version and state become {@code v}. */
    private long change(long v) {
        newest.set(v);
        return v;
    }

    private void completeNext(WriteOutcome outcome) {
        pending.remove(0).complete(outcome);
    }

    private static void assertFailsWith(CompletableFuture<?> f, Class<? extends Throwable> type) {
        assertThat(f).failsWithin(Duration.ZERO).withThrowableOfType(ExecutionException.class)
                .withCauseInstanceOf(type);
    }

    @Test
    void save_whileOneInFlight_coalescesToNewestState() {
        CursorPersistence p = persistence(0);
        CompletableFuture<Void> a = p.save(change(1));
        CompletableFuture<Void> b = p.save(change(2));
        CompletableFuture<Void> c = p.save(change(3));
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
    void save_versionsHandedOverOutOfOrder_storesNewestState() {
        // Two acknowledgements applied on two threads (versions 1 and 2) reach persistence in reverse order.
        CursorPersistence p = persistence(0);
        change(2);
        CompletableFuture<Void> second = p.save(2);
        CompletableFuture<Void> first = p.save(1);
        completeNext(WriteOutcome.WRITTEN);
        assertThat(first).isCompleted();
        assertThat(second).isCompleted();
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(2L);
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(2);
        assertThat(p.isDirty()).isFalse();
    }

    @Test
    void saveThrottled_versionsHandedOverOutOfOrder_flushStoresNewestState() {
        CursorPersistence p = persistence(1.0);
        p.saveThrottled(change(1));
        completeNext(WriteOutcome.WRITTEN);
        nanos.addAndGet(100_000_000L);
        change(3);
        p.saveThrottled(3);
        p.saveThrottled(2); // the older change arrives last
        assertThat(scheduled).hasSize(1);
        scheduled.get(0).run();
        completeNext(WriteOutcome.WRITTEN);
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(1L, 3L);
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(3);
        assertThat(p.isDirty()).isFalse();
    }

    @Test
    void flush_changeNotYetHandedOver_isSavedToo() {
        // close flushes while an applied change has not reached persistence yet: the flush takes the source's newest
        CursorPersistence p = persistence(1.0);
        p.saveThrottled(change(1));
        completeNext(WriteOutcome.WRITTEN);
        change(2);
        CompletableFuture<Void> flushed = p.flush();
        completeNext(WriteOutcome.WRITTEN);
        assertThat(flushed).isCompleted();
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(2);
    }

    @Test
    void saveThrottled_overRate_completesAtOnceAndFlushSavesIt() {
        CursorPersistence p = persistence(1.0); // one save per second
        CompletableFuture<Void> first = p.saveThrottled(change(1));
        assertThat(saved).hasSize(1);
        completeNext(WriteOutcome.WRITTEN);
        assertThat(first).isCompleted();
        nanos.addAndGet(100_000_000L); // 0.1 s later: over the rate
        CompletableFuture<Void> second = p.saveThrottled(change(2));
        CompletableFuture<Void> third = p.saveThrottled(change(3));
        assertThat(second).isCompleted();
        assertThat(third).isCompleted();
        assertThat(saved).hasSize(1);
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(1);
        assertThat(scheduled).hasSize(1);
        assertThat(scheduledDelays).containsExactly(900_000_000L);
        scheduled.get(0).run();
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(1L, 3L);
        completeNext(WriteOutcome.WRITTEN);
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(3);
        assertThat(p.isDirty()).isFalse();
    }

    @Test
    void saveThrottled_afterInterval_savesAtOnce() {
        CursorPersistence p = persistence(2.0);
        p.saveThrottled(change(1));
        completeNext(WriteOutcome.WRITTEN);
        nanos.addAndGet(600_000_000L);
        p.saveThrottled(change(2));
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(1L, 2L);
        assertThat(scheduled).isEmpty();
    }

    @Test
    void save_fenced_failsThisQueuedAndLaterRequests() {
        CursorPersistence p = persistence(0);
        CompletableFuture<Void> a = p.save(change(1));
        CompletableFuture<Void> b = p.save(change(2));
        completeNext(new WriteOutcome.Fenced(5, 4));
        assertFailsWith(a, ManagedLedgerException.ManagedLedgerFencedException.class);
        assertFailsWith(b, ManagedLedgerException.ManagedLedgerFencedException.class);
        assertFailsWith(p.save(change(3)), ManagedLedgerException.ManagedLedgerFencedException.class);
        assertThat(p.saveThrottled(3)).isCompletedExceptionally();
        assertThat(saved).hasSize(1);
        assertThat(scheduled).as("no retry after fencing").isEmpty();
        assertThat(p.persisted().markDeleteEnd()).isZero();
        assertThat(stats.getPersistZookeeperErrors()).isEqualTo(1);
    }

    @Test
    void save_streamGone_failsThisAndLaterRequestsNotFound() {
        CursorPersistence p = persistence(0);
        CompletableFuture<Void> a = p.save(change(1));
        completeNext(new WriteOutcome.UnknownStream(StreamId.of(3)));
        assertFailsWith(a, ManagedLedgerException.ManagedLedgerNotFoundException.class);
        assertFailsWith(p.save(change(2)), ManagedLedgerException.ManagedLedgerNotFoundException.class);
        assertThat(saved).hasSize(1);
        assertThat(scheduled).as("no retry once the stream is gone").isEmpty();
        assertThat(stats.getPersistZookeeperErrors()).isEqualTo(1);
    }

    @Test
    void save_failed_failsItsRequestsAndIsRetriedWithBackoff() {
        CursorPersistence p = persistence(0);
        CompletableFuture<Void> a = p.save(change(4));
        pending.remove(0).completeExceptionally(new IllegalStateException("metadata store unavailable"));
        assertThat(a).isCompletedExceptionally();
        assertThat(p.isDirty()).isTrue();
        assertThat(scheduledDelays).containsExactly(CursorPersistence.FIRST_RETRY_NANOS);

        CompletableFuture<Void> b = p.save(change(5)); // waits for the retry, not started on its own
        assertThat(saved).hasSize(1);
        scheduled.remove(0).run();
        assertThat(saved).extracting(CursorState::markDeleteEnd).containsExactly(4L, 5L);
        pending.remove(0).completeExceptionally(new IllegalStateException("still unavailable"));
        assertThat(b).isCompletedExceptionally();
        assertThat(scheduledDelays).containsExactly(CursorPersistence.FIRST_RETRY_NANOS,
                2 * CursorPersistence.FIRST_RETRY_NANOS);

        scheduled.remove(0).run();
        completeNext(WriteOutcome.WRITTEN);
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(5);
        assertThat(p.isDirty()).isFalse();
    }

    @Test
    void saveThrottled_failedFlush_isRetriedWithoutAnotherAck() {
        // the consumer's last acknowledgements were throttled, then their flush failed: the retry saves them
        CursorPersistence p = persistence(1.0);
        p.saveThrottled(change(1));
        completeNext(WriteOutcome.WRITTEN);
        nanos.addAndGet(100_000_000L);
        p.saveThrottled(change(2));
        scheduled.remove(0).run();
        pending.remove(0).completeExceptionally(new IllegalStateException("conflict retries exhausted"));
        assertThat(scheduled).hasSize(1);
        scheduled.remove(0).run();
        completeNext(WriteOutcome.WRITTEN);
        assertThat(p.persisted().markDeleteEnd()).isEqualTo(2);
    }

    @Test
    void stop_thenSave_failsWithReason() {
        CursorPersistence p = persistence(0);
        p.stop(new ManagedLedgerException.ManagedLedgerAlreadyClosedException("ledger closed"));
        assertFailsWith(p.save(change(1)), ManagedLedgerException.ManagedLedgerAlreadyClosedException.class);
        assertThat(p.idle()).isCompleted();
        assertThat(saved).isEmpty();
    }

    @Test
    void idle_withSaveInFlight_completesWhenItEndsEvenIfFailed() {
        CursorPersistence p = persistence(0);
        p.save(change(1));
        CompletableFuture<Void> idle = p.idle();
        assertThat(idle).isNotDone();
        pending.remove(0).completeExceptionally(new IllegalStateException("boom"));
        assertThat(idle).isCompleted();
    }

    @Test
    void flush_withSaveInFlight_completesWhenItLands() {
        CursorPersistence p = persistence(0);
        p.save(change(1));
        CompletableFuture<Void> flushed = p.flush();
        assertThat(flushed).isNotDone();
        completeNext(WriteOutcome.WRITTEN);
        assertThat(flushed).isCompleted();
    }

    @Test
    void flush_nothingChanged_completesAtOnce() {
        CursorPersistence p = persistence(0);
        assertThat(p.flush()).isCompleted();
        assertThat(saved).isEmpty();
    }

    @Test
    void saveThrottled_veryLowRate_flushScheduledWithinSixtySeconds() {
        CursorPersistence p = persistence(0.001);
        p.saveThrottled(change(1));
        completeNext(WriteOutcome.WRITTEN);
        p.saveThrottled(change(2));
        assertThat(scheduledDelays).containsExactly(CursorPersistence.MAX_FLUSH_DELAY_NANOS);
        assertThat(p.isDirty()).isTrue();
    }
}
