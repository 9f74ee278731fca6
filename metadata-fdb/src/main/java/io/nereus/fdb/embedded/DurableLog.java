package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogFormat.MAX_PAYLOAD_BYTES;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable commit log of {@link EmbeddedFdb#open(Path)}: a write-ahead log of resolved commits with group
 * commit, plus snapshots that bound how much log a reopen replays.
 *
 * <h2>Directory layout</h2>
 * <ul>
 *   <li>{@code wal-<V>.log}: a log segment, {@code <V>} its first version as 20 zero-padded decimal digits. Every
 *       record in it has a version {@code >= V}, and {@code V - 1} is exactly the last version logged before it
 *       (the last record of the previous segment, or that segment's own {@code V - 1} if it holds none; 0 for the
 *       first segment ever), which lets recovery notice a missing segment.</li>
 *   <li>{@code snapshot-<V>.snap}: the whole key space as of version {@code V} (20 digits too).</li>
 *   <li>{@code *.tmp}: a segment or snapshot being written. Files are only renamed into place after their
 *       contents are fsynced, so a leftover {@code .tmp} is a crash's debris and is deleted on open.</li>
 *   <li>{@code LOCK}: an empty file holding an OS file lock while the log is open, so that two processes
 *       never write the same directory.</li>
 * </ul>
 *
 * <h2>Encoding</h2>
 * All integers are big-endian and unsigned unless said otherwise; checksums are CRC32C
 * ({@link java.util.zip.CRC32C}) stored as u32. The format version is 1; a file with another version is refused
 * with a {@link CorruptLogException} saying so.
 * <pre>
 * segment  = header record*
 * header   = magic u32 "NRWL" (0x4E52574C) | format version u32 (1) | first version u64
 *          | CRC32C of the preceding 16 bytes u32                                    (20 bytes)
 * record   = payload length u32 | CRC32C of the payload u32 | payload
 * payload  = version u64 | effect count u32 | effect*                                 (12 .. 2^30 bytes)
 * effect   = kind u8 (1 = SET, 2 = CLEAR_RANGE) | key length u32 | key | value length u32 | value
 *            (for CLEAR_RANGE, "key" is the begin key and "value" the exclusive end key)
 *
 * snapshot = magic u32 "NRSN" (0x4E52534E) | format version u32 (1) | version u64
 *          | entry* | entry count u64 | CRC32C of every preceding byte of the file u32
 * entry    = key length u32 | key | value length u32 | value    (keys strictly ascending, unsigned order)
 * </pre>
 * Record versions strictly increase within and across segments.
 *
 * <h2>Appending (group commit)</h2>
 * {@link #append} only queues the record; {@link #write()} then writes it on the calling thread, unless another
 * thread is writing, which takes it too: the writer of the moment takes everything queued, encodes it into one buffer
 * (a batch beyond 4 MiB is written in 4 MiB pieces), writes it to the active segment and hands what it wrote to a
 * daemon thread, {@link LogSyncer}'s, which calls {@link FileChannel#force(boolean) force(false)}; then it takes what
 * was queued meanwhile, until nothing is. With a sync interval of zero the futures complete on the syncer's thread,
 * in version order, once an fsync covers their records: a record is acknowledged only once it and everything before
 * it is on disk, and one fsync serves every record written while the previous one ran. With a sync interval above
 * zero the writer completes the futures once written, and the syncer fsyncs at most once per interval, the first
 * record written after a sync waiting at most the interval for it; no thread waits for the disk on the way.
 * Dependent actions that are not {@code *Async} run on the completing thread (the writer, or the syncer) and delay
 * its next write or fsync. After an I/O error (in a write, an fsync or a roll) the log is dead: the failed batch,
 * the records waiting for the failed fsync and every later append fail with that {@link IOException}. Records
 * whose fsync failed may still be on disk and be recovered by the next open: to the committer their outcome is
 * unknown.
 *
 * <h2>Compaction</h2>
 * Before writing a batch, when the segments not covered by a snapshot hold at least
 * {@link DurableLogOptions#compactionThresholdBytes()} bytes (and the active segment at least half that, which
 * spaces out retries after a failed compaction), no compaction is running and the active segment holds a
 * record, the writer syncs the active segment and rolls to a new segment whose first version is one more than the
 * last version written.
 * If a {@link SnapshotSource} is set, a background daemon thread then writes {@code snapshot-V.snap.tmp} from
 * {@link SnapshotSource#openSnapshot(long) openSnapshot(V)}, V being the last version of the old segments
 * (already durable), fsyncs it, renames it into place, fsyncs the directory, and deletes older snapshots and
 * the segments wholly at or below V. Appends continue meanwhile. A failed compaction is logged and retried at the
 * next roll; it never fails an append. Without a snapshot source the log still rolls (so segments stay near the
 * threshold in size) but deletes nothing.
 *
 * <h2>Recovery</h2>
 * {@link #open} deletes leftover {@code .tmp} files, streams the newest snapshot into the
 * {@link RecoverySink} (a damaged snapshot is refused, never skipped: it was only renamed into place after
 * fsync), then replays the segments in order, passing on the records above the snapshot's version and checking
 * that versions strictly increase and that no segment is missing. A damaged record (truncated header, impossible
 * length, record running past the end of the file, checksum mismatch) is a torn write, dropped with a warning
 * and truncated away, only when it is in the last segment and no well-formed record (plausible length, matching
 * checksum) starts anywhere after it; a torn write can only hit the unacknowledged tail, so no acknowledged
 * record is lost. (The one damage this cannot tell from a torn write is damage to the very last record, with
 * nothing valid after it: that record is dropped with the warning.) Any other damage, and any damaged header, is
 * a {@link CorruptLogException} naming the file and byte offset; nothing but leftover {@code .tmp} files is
 * then deleted or truncated. After a successful replay, segments and snapshots made obsolete by the newest
 * snapshot are deleted. The sink's state is meaningless if {@code open} throws.
 *
 * <h2>Structure and threads</h2>
 * This class opens the directory (taking {@code LOCK}), runs {@link DurableLogRecovery}, and then only delegates:
 * {@link AppendQueue} takes appends from the committing thread and says which thread writes, {@link LogWriter}
 * writes them on it, {@link LogSyncer} fsyncs on its thread, {@link LogSegments} tracks the segment files,
 * {@link LogCompactor} writes snapshots on the compaction thread, and {@link DurableLogFormat} encodes everything.
 * {@link #close()} may be called from any thread; the lock is released once the last write is synced.
 */
final class DurableLog implements EmbeddedEngine.Durability, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DurableLog.class);

    /** Lets tests pause or fail the log at named points; {@code null} in production. */
    @FunctionalInterface
    interface TestHook {
        /**
         * Called at {@code "before-write"} (on the writing thread, before each batch is written; an exception there
         * is a write that failed, a full disk say, before any byte of the batch reached the file), at
         * {@code "before-fsync"} (before each fsync of the active segment, on the syncer's thread, or the writer's
         * before a roll; an exception there is a failed fsync of bytes already written to the file), at
         * {@code "snapshot-written"} and {@code "snapshot-renamed"} (compaction thread), and at {@code "closing"}
         * (once {@link #close()} has marked the log closed; an exception there is ignored).
         */
        void reached(String point) throws IOException;
    }

    private final Path dir;
    private final long recoveredVersion;
    private final FileChannel lockChannel;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AppendQueue queue;
    private final LogSegments segments;
    private final LogCompactor compactor;
    private final LogWriter writer;
    /** Completed once the log is closed and its directory released. */
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    volatile TestHook testHook;

    private DurableLog(Path dir, DurableLogOptions options, FileChannel lockChannel, DurableLogRecovery.Result r) {
        this.dir = dir;
        this.lockChannel = lockChannel;
        this.recoveredVersion = r.recoveredVersion();
        this.queue = new AppendQueue(dir, r.recoveredVersion());
        this.segments = new LogSegments(dir, r.segments());
        this.compactor = new LogCompactor(dir, segments, r.snapshotVersion(), closed::get, this::hook);
        this.writer = new LogWriter(dir, options, queue, segments, compactor, r.active(), r.lastLoggedVersion(),
                this::hook);
    }

    /**
     * Opens (creating the directory if needed) and recovers into {@code sink} before returning.
     *
     * @throws CorruptLogException when anything other than a torn final record is damaged
     * @throws IOException when the directory cannot be read or written, or another process has it open
     */
    static DurableLog open(Path dir, DurableLogOptions options, RecoverySink sink) throws IOException {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(sink, "sink");
        DurableLogFormat.createDirectoriesDurably(dir);
        FileChannel lockChannel = FileChannel.open(dir.resolve(DurableLogFormat.LOCK_FILE),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            FileLock lock;
            try {
                lock = lockChannel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new IOException("the durable log in " + dir + " is already open");
            }
            DurableLogRecovery.Result recovered = DurableLogRecovery.run(dir, sink);
            try {
                if (options.syncsEveryGroup()) {
                    SyncMark.delete(dir); // every group is fsynced from now on; a mark would only understate that
                } else {
                    DurableLogRecovery.Segment last = recovered.segments().get(recovered.segments().size() - 1);
                    recovered.active().force(false); // what the last process wrote but had not yet fsynced
                    SyncMark.write(dir, last.firstVersion(), last.size());
                }
            } catch (IOException | RuntimeException e) {
                recovered.active().close();
                throw e;
            }
            DurableLog log = new DurableLog(dir, options, lockChannel, recovered);
            log.writer.start();
            return log;
        } catch (IOException | RuntimeException | Error e) {
            try {
                lockChannel.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The highest version recovered (snapshot or log), 0 when the log was empty. */
    long recoveredVersion() {
        return recoveredVersion;
    }

    /** Set by the engine once, right after open and before any append; compaction needs it. */
    void setSnapshotSource(SnapshotSource source) {
        compactor.setSource(source);
    }

    /**
     * Queues {@code record} for the next {@link #write()}; never blocks on I/O. Versions must strictly increase and
     * exceed {@link #recoveredVersion()}; calls must not overlap (the engine's commit critical section). The
     * record's arrays must not be mutated afterwards. The future completes once the record is durable as the
     * options say (written, or fsynced: see "Appending"); it fails with an {@link IOException} if the log is closed
     * or dead.
     *
     * @throws IllegalArgumentException if the version does not increase or the record exceeds 1 GiB encoded
     */
    @Override
    public CompletableFuture<Void> append(LogRecord record) {
        long payloadBytes = DurableLogFormat.payloadBytes(record);
        if (payloadBytes > MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException("log record of " + payloadBytes + " bytes exceeds the limit of "
                    + MAX_PAYLOAD_BYTES);
        }
        return queue.add(record, (int) payloadBytes);
    }

    /**
     * Writes what is queued on the calling thread, and what is queued while it writes, unless another thread is
     * writing now (which then writes it too); never waits for the disk to sync. Call it after {@link #append}, outside
     * the critical section that orders appends, so that a commit does not wait for the write before it.
     */
    @Override
    public void write() {
        writer.writeQueued();
    }

    /** Bytes in log segments not yet covered by a snapshot. */
    long logBytes() {
        return segments.totalBytes();
    }

    /** How many times the log has been fsynced (tests use it to see group commit). */
    long fsyncCount() {
        return writer.fsyncCount();
    }

    /** The version of the newest snapshot file, 0 when there is none. */
    long snapshotVersion() {
        return compactor.snapshotVersion();
    }

    /** Waits until no compaction is running (tests). */
    void awaitCompaction(long timeout, TimeUnit unit) throws Exception {
        compactor.awaitIdle(timeout, unit);
    }

    /** Closes the active segment's channel under the writer, so that its next write fails (tests). */
    void breakChannelForTest() throws IOException {
        writer.breakChannelForTest();
    }

    /**
     * Writes and fsyncs pending appends (completing their futures), waits for a running compaction (which stops
     * early), then releases the files. Idempotent. Called from a thread of the log's own (a future's callback on the
     * writer or the syncer, or the compaction thread) it cannot wait for itself: a thread of its own,
     * {@code nereus-durable-log-closer}, then closes the log, and the call returns at once.
     */
    @Override
    public void close() {
        boolean ownThread = writer.isLogThread() || Thread.currentThread() == compactor.thread();
        if (closed.compareAndSet(false, true)) {
            queue.close();
            try {
                hook("closing");
            } catch (IOException | RuntimeException e) {
                LOG.debug("Test hook failed at closing", e);
            }
            if (ownThread) {
                Thread closer = new Thread(this::finish, "nereus-durable-log-closer");
                closer.setDaemon(true);
                closer.start();
            } else {
                finish();
            }
        } else if (!ownThread) {
            stopped.join(); // waits without being interrupted
        }
    }

    /** Writes what is left, syncs, closes the segment and releases the directory. */
    private void finish() {
        try {
            writer.finish();
        } finally {
            releaseLock();
            stopped.complete(null);
        }
    }

    /** Releases the directory once the last write is synced and the active segment closed. */
    private void releaseLock() {
        try {
            lockChannel.close();
        } catch (IOException e) {
            LOG.warn("Failed to release the lock of the durable log in {}", dir, e);
        }
        LOG.info("Closed the durable log in {} at version {}", dir, writer.lastWrittenVersion());
    }

    private void hook(String point) throws IOException {
        TestHook hook = testHook;
        if (hook != null) {
            hook.reached(point);
        }
    }
}
