package io.nereus.fdb.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The compaction of a {@link DurableLog} (see "Compaction" there): after the log's writer rolls to a new segment, a
 * daemon thread writes {@code snapshot-V.snap.tmp} from the {@link SnapshotSource}, fsyncs it, renames it into
 * place, fsyncs the directory, and deletes older snapshots and the segments wholly at or below V. A failure is
 * logged and the temporary file removed; the next roll tries again. Closing the log makes a running snapshot
 * write stop early.
 *
 * <p>Threading: the log's writer starts a compaction (at most one runs at a time: the writer does not roll
 * while {@link #isRunning()}); the work runs on its own thread, {@code nereus-durable-log-compactor}, one per
 * compaction. The source, the running flag, the completion future, the thread and the snapshot version are
 * volatile or atomic, read from any thread. Logs under {@link DurableLog}'s name. Lifecycle: one per open log;
 * the closing thread waits for a running compaction before it closes the files.
 */
final class LogCompactor {
    private static final Logger LOG = LoggerFactory.getLogger(DurableLog.class);

    private final Path dir;
    private final LogSegments segments;
    private final BooleanSupplier closed;
    private final DurableLog.TestHook hook;

    private volatile SnapshotSource source;
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
    private volatile Thread thread;
    private volatile long snapshotVersion;

    /**
     * @param snapshotVersion the newest snapshot's version at open, 0 when there is none
     * @param closed whether the log is closing, which abandons a snapshot write
     * @param hook called at {@code "snapshot-written"} and {@code "snapshot-renamed"} on the compaction thread
     */
    LogCompactor(Path dir, LogSegments segments, long snapshotVersion, BooleanSupplier closed,
                 DurableLog.TestHook hook) {
        this.dir = dir;
        this.segments = segments;
        this.snapshotVersion = snapshotVersion;
        this.closed = closed;
        this.hook = hook;
    }

    void setSource(SnapshotSource source) {
        this.source = Objects.requireNonNull(source, "source");
    }

    boolean isRunning() {
        return running.get();
    }

    /** The version of the newest snapshot file, 0 when there is none. */
    long snapshotVersion() {
        return snapshotVersion;
    }

    /** The thread of the latest compaction, {@code null} before the first. */
    Thread thread() {
        return thread;
    }

    /** Waits until no compaction is running (tests). */
    void awaitIdle(long timeout, TimeUnit unit) throws Exception {
        done.get(timeout, unit);
    }

    /**
     * Starts compacting everything at or below {@code version} (already durable: the writer has just rolled
     * past it), unless no snapshot source is set, in which case nothing is ever compacted (the writer).
     */
    void start(long version) {
        SnapshotSource s = source;
        if (s == null) {
            LOG.debug("No snapshot source set; the durable log in {} is not compacted", dir);
            return;
        }
        running.set(true);
        CompletableFuture<Void> finished = new CompletableFuture<>();
        done = finished;
        Thread t = new Thread(() -> {
            try {
                compact(s, version);
            } finally {
                running.set(false);
                finished.complete(null);
            }
        }, "nereus-durable-log-compactor");
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    private void compact(SnapshotSource source, long version) {
        Path tmp = dir.resolve(DurableLogFormat.snapshotName(version) + DurableLogFormat.TMP_SUFFIX);
        Path file = dir.resolve(DurableLogFormat.snapshotName(version));
        long started = System.nanoTime();
        try {
            long entries;
            try (StateSnapshot snapshot = source.openSnapshot(version)) {
                entries = DurableLogFormat.writeSnapshot(tmp, version, snapshot, closed);
            }
            hook.reached("snapshot-written");
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            DurableLogFormat.fsyncDirectory(dir);
            snapshotVersion = version;
            hook.reached("snapshot-renamed");
            long freed = deleteCovered(version);
            LOG.info("Compacted the durable log in {}: snapshot at version {} with {} entries, {} log bytes freed, "
                    + "{} ms", dir, version, entries, freed, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        } catch (Throwable t) {
            if (closed.getAsBoolean()) {
                LOG.info("Abandoned the compaction of the durable log in {} at version {}: the log is closing",
                        dir, version);
            } else {
                LOG.warn("Compaction of the durable log in {} at version {} failed; it is retried at the next roll",
                        dir, version, t);
            }
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException e) {
                LOG.warn("Failed to delete {}", tmp, e);
            }
        }
    }

    /** Deletes the snapshots older than {@code version} and the segments wholly at or below it. */
    private long deleteCovered(long version) throws IOException {
        long freed = segments.deleteCovered(version);
        try (var files = Files.newDirectoryStream(dir, "snapshot-*.snap")) {
            for (Path p : files) {
                long v = DurableLogFormat.parseSnapshotName(p.getFileName().toString());
                if (v >= 0 && v < version) {
                    Files.deleteIfExists(p);
                }
            }
        }
        DurableLogFormat.fsyncDirectory(dir);
        return freed;
    }
}
