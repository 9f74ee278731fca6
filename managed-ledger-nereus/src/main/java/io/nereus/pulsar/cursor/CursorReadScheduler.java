package io.nereus.pulsar.cursor;

import io.nereus.error.Failures;
import io.nereus.pulsar.PulsarErrors;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reads that move a cursor: immediate reads from the read position, and the one waiting read
 * ({@code readEntriesOrWait}) parked on {@link CursorHost#whenCommittedBeyond} until the host commits beyond the
 * read position, then retried. A second waiting read fails with
 * {@link ManagedLedgerException.ConcurrentWaitCallbackException}; a cancelled one is never completed; closing
 * fails it. Thread-safe (one monitor for the parked read).
 *
 * <p>A waiting read <em>held back by its {@code maxPosition}</em> (entries exist at the read position but the bound
 * excludes them) completes with no entries, as Pulsar's own cursor does, once the host commits another entry or
 * {@code newEntriesCheckDelayInMillis} has passed, whichever is first, so the caller asks again with its current
 * bound. The broker's bound is the transaction buffer's max read position, which moves without an append (its
 * recovery ends, a transaction ends on a marker the caller's bound did not yet include); the broker relies on that
 * re-check, so it is kept, with Pulsar's delay.
 */
final class CursorReadScheduler {
    private static final Logger LOG = LoggerFactory.getLogger(CursorReadScheduler.class);

    private final CursorHost host;
    private final String cursorName;
    private final CursorAckState state;
    private final CursorReads reads;
    private final AtomicInteger pendingReads = new AtomicInteger();
    private final LongAdder entriesRead = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private WaitingRead waiting;

    CursorReadScheduler(CursorHost host, String cursorName, CursorAckState state, CursorReads reads) {
        this.host = host;
        this.cursorName = cursorName;
        this.state = state;
        this.reads = reads;
    }

    /**
     * Reads up to {@code count} unacknowledged entries from the read position (not beyond {@code maxPosition},
     * dropping those {@code skip} matches) and moves the read position past them unless it was moved meanwhile.
     */
    CompletableFuture<List<Entry>> read(int count, long maxSizeBytes, Position maxPosition, Predicate<Position> skip) {
        if (count <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "number of entries to read must be > 0: " + count));
        }
        if (state.isClosed()) {
            return CompletableFuture.failedFuture(state.closedError());
        }
        CursorAckState.ReadStart start = state.readStart();
        long end = state.endExclusive(maxPosition);
        pendingReads.incrementAndGet();
        return reads.readUnacked(start.from(), end, count, maxSizeBytes, skip).handle((read, error) -> {
            if (error == null) {
                long bytes = 0;
                for (Entry e : read.entries()) {
                    bytes += e.getLength();
                }
                addReadStats(read.entries().size(), bytes);
                state.readCompleted(start, read.nextOffset());
                return CompletableFuture.completedFuture(read.entries());
            }
            Throwable failure = Failures.unwrap(error); // the host's failures are mapped already
            long skipTo = Math.min(start.from() + count, host.committedEnd());
            if (failure instanceof ManagedLedgerException.NonRecoverableLedgerException
                    && host.config().isAutoSkipNonRecoverableData() && skipTo > start.from()) {
                // Pulsar's autoSkipNonRecoverableData: step over the unreadable entries and go on reading
                LOG.warn("cursor {} of {} skips unreadable entries [{}, {}): {}", cursorName, host.name(),
                        start.from(), skipTo, failure.getMessage());
                state.readCompleted(start, skipTo);
                return read(count, maxSizeBytes, maxPosition, skip);
            }
            return CompletableFuture.<List<Entry>>failedFuture(failure);
        }).thenCompose(f -> f).whenComplete((v, t) -> pendingReads.decrementAndGet());
    }

    /**
     * Reads now when an entry is available at the read position (and not beyond {@code maxPosition});
     * otherwise parks one read until the host commits beyond it. At the end of a terminated ledger fails with
     * {@link ManagedLedgerException.NoMoreEntriesToReadException}.
     */
    CompletableFuture<List<Entry>> readOrWait(int count, long maxSizeBytes, Position maxPosition,
            Predicate<Position> skip) {
        if (count <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "number of entries to read must be > 0: " + count));
        }
        WaitingRead w;
        synchronized (this) {
            if (state.isClosed()) {
                return CompletableFuture.failedFuture(state.closedError());
            }
            long from = state.readOffset();
            long end = host.committedEnd();
            boolean available = from < end;
            if (available && state.endExclusive(maxPosition) > from) {
                w = null;
            } else if (host.isTerminated() && !available) {
                return CompletableFuture.failedFuture(new ManagedLedgerException.NoMoreEntriesToReadException(
                        "ledger " + host.name() + " is terminated and cursor " + cursorName + " is at its end"));
            } else if (waiting != null) {
                return CompletableFuture.failedFuture(new ManagedLedgerException.ConcurrentWaitCallbackException());
            } else if (available && host.config().getNewEntriesCheckDelayInMillis() <= 0) {
                w = null; // held back by maxPosition, re-checked at once: an empty read, as Pulsar's cursor
            } else {
                long waitBeyond = available ? end : from; // above maxPosition: wait for the next append
                w = new WaitingRead(count, maxSizeBytes, maxPosition, skip, waitBeyond);
                waiting = w;
            }
        }
        if (w == null) {
            return read(count, maxSizeBytes, maxPosition, skip);
        }
        CompletableFuture<Void> trigger = host.whenCommittedBeyond(w.waitBeyond);
        w.trigger = trigger;
        trigger.whenComplete((v, t) -> wake(w, t)); // the host completes it on its executor
        if (heldBack(w)) {
            long delay = host.config().getNewEntriesCheckDelayInMillis();
            CompletableFuture.runAsync(() -> wake(w, null),
                    CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS, host.executor()));
        }
        return w.result;
    }

    /** True when entries exist at the read position but {@code w}'s bound excludes them. */
    private synchronized boolean heldBack(WaitingRead w) {
        long from = state.readOffset();
        return from < host.committedEnd() && state.endExclusive(w.maxPosition) <= from;
    }

    private void wake(WaitingRead w, Throwable error) {
        boolean progressed;
        boolean heldBack;
        synchronized (this) {
            if (waiting != w) {
                return; // cancelled, failed by close, or woken already
            }
            waiting = null;
            progressed = host.committedEnd() > w.waitBeyond || host.isTerminated();
            heldBack = heldBack(w);
        }
        CompletableFuture<Void> trigger = w.trigger;
        if (trigger != null && !trigger.isDone()) {
            trigger.cancel(false); // woken by the delay: leave the host's waiters
        }
        if (error != null && !PulsarErrors.isCancellation(error)) {
            w.result.completeExceptionally(PulsarErrors.map(error));
        } else if (heldBack) {
            // entries exist beyond the caller's bound: complete (empty) so that it asks with its current bound
            read(w.count, w.maxSizeBytes, w.maxPosition, w.skip).whenComplete((entries, t) -> {
                if (t != null) {
                    w.result.completeExceptionally(t);
                } else {
                    w.result.complete(entries);
                }
            });
        } else if (!progressed) {
            w.result.completeExceptionally(new ManagedLedgerException.ManagedLedgerAlreadyClosedException(
                    "ledger " + host.name() + " closed while cursor " + cursorName + " was waiting for entries"));
        } else {
            readOrWait(w.count, w.maxSizeBytes, w.maxPosition, w.skip).whenComplete((entries, t) -> {
                if (t != null) {
                    w.result.completeExceptionally(t);
                } else {
                    w.result.complete(entries);
                }
            });
        }
    }

    /** Cancels the parked read, which is then never completed; false when none is parked. */
    boolean cancel() {
        WaitingRead w;
        synchronized (this) {
            w = waiting;
            waiting = null;
        }
        if (w == null) {
            return false;
        }
        CompletableFuture<Void> trigger = w.trigger;
        if (trigger != null) {
            trigger.cancel(false);
        }
        return true;
    }

    /** Fails the parked read, if any, with {@code why}. */
    void failWaiting(ManagedLedgerException why) {
        WaitingRead w;
        synchronized (this) {
            w = waiting;
            waiting = null;
        }
        if (w != null) {
            CompletableFuture<Void> trigger = w.trigger;
            if (trigger != null) {
                trigger.cancel(false);
            }
            w.result.completeExceptionally(why);
        }
    }

    synchronized boolean hasWaiting() {
        return waiting != null;
    }

    int pendingReads() {
        return pendingReads.get();
    }

    void addReadStats(int entries, long bytes) {
        entriesRead.add(entries);
        bytesRead.add(bytes);
    }

    long entriesRead() {
        return entriesRead.sum();
    }

    /** The one parked read: what it asked for and the host future that wakes it. */
    private static final class WaitingRead {
        final int count;
        final long maxSizeBytes;
        final Position maxPosition;
        final Predicate<Position> skip;
        final long waitBeyond;
        final CompletableFuture<List<Entry>> result = new CompletableFuture<>();
        volatile CompletableFuture<Void> trigger;

        WaitingRead(int count, long maxSizeBytes, Position maxPosition, Predicate<Position> skip, long waitBeyond) {
            this.count = count;
            this.maxSizeBytes = maxSizeBytes;
            this.maxPosition = maxPosition;
            this.skip = skip;
            this.waitBeyond = waitBeyond;
        }
    }
}
