package io.nereus.pulsar.cursor;

import io.nereus.error.ErrorContext;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.WriteOutcome;
import io.nereus.pulsar.PulsarErrors;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Saves one durable cursor's state, coalesced and rate-limited.
 *
 * <p>Requests name a <em>version</em> of the cursor's state ({@link CursorAckState#snapshot()}), never a state:
 * when a save starts it takes the newest snapshot from its {@link Source}, so a save of version {@code v} holds
 * every change up to {@code v} and a change can never be overwritten by an older state handed over late (two
 * acknowledgements applied on two threads reach this class in either order).
 *
 * <ul>
 *   <li>At most one save is in flight; requests made meanwhile are served by the next save, which takes the
 *       newest snapshot; each request's future completes once a save holding its version is durable.</li>
 *   <li>{@link #saveThrottled} honours the rate (saves per second, 0 = unlimited): over the rate it completes
 *       at once and schedules a flush of the source's newest version for when the rate allows (at most 60 s).</li>
 *   <li>{@link #flush()} (used by close) saves everything the source holds now.</li>
 *   <li>A failed save fails the requests it served, is logged with the cursor and its state, and is retried
 *       with backoff while the source holds an unsaved version, so an acknowledgement is never left unsaved
 *       silently.</li>
 *   <li>A {@code Fenced} or missing-stream outcome makes this and every later request fail
 *       ({@link ManagedLedgerException.ManagedLedgerFencedException} /
 *       {@link ManagedLedgerException.ManagedLedgerNotFoundException}); {@link #stop} makes later requests fail
 *       with the ledger's reason.</li>
 * </ul>
 * Thread-safe (one monitor, never held while calling the source or the saver); futures are completed outside
 * it, on whichever thread finished the save, so callers hop to their executor before calling Pulsar back.
 */
final class CursorPersistence {
    private static final Logger LOG = LoggerFactory.getLogger(CursorPersistence.class);

    /** Runs a task after a delay (throttled flushes, retries). */
    @FunctionalInterface
    interface Scheduler {
        void schedule(long delayNanos, Runnable task);

        /** Runs tasks on {@code executor} after the delay. */
        static Scheduler on(Executor executor) {
            return (delayNanos, task) -> CompletableFuture.delayedExecutor(delayNanos, TimeUnit.NANOSECONDS, executor)
                    .execute(task);
        }
    }

    /** The cursor state being persisted: its newest version, and a snapshot of it. */
    interface Source {
        long version();

        CursorAckState.Snapshot snapshot();
    }

    /** A throttled state is flushed within this delay even at very low rates (Pulsar's default flush period). */
    static final long MAX_FLUSH_DELAY_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** First retry delay after a failed save; doubled per consecutive failure up to {@link #MAX_RETRY_NANOS}. */
    static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    static final long MAX_RETRY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final String cursor;
    private final String ledger;
    private final Function<CursorState, CompletableFuture<WriteOutcome>> saver;
    private final Source source;
    private final Consumer<CursorState> onPersisted;
    private final CursorStatsBean stats;
    private final Scheduler scheduler;
    private final LongSupplier nanoClock;

    private CursorState persisted;
    private long persistedVersion;
    private double rate;
    private long lastSaveStartNanos;
    private boolean savedOnce;
    private boolean flushScheduled;
    private boolean retryScheduled;
    private int consecutiveFailures;

    private boolean inFlight;
    /** The highest version some caller needs saved now (not throttled). */
    private long wanted;
    /** Futures by the version they wait for; completed once a save holding that version is durable. */
    private final NavigableMap<Long, List<CompletableFuture<Void>>> waiters = new TreeMap<>();
    /** Futures of {@link #idle()}: completed when the save in flight ends, however it ends. */
    private List<CompletableFuture<Void>> idleWaiters = new ArrayList<>();
    private ManagedLedgerException refused;

    /**
     * @param cursor            cursor name, for logs
     * @param ledger            managed ledger name, for logs
     * @param saver             writes one state (conditional on the writer epoch)
     * @param source            the cursor state to take snapshots of
     * @param persisted         the state known to be stored now (for a new cursor: its initial state)
     * @param persistedVersion  the version {@code persisted} holds; -1 when nothing is stored yet
     * @param onPersisted       told (outside the monitor) of each state once it is durable
     */
    CursorPersistence(String cursor, String ledger, Function<CursorState, CompletableFuture<WriteOutcome>> saver,
            Source source, CursorState persisted, long persistedVersion, double rate,
            Consumer<CursorState> onPersisted, CursorStatsBean stats, Scheduler scheduler, LongSupplier nanoClock) {
        this.cursor = cursor;
        this.ledger = ledger;
        this.saver = saver;
        this.source = source;
        this.persisted = persisted;
        this.persistedVersion = persistedVersion;
        this.wanted = persistedVersion;
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

    /** Saves {@code version} (or newer) now, after the save in flight; completes when it is durable. */
    CompletableFuture<Void> save(long version) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Runnable start;
        synchronized (this) {
            if (refused != null) {
                return CompletableFuture.failedFuture(refused);
            }
            if (version <= persistedVersion) {
                return CompletableFuture.completedFuture(null);
            }
            waiters.computeIfAbsent(version, v -> new ArrayList<>()).add(f);
            wanted = Math.max(wanted, version);
            start = startLocked();
        }
        start.run();
        return f;
    }

    /**
     * Saves {@code version} if the rate allows (completing when durable), else completes at once and
     * schedules a flush of the source's newest version for when the rate allows again (Pulsar's throttled
     * mark-delete).
     */
    CompletableFuture<Void> saveThrottled(long version) {
        long delayNanos;
        synchronized (this) {
            if (refused != null) {
                return CompletableFuture.failedFuture(refused);
            }
            long now = nanoClock.getAsLong();
            long interval = intervalNanos();
            if (interval == 0 || !savedOnce || now - lastSaveStartNanos >= interval) {
                delayNanos = 0;
            } else {
                if (flushScheduled) {
                    return CompletableFuture.completedFuture(null);
                }
                flushScheduled = true;
                delayNanos = Math.min(MAX_FLUSH_DELAY_NANOS, interval - (now - lastSaveStartNanos));
            }
        }
        if (delayNanos == 0) {
            return save(version);
        }
        scheduler.schedule(delayNanos, this::scheduledFlush);
        return CompletableFuture.completedFuture(null);
    }

    /** Saves everything the source holds now; completes when it is durable (or failed). */
    CompletableFuture<Void> flush() {
        return save(source.version());
    }

    /** Completes (never exceptionally) once no save is in flight; used after {@link #stop} before a delete. */
    CompletableFuture<Void> idle() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (this) {
            if (!inFlight) {
                return CompletableFuture.completedFuture(null);
            }
            idleWaiters.add(f);
        }
        return f;
    }

    /** True when a change is waiting to be saved or being saved. */
    boolean isDirty() {
        long newest = source.version();
        synchronized (this) {
            return inFlight || newest > persistedVersion;
        }
    }

    /** Refuses every later request with {@code why}; requests not yet served fail with it too. */
    void stop(ManagedLedgerException why) {
        List<CompletableFuture<Void>> failed;
        synchronized (this) {
            if (refused == null) {
                refused = why;
            }
            failed = takeWaitersLocked(Long.MAX_VALUE);
        }
        failed.forEach(f -> f.completeExceptionally(refused));
    }

    private void scheduledFlush() {
        long newest = source.version();
        Runnable start;
        synchronized (this) {
            flushScheduled = false;
            wanted = Math.max(wanted, newest);
            start = startLocked();
        }
        start.run();
    }

    private void retry() {
        long newest = source.version();
        Runnable start;
        synchronized (this) {
            retryScheduled = false;
            wanted = Math.max(wanted, newest);
            start = startLocked();
        }
        start.run();
    }

    private long intervalNanos() {
        return rate <= 0 ? 0 : (long) Math.max(1, 1_000_000_000L / rate);
    }

    /** Starts a save if one is needed and none is in flight or waiting to retry; returns what to run outside. */
    private Runnable startLocked() {
        if (inFlight || retryScheduled || refused != null || wanted <= persistedVersion) {
            return () -> { };
        }
        inFlight = true;
        savedOnce = true;
        lastSaveStartNanos = nanoClock.getAsLong();
        return () -> {
            CursorAckState.Snapshot snapshot;
            CompletableFuture<WriteOutcome> outcome;
            try {
                snapshot = source.snapshot();
                outcome = saver.apply(snapshot.state());
            } catch (RuntimeException e) {
                done(null, null, e);
                return;
            }
            outcome.whenComplete((o, t) -> done(snapshot, o, t));
        };
    }

    private void done(CursorAckState.Snapshot snapshot, WriteOutcome outcome, Throwable error) {
        List<CompletableFuture<Void>> completed = List.of();
        List<CompletableFuture<Void>> failed = List.of();
        ManagedLedgerException failure = null;
        boolean written = false;
        long retryDelay = 0;
        int attempt;
        Runnable start = () -> { };
        List<CompletableFuture<Void>> idle;
        synchronized (this) {
            inFlight = false;
            idle = idleWaiters;
            idleWaiters = new ArrayList<>();
            if (error == null && outcome instanceof WriteOutcome.Written) {
                stats.persistToZookeeper(true);
                consecutiveFailures = 0;
                if (snapshot.version() > persistedVersion) {
                    persisted = snapshot.state();
                    persistedVersion = snapshot.version();
                }
                written = true;
                completed = takeWaitersLocked(persistedVersion);
                start = startLocked();
            } else if (error == null) {
                // refused: fenced, or the stream no longer exists
                stats.persistToZookeeper(false);
                failure = PulsarErrors.map(outcome,
                        ErrorContext.of("ledger", ledger, "cursor", cursor, "operation", "save cursor state"));
                refused = failure;
                failed = takeWaitersLocked(Long.MAX_VALUE);
            } else {
                stats.persistToZookeeper(false);
                failure = PulsarErrors.map(error);
                consecutiveFailures++;
                // the requests this save served fail; the retry saves the source's newest version
                failed = takeWaitersLocked(snapshot == null ? persistedVersion : snapshot.version());
                if (refused == null && !retryScheduled) {
                    retryScheduled = true;
                    retryDelay = Math.min(MAX_RETRY_NANOS,
                            FIRST_RETRY_NANOS << Math.min(20, consecutiveFailures - 1));
                }
            }
            attempt = consecutiveFailures;
        }
        if (failure != null) {
            LOG.warn("Cursor state not saved cursor={} ledger={} markDeleteEnd={} deletedRanges={} attempt={}"
                            + " retryInMs={}", cursor, ledger,
                    snapshot == null ? "?" : snapshot.state().markDeleteEnd(),
                    snapshot == null ? "?" : snapshot.state().individuallyDeleted().size(), attempt,
                    TimeUnit.NANOSECONDS.toMillis(retryDelay), failure);
        }
        if (written) {
            onPersisted.accept(snapshot.state());
            completed.forEach(f -> f.complete(null));
        }
        for (CompletableFuture<Void> f : failed) {
            f.completeExceptionally(failure);
        }
        idle.forEach(f -> f.complete(null));
        if (retryDelay > 0) {
            scheduler.schedule(retryDelay, this::retry);
        }
        start.run();
    }

    /** Removes and returns the waiters for versions up to {@code upTo}. */
    private List<CompletableFuture<Void>> takeWaitersLocked(long upTo) {
        List<CompletableFuture<Void>> out = new ArrayList<>();
        NavigableMap<Long, List<CompletableFuture<Void>>> due = waiters.headMap(upTo, true);
        due.values().forEach(out::addAll);
        due.clear();
        return out;
    }
}
