package io.nereus.fdb.embedded;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The fsyncs of a {@link DurableLog}, on a daemon thread of their own, {@code nereus-durable-log-syncer}, so that the
 * threads that write records never wait for the disk to sync. The writer hands it what it has written
 * ({@link #request}), with the futures to complete once that is on disk: with a sync interval of zero every write's
 * futures, which the syncer completes in the order they were handed over once an fsync covers them; with an interval
 * above zero none (the writer acknowledged them once written), and the syncer fsyncs at most once per interval, the
 * first write after a sync waiting for the interval to end. Requests made while a sync runs or waits are coalesced
 * into one that covers everything written by the last of them: one fsync serves every record written meanwhile (the
 * log's group commit). An fsync took 14 to 32 ms on a disk the broker's bookie writes too.
 *
 * <p>With an interval above zero a sync forces the segment's channel and then records how much of the segment is on
 * disk ({@link SyncMark}); with an interval of zero the log keeps no mark. Only one sync runs at a time:
 * {@link #syncNow}, which the writer calls before a roll, waits for a running one and takes over the request not yet
 * started (the futures it covers are then completed by the syncer's thread, after those of the running sync). A
 * failed fsync kills the log through {@code onFailure}: the futures waiting for it fail; records already acknowledged
 * after a write stay acknowledged (they were promised only written), and every later append fails.
 *
 * <p>Threading: {@link #request} and {@link #syncNow} are called by the log's writer, {@link #stop} by the closing
 * thread once no one else writes; futures are completed on the syncer's thread, never under the syncer's monitor;
 * the fsync count (the log's, counted here) may be read by any thread.
 */
final class LogSyncer {
    /** What a sync makes durable: the first {@code bytes} of the segment named {@code firstVersion}. */
    record SyncPoint(FileChannel channel, long firstVersion, long bytes) {
    }

    private final Path dir;
    private final long intervalNanos;
    private final DurableLog.TestHook hook;
    private final Consumer<IOException> onFailure;
    private final ReentrantLock syncLock = new ReentrantLock();
    private final AtomicLong fsyncs;
    private final Thread thread;
    /** The sync asked for and not yet started; guarded by {@code this}. */
    private SyncPoint requested;
    /** Futures completed once {@link #requested} is on disk, in the order handed over; guarded by {@code this}. */
    private final ArrayList<CompletableFuture<Void>> awaiting = new ArrayList<>();
    /** Futures whose records a {@link #syncNow} put on disk, for the syncer's thread to complete; guarded by this. */
    private final ArrayList<CompletableFuture<Void>> synced = new ArrayList<>();
    /** The thread waits for a request (not for a running interval): a request wakes it; guarded by {@code this}. */
    private boolean idle;
    /** When the last sync started ({@link System#nanoTime()}); guarded by {@code this}. */
    private long lastSyncNanos = System.nanoTime();
    /** Set once by {@link #stop}; guarded by {@code this}. */
    private boolean stopping;

    /**
     * @param intervalNanos the log's sync interval: zero, sync each request at once and complete its futures after
     * @param hook called at {@code "before-fsync"} before each fsync, on the thread making it
     * @param onFailure told of a failed fsync made on the syncer's thread; it kills the log and logs the error
     * @param fsyncs the log's fsync count, raised once each sync (and its mark, if any) is done
     */
    LogSyncer(Path dir, long intervalNanos, DurableLog.TestHook hook, Consumer<IOException> onFailure,
              AtomicLong fsyncs) {
        this.dir = dir;
        this.intervalNanos = intervalNanos;
        this.hook = hook;
        this.onFailure = onFailure;
        this.fsyncs = fsyncs;
        this.thread = new Thread(this::run, "nereus-durable-log-syncer");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Whether the calling thread is the syncer's (a callback of a future it completes, say). */
    boolean isSyncerThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * Asks for {@code point} to be synced on the syncer's thread, replacing a request not yet started (which it
     * covers: the writer's latest), and for {@code acknowledge}'s futures to be completed once it is.
     */
    void request(SyncPoint point, List<AppendQueue.Pending> acknowledge) {
        synchronized (this) {
            requested = point;
            for (AppendQueue.Pending p : acknowledge) {
                awaiting.add(p.future());
            }
            if (idle) {
                idle = false;
                notifyAll();
            }
        }
    }

    /**
     * Syncs {@code point} on the calling thread, after any sync running now, and drops the request not yet started,
     * which {@code point} covers (it is the writer's latest): once this returns no sync runs or waits until the next
     * {@link #request}, so the writer may roll the segment. The futures waiting for that request are completed by the
     * syncer's thread.
     */
    void syncNow(SyncPoint point) throws IOException {
        syncLock.lock();
        try {
            sync(point);
            synchronized (this) {
                requested = null;
                synced.addAll(awaiting);
                awaiting.clear();
                if (!synced.isEmpty() && idle) {
                    idle = false;
                    notifyAll();
                }
            }
        } finally {
            syncLock.unlock();
        }
    }

    /** Makes the sync asked for last, if any, at once, completes the futures waiting, then ends the thread. */
    void stop() {
        synchronized (this) {
            stopping = true;
            notifyAll();
        }
        LogWriter.joinUninterruptibly(thread);
    }

    private void run() {
        while (true) {
            synchronized (this) {
                if (!awaitWork()) {
                    return; // stopping, and nothing left to sync or complete
                }
            }
            syncLock.lock();
            try {
                SyncPoint point;
                List<CompletableFuture<Void>> done;
                List<CompletableFuture<Void>> after;
                synchronized (this) { // taken under the lock: a syncNow meanwhile has dropped the request, covering it
                    point = requested;
                    requested = null;
                    done = drain(synced);
                    after = drain(awaiting);
                    if (point != null) {
                        lastSyncNanos = System.nanoTime();
                    }
                }
                complete(done, null); // a syncNow put these on disk, before anything handed over since
                IOException failed = null;
                if (point != null) {
                    try {
                        sync(point);
                    } catch (IOException | RuntimeException e) {
                        failed = asFsyncFailure(e);
                        onFailure.accept(failed);
                    }
                }
                complete(after, failed);
            } finally {
                syncLock.unlock();
            }
        }
    }

    /**
     * Waits until there is a sync due or futures to complete (a request waits for the interval to end, unless
     * stopping); {@code false} once stopping with nothing left. Holding {@code this}.
     */
    private boolean awaitWork() {
        while (true) {
            if (!synced.isEmpty()) {
                return true;
            }
            if (requested != null) {
                long due = lastSyncNanos + intervalNanos - System.nanoTime();
                if (stopping || intervalNanos == 0 || due <= 0) {
                    return true;
                }
                waitUninterruptibly(due);
            } else if (stopping) {
                return false;
            } else {
                idle = true;
                waitUninterruptibly(0);
                idle = false;
            }
        }
    }

    /** {@link Object#wait} for at most {@code nanos} ({@code 0}: until notified); a daemon nobody interrupts. */
    private void waitUninterruptibly(long nanos) {
        try {
            if (nanos == 0) {
                wait();
            } else {
                wait(Math.max(1, nanos / 1_000_000), 0);
            }
        } catch (InterruptedException e) {
            // a daemon thread nobody interrupts on purpose: go on until stopped
        }
    }

    /** What {@code from} holds, which is left empty. Holding {@code this}. */
    private static List<CompletableFuture<Void>> drain(List<CompletableFuture<Void>> from) {
        if (from.isEmpty()) {
            return List.of();
        }
        List<CompletableFuture<Void>> taken = new ArrayList<>(from);
        from.clear();
        return taken;
    }

    private static void complete(List<CompletableFuture<Void>> futures, IOException failed) {
        for (CompletableFuture<Void> f : futures) {
            if (failed == null) {
                f.complete(null);
            } else {
                f.completeExceptionally(failed);
            }
        }
    }

    /** {@code e} as the {@link IOException} a failed fsync kills the log with. */
    static IOException asFsyncFailure(Exception e) {
        return e instanceof IOException io ? io : new IOException("durable log fsync failed", e);
    }

    /** Forces {@code point}'s channel and (an interval above zero) records how much of its segment is on disk. */
    private void sync(SyncPoint point) throws IOException {
        hook.reached("before-fsync");
        point.channel().force(false);
        if (intervalNanos > 0) {
            SyncMark.write(dir, point.firstVersion(), point.bytes());
        }
        fsyncs.incrementAndGet(); // counted once its mark is written: a reader of the count then finds the mark
    }
}
