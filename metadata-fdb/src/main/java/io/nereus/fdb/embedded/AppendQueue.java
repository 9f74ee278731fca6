package io.nereus.fdb.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The hand-off between {@link DurableLog#append} and the flusher: records queued for the next group commit,
 * with the future each committer waits on. It also holds whether the log still takes appends: not once it is
 * closing, and not once the flusher has recorded a write failure (the log is then dead, and every later
 * append fails with that {@link IOException}).
 *
 * <p>Threading: the queue, the closing flag and the last appended version are guarded by a private lock; the
 * flusher waits on its condition while the queue is empty. The failure is volatile: the flusher sets it and
 * reads it without the lock. Lifecycle: one per open log; {@link #close()} lets the flusher drain what is
 * queued and then stop.
 */
final class AppendQueue {
    /** A queued record, its encoded payload size, and the future completed once it is durable (or failed). */
    record Pending(LogRecord record, int payloadBytes, CompletableFuture<Void> future) { }

    private final Path dir;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition queued = lock.newCondition();
    private ArrayList<Pending> queue = new ArrayList<>();   // guarded by lock
    private boolean closing;                                 // guarded by lock
    private long lastAppendedVersion;                        // guarded by lock
    private volatile IOException failure;

    AppendQueue(Path dir, long recoveredVersion) {
        this.dir = dir;
        this.lastAppendedVersion = recoveredVersion;
    }

    /**
     * Queues {@code record} ({@code payloadBytes} encoded); a future already failed when the log is dead or
     * closing.
     *
     * @throws IllegalArgumentException if the version does not exceed the last one appended (or recovered)
     */
    CompletableFuture<Void> add(LogRecord record, int payloadBytes) {
        lock.lock();
        try {
            if (record.version() <= lastAppendedVersion) {
                throw new IllegalArgumentException("log record version " + record.version()
                        + " does not follow version " + lastAppendedVersion);
            }
            IOException dead = failure;
            if (dead != null) {
                return CompletableFuture.failedFuture(dead);
            }
            if (closing) {
                return CompletableFuture.failedFuture(new IOException("the durable log in " + dir + " is closed"));
            }
            lastAppendedVersion = record.version();
            CompletableFuture<Void> future = new CompletableFuture<>();
            queue.add(new Pending(record, payloadBytes, future));
            if (queue.size() == 1) {
                queued.signal();
            }
            return future;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until records are queued or the log is closing, then takes every queued record, handing over
     * {@code empty} (an empty list) to queue the next ones; {@code null} once closing with nothing queued
     * (flusher thread only).
     */
    ArrayList<Pending> take(ArrayList<Pending> empty) {
        return take(empty, 0);
    }

    /**
     * As {@link #take(ArrayList)}, but waiting at most {@code timeoutNanos} ({@code 0}: without limit): returns
     * {@code empty} itself, still empty, when the time passed with nothing queued.
     */
    ArrayList<Pending> take(ArrayList<Pending> empty, long timeoutNanos) {
        lock.lock();
        try {
            long remaining = timeoutNanos;
            while (queue.isEmpty() && !closing) {
                if (timeoutNanos <= 0) {
                    queued.awaitUninterruptibly();
                } else if (remaining <= 0) {
                    return empty;
                } else {
                    try {
                        remaining = queued.awaitNanos(remaining);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return empty;
                    }
                }
            }
            if (queue.isEmpty()) {
                return null; // closing, and everything queued has been handled
            }
            ArrayList<Pending> taken = queue;
            queue = empty;
            return taken;
        } finally {
            lock.unlock();
        }
    }

    /** Refuses further appends and wakes the flusher so that it drains the queue and stops. */
    void close() {
        lock.lock();
        try {
            closing = true;
            queued.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The write failure that killed the log, or {@code null}. */
    IOException failure() {
        return failure;
    }

    /** The flusher failed to write: the log is dead from now on. */
    void fail(IOException error) {
        failure = error;
    }
}
