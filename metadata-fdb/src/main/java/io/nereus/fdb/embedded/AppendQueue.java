package io.nereus.fdb.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The records {@link DurableLog#append} queued and not yet written, with the future each committer waits on, and
 * which thread is writing them now (the writer: at most one at a time, see {@link LogWriter}). It also holds whether
 * the log still takes appends: not once it is closing, and not once a write or an fsync failed (the log is then
 * dead, and every later append fails with that {@link IOException}).
 *
 * <p>Threading: the queue, the writer, the closing flag and the last appended version are guarded by a private lock;
 * {@link #takeOverWriting} waits on its condition until no other thread writes. The failure is volatile: it is set
 * once (the first failure is the one every later append reports) and read without the lock. Lifecycle: one per open
 * log; after {@link #close()} the closing thread takes the writer's part for good and writes what is still queued.
 */
final class AppendQueue {
    /** A queued record, its encoded payload size, and the future completed once it is durable (or failed). */
    record Pending(LogRecord record, int payloadBytes, CompletableFuture<Void> future) { }

    private final Path dir;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition writerLeft = lock.newCondition();
    private ArrayList<Pending> queue = new ArrayList<>();   // guarded by lock
    /** An empty list for the queue to go on in while the writer holds the last one, or null; guarded by lock. */
    private ArrayList<Pending> spare = new ArrayList<>();
    private Thread writer;                                   // guarded by lock
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
            return future;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes the calling thread the writer and takes every queued record, in order; {@code null}, without becoming
     * the writer, when another thread is writing (it takes these records too before it stops) or nothing is queued.
     */
    ArrayList<Pending> startWriting() {
        lock.lock();
        try {
            if (writer != null || queue.isEmpty()) {
                return null;
            }
            writer = Thread.currentThread();
            return swap(spare);
        } finally {
            lock.unlock();
        }
    }

    /**
     * The writer hands back the batch it has written, {@code done} (emptied), and takes the records queued while it
     * wrote; when there are none it stops being the writer and gets {@code null} (writer only). A record queued
     * before this call is taken by it, one queued after it is written by its own appender, so none is left behind.
     */
    ArrayList<Pending> continueWriting(ArrayList<Pending> done) {
        lock.lock();
        try {
            if (queue.isEmpty()) {
                writer = null;
                spare = done;
                writerLeft.signalAll();
                return null;
            }
            return swap(done);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Once closing: waits until no other thread writes, makes the calling thread the writer for good and takes what
     * is still queued (perhaps nothing).
     */
    ArrayList<Pending> takeOverWriting() {
        lock.lock();
        try {
            if (!closing) {
                throw new IllegalStateException("only a closing log's last writer takes over");
            }
            while (writer != null && writer != Thread.currentThread()) {
                writerLeft.awaitUninterruptibly();
            }
            writer = Thread.currentThread();
            return swap(spare);
        } finally {
            lock.unlock();
        }
    }

    /** Whether the calling thread is writing records now (a callback of a future it completes, say). */
    boolean isWriter() {
        lock.lock();
        try {
            return writer == Thread.currentThread();
        } finally {
            lock.unlock();
        }
    }

    /** Takes the queue, which goes on in {@code empty} (a new list when null). Holding the lock. */
    private ArrayList<Pending> swap(ArrayList<Pending> empty) {
        ArrayList<Pending> taken = queue;
        queue = empty != null ? empty : new ArrayList<>();
        if (empty == spare) {
            spare = null;
        }
        return taken;
    }

    /** Refuses further appends; what is queued is still written. */
    void close() {
        lock.lock();
        try {
            closing = true;
        } finally {
            lock.unlock();
        }
    }

    /** The failure that killed the log, or {@code null}. */
    IOException failure() {
        return failure;
    }

    /** A write or an fsync failed: the log is dead from now on, and the first failure is the one appends report. */
    void fail(IOException error) {
        lock.lock();
        try {
            if (failure == null) {
                failure = error;
            }
        } finally {
            lock.unlock();
        }
    }
}
