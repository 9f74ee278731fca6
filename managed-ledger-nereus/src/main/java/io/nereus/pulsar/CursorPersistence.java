package io.nereus.pulsar;

import io.nereus.metadata.CursorState;
import io.nereus.metadata.WriteOutcome;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.bookkeeper.mledger.ManagedLedgerException;

/**
 * Saves one durable cursor's state, coalesced and rate-limited.
 *
 * <ul>
 *   <li>At most one save is in flight; requests made meanwhile collapse into one next save of the newest
 *       state, and all their futures complete when it is durable.</li>
 *   <li>{@link #saveThrottled} honours the rate (saves per second, 0 = unlimited): over the rate it completes
 *       at once, remembers the state as dirty and schedules a flush one interval later (at most 60 s).</li>
 *   <li>{@link #flush()} (used by close) saves the dirty state, including one whose save failed.</li>
 *   <li>A {@code Fenced} outcome makes this and every later request fail with
 *       {@link ManagedLedgerException.ManagedLedgerFencedException}; {@link #stop} makes later requests fail
 *       with the ledger's reason.</li>
 * </ul>
 * Thread-safe (one monitor); futures are completed outside it, on whichever thread finished the save, so
 * callers hop to their executor before calling Pulsar back.
 */
final class CursorPersistence {
    /** Runs a task after a delay (the flush of a throttled state). */
    @FunctionalInterface
    interface Scheduler {
        void schedule(long delayNanos, Runnable task);

        /** Runs tasks on {@code executor} after the delay. */
        static Scheduler on(Executor executor) {
            return (delayNanos, task) -> CompletableFuture.delayedExecutor(delayNanos, TimeUnit.NANOSECONDS, executor)
                    .execute(task);
        }
    }

    /** A throttled state is flushed within this delay even at very low rates (Pulsar's default flush period). */
    static final long MAX_FLUSH_DELAY_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Function<CursorState, CompletableFuture<WriteOutcome>> saver;
    private final Consumer<CursorState> onPersisted;
    private final CursorStatsBean stats;
    private final Scheduler scheduler;
    private final LongSupplier nanoClock;

    private CursorState persisted;
    private double rate;
    private long lastSaveStartNanos;
    private boolean savedOnce;
    private boolean flushScheduled;

    private CursorState inFlight;
    private List<CompletableFuture<Void>> inFlightWaiters = new ArrayList<>();
    private CursorState next;
    private List<CompletableFuture<Void>> nextWaiters = new ArrayList<>();
    /** The newest state not yet requested (throttled) or whose save failed; saved by the next flush. */
    private CursorState dirty;
    private ManagedLedgerException refused;

    /**
     * @param saver        writes one state (conditional on the writer epoch)
     * @param persisted    the state known to be stored now
     * @param onPersisted  told (outside the monitor) of each state once it is durable
     */
    CursorPersistence(Function<CursorState, CompletableFuture<WriteOutcome>> saver, CursorState persisted,
            double rate, Consumer<CursorState> onPersisted, CursorStatsBean stats, Scheduler scheduler,
            LongSupplier nanoClock) {
        this.saver = saver;
        this.persisted = persisted;
        this.onPersisted = onPersisted;
        this.stats = stats;
        this.scheduler = scheduler;
        this.nanoClock = nanoClock;
        setRate(rate);
    }

    synchronized CursorState persisted() {
        return persisted;
    }

    synchronized double rate() {
        return rate;
    }

    synchronized void setRate(double savesPerSecond) {
        if (Double.isNaN(savesPerSecond) || savesPerSecond < 0) {
            throw new IllegalArgumentException("mark-delete rate must be >= 0 saves/s: " + savesPerSecond);
        }
        rate = savesPerSecond;
    }

    /** Saves {@code state} now (after the save in flight); completes when it, or a newer state, is durable. */
    CompletableFuture<Void> save(CursorState state) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Runnable start;
        synchronized (this) {
            if (refused != null) {
                return CompletableFuture.failedFuture(refused);
            }
            dirty = null;
            next = state;
            nextWaiters.add(f);
            start = startNextLocked();
        }
        start.run();
        return f;
    }

    /**
     * Saves {@code state} if the rate allows, else completes at once and keeps it dirty for a flush one
     * interval later (Pulsar's throttled mark-delete).
     */
    CompletableFuture<Void> saveThrottled(CursorState state) {
        boolean schedule;
        long delayNanos;
        synchronized (this) {
            if (refused != null) {
                return CompletableFuture.failedFuture(refused);
            }
            long now = nanoClock.getAsLong();
            long interval = intervalNanos();
            boolean allowed = interval == 0 || !savedOnce || now - lastSaveStartNanos >= interval;
            if (!allowed) {
                if (next != null) {
                    next = state; // a save is queued anyway: it takes the newest state
                    return CompletableFuture.completedFuture(null);
                }
                dirty = state;
                schedule = !flushScheduled;
                flushScheduled = true;
                delayNanos = Math.min(MAX_FLUSH_DELAY_NANOS, interval - (now - lastSaveStartNanos));
            } else {
                schedule = false;
                delayNanos = 0;
            }
        }
        if (delayNanos == 0) {
            return save(state);
        }
        if (schedule) {
            scheduler.schedule(delayNanos, () -> {
                synchronized (this) {
                    flushScheduled = false;
                }
                flush();
            });
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Saves the dirty state if any; completes when everything requested so far is durable (or failed). */
    CompletableFuture<Void> flush() {
        CompletableFuture<Void> f;
        synchronized (this) {
            if (refused != null) {
                return CompletableFuture.failedFuture(refused);
            }
            if (dirty != null) {
                f = null;
            } else if (next != null) {
                f = new CompletableFuture<>();
                nextWaiters.add(f);
            } else if (inFlight != null) {
                f = new CompletableFuture<>();
                inFlightWaiters.add(f);
            } else {
                f = CompletableFuture.completedFuture(null);
            }
        }
        if (f == null) {
            CursorState d;
            synchronized (this) {
                d = dirty;
            }
            return d == null ? flush() : save(d);
        }
        return f;
    }

    /** Completes (never exceptionally) once no save is in flight; used after {@link #stop} before a delete. */
    CompletableFuture<Void> idle() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (this) {
            if (inFlight == null) {
                return CompletableFuture.completedFuture(null);
            }
            inFlightWaiters.add(f);
        }
        return f.handle((v, t) -> null);
    }

    /** True when a state is waiting to be saved or being saved. */
    synchronized boolean isDirty() {
        return dirty != null || next != null || inFlight != null;
    }

    /** Refuses every later request with {@code why}; requests not yet started fail with it too. */
    void stop(ManagedLedgerException why) {
        List<CompletableFuture<Void>> failed;
        synchronized (this) {
            if (refused == null) {
                refused = why;
            }
            failed = nextWaiters;
            nextWaiters = new ArrayList<>();
            next = null;
            dirty = null;
        }
        failed.forEach(f -> f.completeExceptionally(refused));
    }

    private long intervalNanos() {
        return rate <= 0 ? 0 : (long) Math.max(1, 1_000_000_000L / rate);
    }

    /** Starts the next save if none is in flight; returns what to run outside the monitor. */
    private Runnable startNextLocked() {
        if (inFlight != null || next == null) {
            return () -> { };
        }
        CursorState state = next;
        inFlight = state;
        inFlightWaiters = nextWaiters;
        next = null;
        nextWaiters = new ArrayList<>();
        savedOnce = true;
        lastSaveStartNanos = nanoClock.getAsLong();
        return () -> {
            CompletableFuture<WriteOutcome> outcome;
            try {
                outcome = saver.apply(state);
            } catch (RuntimeException e) {
                outcome = CompletableFuture.failedFuture(e);
            }
            outcome.whenComplete((o, t) -> done(state, o, t));
        };
    }

    private void done(CursorState state, WriteOutcome outcome, Throwable error) {
        List<CompletableFuture<Void>> waiters;
        List<CompletableFuture<Void>> alsoFailed = List.of();
        ManagedLedgerException failure = null;
        boolean written = false;
        Runnable start;
        synchronized (this) {
            inFlight = null;
            waiters = inFlightWaiters;
            inFlightWaiters = new ArrayList<>();
            if (error != null) {
                stats.persistToZookeeper(false);
                failure = PulsarErrors.map(error);
                if (dirty == null && next == null) {
                    dirty = state;
                }
            } else if (outcome instanceof WriteOutcome.Written) {
                stats.persistToZookeeper(true);
                persisted = state;
                written = true;
            } else if (outcome instanceof WriteOutcome.Fenced fenced) {
                stats.persistToZookeeper(false);
                failure = new ManagedLedgerException.ManagedLedgerFencedException(
                        "cursor state not saved: the stream's writer epoch is " + fenced.headEpoch()
                                + ", this broker writes with " + fenced.requestEpoch());
                refused = failure;
                alsoFailed = nextWaiters;
                nextWaiters = new ArrayList<>();
                next = null;
                dirty = null;
            } else {
                stats.persistToZookeeper(false);
                failure = new ManagedLedgerException.ManagedLedgerNotFoundException(
                        "cursor state not saved: the stream no longer exists (" + outcome + ")");
                refused = failure;
                alsoFailed = nextWaiters;
                nextWaiters = new ArrayList<>();
                next = null;
                dirty = null;
            }
            start = startNextLocked();
        }
        if (written) {
            onPersisted.accept(state);
            waiters.forEach(f -> f.complete(null));
        } else {
            for (CompletableFuture<Void> f : waiters) {
                f.completeExceptionally(failure);
            }
            for (CompletableFuture<Void> f : alsoFailed) {
                f.completeExceptionally(failure);
            }
        }
        start.run();
    }
}
