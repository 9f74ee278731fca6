package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogFormat.FRAME_BYTES;
import static io.nereus.fdb.embedded.DurableLogFormat.SEGMENT_HEADER_BYTES;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group commit of a {@link DurableLog} (see "Appending" there): a daemon thread,
 * {@code nereus-durable-log-flusher}, takes every record queued in the {@link AppendQueue}, encodes them into one
 * buffer, writes them to the active segment, fsyncs once and completes their futures in version order (with a
 * sync interval above zero: completes them once written, and once the interval has passed, at the next batch or when
 * the queue stays empty that long, has the {@link LogSyncer} fsync them on its own thread while it goes on writing;
 * before a roll and before closing it syncs them itself). Before a
 * batch it rolls to a new segment when the log not covered by a snapshot has outgrown the compaction threshold,
 * and hands the old segments to the {@link LogCompactor}. The first failure of a write, an fsync or a roll kills
 * the log: the batch and every later append fail with it.
 *
 * <p>Threading: everything but the fsync count (atomic) belongs to the flusher thread; futures are completed on
 * it; the syncer's thread only forces the channels it is handed. Logs under {@link DurableLog}'s name. Lifecycle:
 * {@link #start()} once the log is open; the thread runs until the queue is closed and drained, then stops the
 * syncer, waits for a running compaction, closes the active segment and runs {@code onStopped} (which releases the
 * directory lock).
 */
final class LogFlusher {
    private static final Logger LOG = LoggerFactory.getLogger(DurableLog.class);
    /** The flusher encodes into one direct buffer of up to this size, writing it out whenever it is full. */
    private static final int MAX_BUFFER_BYTES = 4 << 20;

    private final Path dir;
    private final DurableLogOptions options;
    private final AppendQueue queue;
    private final LogSegments segments;
    private final LogCompactor compactor;
    private final DurableLog.TestHook hook;
    private final Runnable onStopped;
    private final Thread thread;
    /** Fsyncs made, of every group or (a sync interval above zero) by the syncer. */
    private final AtomicLong fsyncs = new AtomicLong();
    /** Makes the interval's fsyncs (a sync interval above zero); null with a sync interval of zero. */
    private final LogSyncer syncer;

    // Owned by the flusher thread.
    private FileChannel active;
    private long lastWrittenVersion;
    private ByteBuffer writeBuffer = ByteBuffer.allocateDirect(1 << 16);
    /** Records were written since the last fsync was asked for (a sync interval above zero). */
    private boolean unsynced;
    private long lastSyncNanos = System.nanoTime();
    private final CRC32C crc = new CRC32C();

    /**
     * @param active a channel on the active segment, positioned at its end; the flusher owns and closes it
     * @param lastWrittenVersion the version of the last record in the segments (or the active segment's first
     *     version minus one)
     * @param hook called at {@code "before-write"} before each batch and at {@code "before-fsync"} before each
     *             fsync of the active segment, on the flusher thread
     * @param onStopped run on the flusher thread once it has closed the active segment
     */
    LogFlusher(Path dir, DurableLogOptions options, AppendQueue queue, LogSegments segments, LogCompactor compactor,
               FileChannel active, long lastWrittenVersion, DurableLog.TestHook hook, Runnable onStopped) {
        this.dir = dir;
        this.options = options;
        this.queue = queue;
        this.segments = segments;
        this.compactor = compactor;
        this.active = active;
        this.lastWrittenVersion = lastWrittenVersion;
        this.hook = hook;
        this.onStopped = onStopped;
        this.thread = new Thread(this::run, "nereus-durable-log-flusher");
        this.thread.setDaemon(true);
        this.syncer = options.syncsEveryGroup() ? null : new LogSyncer(dir, hook, this::syncFailed, fsyncs);
    }

    void start() {
        if (syncer != null) {
            syncer.start();
        }
        thread.start();
    }

    /** Whether the calling thread is the flusher (which cannot wait for itself). */
    boolean isFlusherThread() {
        return Thread.currentThread() == thread;
    }

    /** Waits until the flusher thread has stopped, keeping the caller's interrupt status. */
    void awaitStopped() {
        joinUninterruptibly(thread);
    }

    /** How many times the log has been fsynced (with a sync interval, each time its sync mark written too). */
    long fsyncCount() {
        return fsyncs.get();
    }

    /** The version of the last record written (flusher thread, or once it has stopped). */
    long lastWrittenVersion() {
        return lastWrittenVersion;
    }

    /** Closes the active segment's channel from the calling thread, so that the next write fails (tests). */
    void breakChannelForTest() throws IOException {
        active.close();
    }

    private void run() {
        try {
            drainUntilClosed();
        } finally {
            shutdown();
        }
    }

    /** Run by the flusher when it stops: waits for compaction, then closes the active segment. */
    private void shutdown() {
        if (syncer != null) {
            syncer.stop(); // makes the sync asked for last, if syncAtEnd did not take it over
        }
        Thread compaction = compactor.thread();
        if (compaction != null) {
            joinUninterruptibly(compaction);
        }
        try {
            active.close();
        } catch (IOException e) {
            LOG.warn("Failed to close the active segment of the durable log in {}", dir, e);
        }
        onStopped.run();
    }

    static void joinUninterruptibly(Thread t) {
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void drainUntilClosed() {
        ArrayList<AppendQueue.Pending> batch = new ArrayList<>();
        while (true) {
            // at least a nanosecond: 0 would wait without limit
            ArrayList<AppendQueue.Pending> taken = queue.take(batch, unsynced ? Math.max(1, syncDueInNanos()) : 0);
            if (taken == null) {
                syncAtEnd();
                return; // closing, and everything queued has been handled
            }
            if (taken.isEmpty()) { // the sync interval passed with nothing queued
                if (queue.failure() == null) {
                    requestSync();
                } else {
                    unsynced = false; // a dead log syncs nothing more
                }
                continue;
            }
            batch = taken;
            IOException dead = queue.failure();
            if (dead == null) {
                try {
                    writeBatch(batch);
                } catch (Throwable t) {
                    dead = t instanceof IOException io ? io : new IOException("durable log write failed", t);
                    queue.fail(dead);
                    LOG.error("Durable log write failed in {}; the log is dead and every further append fails", dir, t);
                }
            }
            for (AppendQueue.Pending p : batch) {
                if (dead == null) {
                    p.future().complete(null);
                } else {
                    p.future().completeExceptionally(dead);
                }
            }
            batch.clear();
        }
    }

    private void writeBatch(List<AppendQueue.Pending> batch) throws IOException {
        hook.reached("before-write");
        rollIfNeeded();
        long total = 0;
        for (AppendQueue.Pending p : batch) {
            total += FRAME_BYTES + p.payloadBytes();
        }
        if (writeBuffer.capacity() < Math.min(total, MAX_BUFFER_BYTES)) {
            writeBuffer = ByteBuffer.allocateDirect(Integer.highestOneBit((int) Math.min(total, MAX_BUFFER_BYTES) - 1) << 1);
        }
        ByteBuffer buf = writeBuffer.clear();
        for (AppendQueue.Pending p : batch) {
            int bytes = FRAME_BYTES + p.payloadBytes();
            if (buf.remaining() < bytes) {
                writeOut(buf.flip());
                buf.clear();
            }
            if (buf.remaining() >= bytes) {
                DurableLogFormat.encodeRecord(p.record(), p.payloadBytes(), buf, crc);
            } else { // a record larger than the buffer gets one of its own
                ByteBuffer big = ByteBuffer.allocate(bytes);
                DurableLogFormat.encodeRecord(p.record(), p.payloadBytes(), big, crc);
                writeOut(big.flip());
            }
        }
        writeOut(buf.flip());
        segments.activeGrew(total);
        lastWrittenVersion = batch.get(batch.size() - 1).record().version();
        if (syncer == null) {
            syncGroup();
        } else if (syncDueInNanos() <= 0) {
            requestSync();
        } else {
            unsynced = true;
        }
    }

    /** Nanoseconds until the written records must be fsynced (a sync interval above zero). */
    private long syncDueInNanos() {
        return Math.max(0, lastSyncNanos + options.syncInterval().toNanos() - System.nanoTime());
    }

    /** Fsyncs the active segment before its group is acknowledged (a sync interval of zero). */
    private void syncGroup() throws IOException {
        hook.reached("before-fsync");
        active.force(false);
        fsyncs.incrementAndGet();
    }

    /** What is written to the active segment now, as a point for the syncer. */
    private LogSyncer.SyncPoint writtenPoint() {
        return new LogSyncer.SyncPoint(active, segments.activeFirstVersion(), segments.activeBytes());
    }

    /** Hands what is written now to the syncer (a sync interval above zero); the interval starts again. */
    private void requestSync() {
        syncer.request(writtenPoint());
        lastSyncNanos = System.nanoTime();
        unsynced = false;
    }

    /** Fsyncs what is written now on this thread, after a sync running on the syncer's (a sync interval above zero). */
    private void syncNow() throws IOException {
        syncer.syncNow(writtenPoint());
        lastSyncNanos = System.nanoTime();
        unsynced = false;
    }

    /** A sync on the syncer's thread failed: the log is dead, and every later append fails. */
    private void syncFailed(IOException e) {
        queue.fail(e);
        LOG.error("Durable log fsync failed in {}; the log is dead and every further append fails", dir, e);
    }

    /** Written records not yet fsynced are fsynced before the log closes. */
    private void syncAtEnd() {
        if (!unsynced || queue.failure() != null) {
            return; // a sync asked for earlier is made by the syncer before it stops
        }
        try {
            syncNow();
        } catch (IOException | RuntimeException e) {
            syncFailed(LogSyncer.asFsyncFailure(e));
        }
    }

    /** Writes all of {@code buf}; heap buffers in slices, so the JDK's cached temporary direct buffer stays small. */
    private void writeOut(ByteBuffer buf) throws IOException {
        int limit = buf.limit();
        while (buf.hasRemaining()) {
            if (!buf.isDirect()) {
                buf.limit(Math.min(limit, buf.position() + (1 << 20)));
            }
            active.write(buf);
            buf.limit(limit);
        }
    }

    /** Rolls to a new segment and starts a compaction when the uncovered log has grown past the threshold. */
    private void rollIfNeeded() throws IOException {
        long current = segments.activeBytes();
        long threshold = options.compactionThresholdBytes();
        if (current <= SEGMENT_HEADER_BYTES || current < threshold / 2 || compactor.isRunning()
                || segments.totalBytes() < threshold) {
            return;
        }
        if (syncer != null) {
            syncNow(); // a segment before the last is always wholly on disk: recovery refuses damage there
        }
        long first = lastWrittenVersion + 1;
        FileChannel next = segments.roll(first);
        FileChannel old = active;
        active = next;
        try {
            old.close();
        } catch (IOException e) {
            LOG.warn("Failed to close a full segment of the durable log in {}", dir, e); // its data is already fsynced
        }
        LOG.debug("Rolled the durable log in {} to a new segment at version {}", dir, first);
        compactor.start(first - 1);
    }
}
