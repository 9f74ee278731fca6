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
 * The writing of a {@link DurableLog} (see "Appending" there), on the threads that append: after a committer has
 * queued its record in the {@link AppendQueue} it calls {@link #writeQueued()}, which makes it the writer unless
 * another thread is one; the writer takes every queued record, encodes them into one buffer, writes them to the
 * active segment, and hands what it wrote to the {@link LogSyncer}, then takes what was queued meanwhile, until
 * nothing is. With a sync interval above zero it completes the records' futures itself once written (the syncer
 * fsyncs once the interval has passed); with an interval of zero the syncer completes them once an fsync covers
 * them. Before a batch it rolls to a new segment when the log not covered by a snapshot has outgrown the compaction
 * threshold (syncing the old one first) and hands the old segments to the {@link LogCompactor}. The first failure
 * of a write or a roll kills the log: the batch and every later append fail with it.
 *
 * <p>Threading: everything but the fsync count (atomic) belongs to the writer of the moment, which the queue lets
 * be one thread at a time (its lock orders one writer's state before the next's); the syncer's thread only forces
 * the channels it is handed. Logs under {@link DurableLog}'s name. Lifecycle: writes start once the log is open;
 * {@link #finish()}, called by the closing thread once the queue refuses appends, writes what is left, stops the
 * syncer (which syncs it), waits for a running compaction and closes the active segment.
 */
final class LogWriter {
    private static final Logger LOG = LoggerFactory.getLogger(DurableLog.class);
    /** The writer encodes into one direct buffer of up to this size, writing it out whenever it is full. */
    private static final int MAX_BUFFER_BYTES = 4 << 20;

    private final Path dir;
    private final DurableLogOptions options;
    private final AppendQueue queue;
    private final LogSegments segments;
    private final LogCompactor compactor;
    private final DurableLog.TestHook hook;
    /** Fsyncs made by the syncer (and before rolls). */
    private final AtomicLong fsyncs = new AtomicLong();
    private final LogSyncer syncer;

    // Owned by the writer of the moment.
    private FileChannel active;
    private long lastWrittenVersion;
    private ByteBuffer writeBuffer = ByteBuffer.allocateDirect(1 << 16);
    private final CRC32C crc = new CRC32C();

    /**
     * @param active a channel on the active segment, positioned at its end; the writer owns and closes it
     * @param lastWrittenVersion the version of the last record in the segments (or the active segment's first
     *     version minus one)
     * @param hook called at {@code "before-write"} before each batch, on the writing thread, and at
     *             {@code "before-fsync"} before each fsync of the active segment (the syncer's thread, or the writer
     *             before a roll)
     */
    LogWriter(Path dir, DurableLogOptions options, AppendQueue queue, LogSegments segments, LogCompactor compactor,
              FileChannel active, long lastWrittenVersion, DurableLog.TestHook hook) {
        this.dir = dir;
        this.options = options;
        this.queue = queue;
        this.segments = segments;
        this.compactor = compactor;
        this.active = active;
        this.lastWrittenVersion = lastWrittenVersion;
        this.hook = hook;
        this.syncer = new LogSyncer(dir, options.syncInterval().toNanos(), hook, this::syncFailed, fsyncs);
    }

    void start() {
        syncer.start();
    }

    /**
     * Writes every queued record on the calling thread, and those queued while it writes, unless another thread is
     * writing now (which then writes them too).
     */
    void writeQueued() {
        ArrayList<AppendQueue.Pending> batch = queue.startWriting();
        while (batch != null) {
            writeAndAcknowledge(batch);
            batch.clear();
            batch = queue.continueWriting(batch);
        }
    }

    /**
     * Closing, once the queue refuses appends: writes what is still queued (waiting for a writer of the moment to
     * stop), stops the syncer, which syncs everything written and completes the futures waiting for that, waits for
     * a running compaction and closes the active segment.
     */
    void finish() {
        try {
            ArrayList<AppendQueue.Pending> rest = queue.takeOverWriting();
            if (!rest.isEmpty()) {
                writeAndAcknowledge(rest);
            }
        } finally {
            syncer.stop();
            Thread compaction = compactor.thread();
            if (compaction != null) {
                joinUninterruptibly(compaction);
            }
            try {
                active.close();
            } catch (IOException e) {
                LOG.warn("Failed to close the active segment of the durable log in {}", dir, e);
            }
        }
    }

    /** Whether the calling thread writes or syncs this log now, and so cannot wait for the log to close. */
    boolean isLogThread() {
        return queue.isWriter() || syncer.isSyncerThread();
    }

    /** How many times the log has been fsynced (with a sync interval, each time its sync mark written too). */
    long fsyncCount() {
        return fsyncs.get();
    }

    /** The version of the last record written (by the writer of the moment, or once the log is closed). */
    long lastWrittenVersion() {
        return lastWrittenVersion;
    }

    /** Closes the active segment's channel from the calling thread, so that the next write fails (tests). */
    void breakChannelForTest() throws IOException {
        active.close();
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

    /**
     * Writes {@code batch} and hands it to the syncer: acknowledged now (a sync interval above zero) or once synced;
     * failed, with the log, if the write fails or the log is already dead.
     */
    private void writeAndAcknowledge(List<AppendQueue.Pending> batch) {
        IOException dead = queue.failure();
        if (dead == null) {
            try {
                writeBatch(batch);
            } catch (Throwable t) {
                dead = t instanceof IOException io ? io : new IOException("durable log write failed", t);
                queue.fail(dead);
                dead = queue.failure(); // the first failure, if a failed fsync came first
                LOG.error("Durable log write failed in {}; the log is dead and every further append fails", dir, t);
            }
        }
        if (dead != null) {
            for (AppendQueue.Pending p : batch) {
                p.future().completeExceptionally(dead);
            }
        } else if (options.syncsEveryGroup()) {
            syncer.request(writtenPoint(), batch);
        } else {
            syncer.request(writtenPoint(), List.of());
            for (AppendQueue.Pending p : batch) {
                p.future().complete(null);
            }
        }
    }

    private void writeBatch(List<AppendQueue.Pending> batch) throws IOException {
        hook.reached("before-write");
        rollIfNeeded();
        long total = 0;
        for (AppendQueue.Pending p : batch) {
            total += FRAME_BYTES + p.payloadBytes();
        }
        int wanted = (int) Math.min(total, MAX_BUFFER_BYTES);
        if (writeBuffer.capacity() < wanted) {
            writeBuffer = ByteBuffer.allocateDirect(Integer.highestOneBit(wanted - 1) << 1);
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
    }

    /** What is written to the active segment now, as a point for the syncer. */
    private LogSyncer.SyncPoint writtenPoint() {
        return new LogSyncer.SyncPoint(active, segments.activeFirstVersion(), segments.activeBytes());
    }

    /** A sync on the syncer's thread failed: the log is dead, and every later append fails. */
    private void syncFailed(IOException e) {
        queue.fail(e);
        LOG.error("Durable log fsync failed in {}; the log is dead and every further append fails", dir, e);
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
        // a segment before the last is always wholly on disk: recovery refuses damage there
        syncer.syncNow(writtenPoint());
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
