package io.nereus.fdb.embedded;

import com.apple.foundationdb.FDBException;
import io.nereus.fdb.FdbErrors;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Where one transaction attempt stands, and what it holds until it ends: the timeout timer, the versionstamp
 * promise and (through {@link TransactionWatches}) its uncommitted watches.
 *
 * <pre>
 *   ACTIVE --commit()--> COMMITTING --durable--> COMMITTED
 *                          ^    |
 *                 commit() |    +--refused/failed--> FAILED
 *                          +-------------------------+
 * </pre>
 * FAILED refuses nothing but {@code getVersionstamp} (2020): the caller is expected to go through
 * {@code onError}, which hands back a fresh attempt. Besides the state, three flags: {@code cancelled}
 * ({@code cancel()} before the commit succeeded), {@code timedOut} (the timeout option fired before the commit
 * ended) and {@code closed} ({@code close()}, or {@code onError} handing back the next attempt). An operation
 * issued while timed out fails with 1031, while cancelled with 1025, during or after the commit with 2017; one on
 * a closed transaction throws {@link IllegalStateException}, as fdb-java's do. Cancelling, timing out and closing
 * an attempt that has not committed release what it holds, failing its pending versionstamp and watches. Once
 * the attempt can neither read nor commit (committed, cancelled, timed out, closed) it runs {@code onEnd} once,
 * which releases its pinned read version.
 *
 * <p>Threading: guarded by the owning transaction's monitor; the caller holds it, except where a method says
 * otherwise. {@code cancelled} and {@code timedOut} are also read without it (by the engine, to abandon a
 * commit). Lifecycle: one per transaction attempt, created with it.
 */
final class TransactionLifecycle {
    private enum State { ACTIVE, COMMITTING, COMMITTED, FAILED }

    private final ScheduledExecutorService scheduler;
    private final TransactionWatches watches;
    private final Runnable onEnd;

    private State state = State.ACTIVE;
    private volatile boolean cancelled;
    private volatile boolean timedOut;
    private boolean closed;
    private long committedVersion = -1;
    private CompletableFuture<byte[]> versionstamp;
    private ScheduledFuture<?> timeoutTask;

    TransactionLifecycle(ScheduledExecutorService scheduler, TransactionWatches watches, Runnable onEnd) {
        this.scheduler = scheduler;
        this.watches = watches;
        this.onEnd = onEnd;
    }

    /** Throws {@link IllegalStateException} once closed; also called without the monitor, as fdb-java allows. */
    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("Cannot access closed object");
        }
    }

    /** The error an operation issued now must fail with, if any. */
    FDBException unusable() {
        if (timedOut) {
            return new EmbeddedFdbException(FdbErrors.TRANSACTION_TIMED_OUT);
        }
        if (cancelled) {
            return new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED);
        }
        if (state == State.COMMITTING || state == State.COMMITTED) {
            return new EmbeddedFdbException(FdbErrors.USED_DURING_COMMIT);
        }
        return null;
    }

    /** Throws the error of {@link #unusable()}, if any. */
    void throwIfUnusable() {
        FDBException e = unusable();
        if (e != null) {
            throw e;
        }
    }

    /** Whether a commit under way must be given up (cancelled or timed out); any thread, no monitor needed. */
    boolean abandoned() {
        return cancelled || timedOut;
    }

    boolean isCancelled() {
        return cancelled;
    }

    void beginCommit() {
        state = State.COMMITTING;
    }

    /** The commit succeeded at {@code version} ({@code -1}: read-only); completes the versionstamp promise. */
    void committed(long version) {
        state = State.COMMITTED;
        committedVersion = version;
        onEnd.run();
        if (versionstamp != null) {
            if (version < 0) {
                versionstamp.completeExceptionally(new EmbeddedFdbException(FdbErrors.NO_COMMIT_VERSION));
            } else {
                versionstamp.complete(EmbeddedEngine.versionstamp(version));
            }
        }
    }

    /** The commit failed; the versionstamp promise fails with 2020. */
    void commitFailed() {
        state = State.FAILED;
        if (versionstamp != null) {
            versionstamp.completeExceptionally(new EmbeddedFdbException(FdbErrors.TRANSACTION_INVALID_VERSION));
        }
    }

    /** The commit version; {@code -1} before a commit and after a read-only one. */
    long committedVersion() {
        return committedVersion;
    }

    /**
     * The promise of the commit's versionstamp, shared by every {@code getVersionstamp} call; created by the
     * first. Fails with 2020 once a commit has failed; the caller has checked {@link #unusable()} first.
     */
    CompletableFuture<byte[]> versionstamp() {
        if (state != State.ACTIVE) {
            throw new EmbeddedFdbException(FdbErrors.TRANSACTION_INVALID_VERSION);
        }
        if (versionstamp == null) {
            versionstamp = new CompletableFuture<>();
        }
        return versionstamp;
    }

    /**
     * (Re)arms the timeout: {@code onTimeout} runs on the scheduler once {@code timeoutMillis} have passed since
     * {@code createdNanos} (the first attempt's creation; {@code nowNanos} is now, in the same time); {@code 0}
     * disarms it.
     */
    void scheduleTimeout(long timeoutMillis, long createdNanos, long nowNanos, Runnable onTimeout) {
        if (timeoutTask != null) {
            timeoutTask.cancel(false);
            timeoutTask = null;
        }
        if (timeoutMillis <= 0) {
            return;
        }
        long elapsed = TimeUnit.NANOSECONDS.toMillis(nowNanos - createdNanos);
        long remaining = Math.max(0, timeoutMillis - elapsed);
        timeoutTask = scheduler.schedule(onTimeout, remaining, TimeUnit.MILLISECONDS);
    }

    /** The timeout fired: unless the attempt already ended, it fails from now on with 1031. */
    void timeOut() {
        if (closed || state == State.COMMITTED || state == State.FAILED) {
            return;
        }
        timedOut = true;
        release(new EmbeddedFdbException(FdbErrors.TRANSACTION_TIMED_OUT));
    }

    /** {@code cancel()}: unless committed, everything pending and every later operation fails with 1025. */
    void cancel() {
        if (state == State.COMMITTED) {
            return;
        }
        cancelled = true;
        release(new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED));
    }

    /** {@code close()}: releases what an uncommitted attempt holds (1025); idempotent. */
    void close() {
        if (closed) {
            return;
        }
        if (state != State.COMMITTED) {
            release(new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED));
        } else if (timeoutTask != null) {
            timeoutTask.cancel(false);
        }
        onEnd.run();
        closed = true;
    }

    /** {@code onError} replaced this attempt with the next one: releases everything (1025) and closes. */
    void closeForRetry() {
        release(new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED));
        closed = true;
    }

    /** Drops what this attempt holds: its timer, pending watches and versionstamp. */
    private void release(FDBException reason) {
        if (timeoutTask != null) {
            timeoutTask.cancel(false);
        }
        if (versionstamp != null && !versionstamp.isDone()) {
            versionstamp.completeExceptionally(reason);
        }
        watches.failAll(reason);
        onEnd.run();
    }
}
