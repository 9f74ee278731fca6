package io.nereus.fdb.embedded;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The fsyncs of a {@link DurableLog} with a sync interval above zero: the flusher acknowledges records once written
 * and asks for a sync when the interval has passed ({@link #request}); this class's daemon thread,
 * {@code nereus-durable-log-syncer}, makes it, so that the flusher goes on writing and acknowledging while the disk
 * syncs. An fsync there took 14 to 32 ms on a disk the broker's bookie writes too, and made on the flusher it held up
 * every commit waiting behind it, once a second. Requests made while a sync runs are coalesced into one that covers
 * everything written by the last of them.
 *
 * <p>A sync forces the segment's channel and then records how much of the segment is on disk ({@link SyncMark}). Only
 * one sync runs at a time: {@link #syncNow}, which the flusher calls before a roll and at the end, waits for a running
 * one and takes over the request not yet started. A failed fsync on the syncer's thread kills the log through
 * {@code onFailure}: records already acknowledged stay acknowledged (they were promised only written), and every
 * later append fails.
 *
 * <p>Threading: {@link #request}, {@link #syncNow} and {@link #stop} are called by the flusher thread; the fsync count
 * (the log's, counted here too) may be read by any thread.
 */
final class LogSyncer {
    /** What a sync makes durable: the first {@code bytes} of the segment named {@code firstVersion}. */
    record SyncPoint(FileChannel channel, long firstVersion, long bytes) {
    }

    private final Path dir;
    private final DurableLog.TestHook hook;
    private final Consumer<IOException> onFailure;
    private final ReentrantLock syncLock = new ReentrantLock();
    private final AtomicLong fsyncs;
    private final Thread thread;
    /** The sync asked for and not yet started; guarded by {@code this}. */
    private SyncPoint requested;
    /** Set once by {@link #stop}; guarded by {@code this}. */
    private boolean stopping;

    /**
     * @param hook called at {@code "before-fsync"} before each fsync, on the thread making it
     * @param onFailure told of a failed fsync made on the syncer's thread; it kills the log and logs the error
     * @param fsyncs the log's fsync count, raised once each sync's mark is written
     */
    LogSyncer(Path dir, DurableLog.TestHook hook, Consumer<IOException> onFailure, AtomicLong fsyncs) {
        this.dir = dir;
        this.hook = hook;
        this.onFailure = onFailure;
        this.fsyncs = fsyncs;
        this.thread = new Thread(this::run, "nereus-durable-log-syncer");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Asks for {@code point} to be synced on the syncer's thread, replacing a request not yet started. */
    synchronized void request(SyncPoint point) {
        requested = point;
        notifyAll();
    }

    /**
     * Syncs {@code point} on the calling thread, after any sync running now, and drops the request not yet started,
     * which {@code point} covers (it is the flusher's latest): once this returns no sync runs or waits until the next
     * {@link #request}, so the flusher may roll the segment.
     */
    void syncNow(SyncPoint point) throws IOException {
        syncLock.lock();
        try {
            synchronized (this) {
                requested = null;
            }
            sync(point);
        } finally {
            syncLock.unlock();
        }
    }

    /** Makes the sync asked for last, if any, then ends the syncer's thread and waits for it. */
    void stop() {
        synchronized (this) {
            stopping = true;
            notifyAll();
        }
        LogFlusher.joinUninterruptibly(thread);
    }

    private void run() {
        while (true) {
            synchronized (this) {
                while (requested == null && !stopping) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        // a daemon thread nobody interrupts on purpose: go on until stopped
                    }
                }
                if (requested == null) {
                    return; // stopping, and nothing left to sync
                }
            }
            syncLock.lock();
            try {
                SyncPoint point;
                synchronized (this) { // taken under the lock: a syncNow meanwhile has dropped it, covering it
                    point = requested;
                    requested = null;
                }
                if (point != null) {
                    sync(point);
                }
            } catch (IOException | RuntimeException e) {
                onFailure.accept(asFsyncFailure(e));
            } finally {
                syncLock.unlock();
            }
        }
    }

    /** {@code e} as the {@link IOException} a failed fsync kills the log with. */
    static IOException asFsyncFailure(Exception e) {
        return e instanceof IOException io ? io : new IOException("durable log fsync failed", e);
    }

    /** Forces {@code point}'s channel and records how much of its segment is on disk; holding {@link #syncLock}. */
    private void sync(SyncPoint point) throws IOException {
        hook.reached("before-fsync");
        point.channel().force(false);
        SyncMark.write(dir, point.firstVersion(), point.bytes());
        fsyncs.incrementAndGet(); // counted once its mark is written: a reader of the count then finds the mark
    }
}
