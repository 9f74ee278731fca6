package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogFormat.SEGMENT_HEADER_BYTES;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The segment files of a {@link DurableLog} not yet covered by a snapshot, in version order; the last one is
 * the active segment the log's writer appends to. Segment {@code i} holds the versions from its first version up to
 * segment {@code i+1}'s first version minus one (see the directory layout in {@link DurableLog}).
 *
 * <p>Threading: the list is guarded by a private lock. The log's writer of the moment appends to it (a roll) and alone
 * grows the active segment's size; the compaction thread trims covered segments from its front; any thread may
 * sum the sizes. Lifecycle: built from what {@link DurableLogRecovery} kept, for as long as the log is open; it
 * never closes channels (the writer owns the active one).
 */
final class LogSegments {
    /** A segment file; {@code size} is written only by the log's writer. */
    private static final class Segment {
        final Path path;
        final long firstVersion;
        volatile long size;

        Segment(Path path, long firstVersion, long size) {
            this.path = path;
            this.firstVersion = firstVersion;
            this.size = size;
        }
    }

    private final Path dir;
    /** Guards {@link #segments}. */
    private final Object lock = new Object();
    private final List<Segment> segments = new ArrayList<>();

    LogSegments(Path dir, List<DurableLogRecovery.Segment> recovered) {
        this.dir = dir;
        for (DurableLogRecovery.Segment s : recovered) {
            segments.add(new Segment(s.path(), s.firstVersion(), s.size()));
        }
    }

    /** Bytes in the segments, header included: the log not yet covered by a snapshot. */
    long totalBytes() {
        synchronized (lock) {
            long n = 0;
            for (Segment s : segments) {
                n += s.size;
            }
            return n;
        }
    }

    private Segment active() {
        synchronized (lock) {
            return segments.get(segments.size() - 1);
        }
    }

    /** The active segment's size in bytes, header included. */
    long activeBytes() {
        return active().size;
    }

    /** The first version of the active segment (its name). */
    long activeFirstVersion() {
        return active().firstVersion;
    }

    /** The writer wrote {@code bytes} more to the active segment (the writer only). */
    void activeGrew(long bytes) {
        active().size += bytes;
    }

    /**
     * Creates the segment file {@code wal-<firstVersion>.log} (header written and fsynced) and makes it the
     * active segment; returns a channel on it positioned after the header (the writer only).
     */
    FileChannel roll(long firstVersion) throws IOException {
        FileChannel next = DurableLogFormat.createSegment(dir, firstVersion);
        synchronized (lock) {
            segments.add(new Segment(dir.resolve(DurableLogFormat.segmentName(firstVersion)), firstVersion,
                    SEGMENT_HEADER_BYTES));
        }
        return next;
    }

    /**
     * Drops the segments wholly at or below {@code version} (never the active one) and deletes their files;
     * returns the bytes freed. The caller fsyncs the directory.
     */
    long deleteCovered(long version) throws IOException {
        List<Segment> covered = new ArrayList<>();
        synchronized (lock) {
            // segment i ends at segment i+1's first version minus one; the active (last) one is never covered
            while (segments.size() > 1 && segments.get(1).firstVersion - 1 <= version) {
                covered.add(segments.remove(0));
            }
        }
        long freed = 0;
        for (Segment s : covered) {
            freed += s.size;
            Files.deleteIfExists(s.path);
        }
        return freed;
    }
}
