package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogFormat.FRAME_BYTES;
import static io.nereus.fdb.embedded.DurableLogFormat.MAX_PAYLOAD_BYTES;
import static io.nereus.fdb.embedded.DurableLogFormat.MIN_PAYLOAD_BYTES;
import static io.nereus.fdb.embedded.DurableLogFormat.SEGMENT_HEADER_BYTES;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What {@link DurableLog#open} does before the log accepts appends: see the recovery rules in {@link DurableLog}. */
final class DurableLogRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(DurableLog.class);

    /** A segment that stays after recovery; the last one is the active segment. */
    record Segment(Path path, long firstVersion, long size) { }

    /**
     * The outcome of recovery.
     *
     * @param segments the retained segments in version order; the last is the active one, open as {@code active}
     * @param active a channel on the last segment, positioned at its end, readable and writable
     * @param snapshotVersion the newest snapshot's version, 0 when there is none
     * @param recoveredVersion the highest version recovered
     * @param lastLoggedVersion the version of the last record in the segments, or the active segment's first
     *     version minus one when they hold none
     */
    record Result(List<Segment> segments, FileChannel active, long snapshotVersion, long recoveredVersion,
                  long lastLoggedVersion) { }

    private DurableLogRecovery() {
    }

    static Result run(Path dir, RecoverySink sink) throws IOException {
        TreeMap<Long, Path> segmentFiles = new TreeMap<>();
        TreeMap<Long, Path> snapshotFiles = new TreeMap<>();
        boolean deleted = false;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path file : files) {
                String name = file.getFileName().toString();
                long v;
                if (name.equals(SyncMark.FILE)) {
                    continue;
                }
                if (DurableLogFormat.isTempName(name) || name.equals(SyncMark.TMP)) {
                    LOG.info("Deleting leftover temporary file {} of the durable log", file);
                    Files.delete(file);
                    deleted = true;
                } else if ((v = DurableLogFormat.parseSegmentName(name)) >= 0) {
                    segmentFiles.put(v, file);
                } else if ((v = DurableLogFormat.parseSnapshotName(name)) >= 0) {
                    snapshotFiles.put(v, file);
                } else if (!name.equals(DurableLogFormat.LOCK_FILE)) {
                    LOG.warn("Ignoring unexpected file {} in the durable log directory", file);
                }
            }
        }

        long snapshotVersion = 0;
        long snapshotEntries = 0;
        if (!snapshotFiles.isEmpty()) {
            snapshotVersion = snapshotFiles.lastKey();
            snapshotEntries = DurableLogFormat.readSnapshot(snapshotFiles.lastEntry().getValue(), snapshotVersion, sink);
        }

        // A segment is wholly covered by the snapshot when the next segment starts at or before snapshotVersion + 1
        // (the next segment's first version minus one is the last version of this one).
        List<Path> obsolete = new ArrayList<>(snapshotFiles.headMap(snapshotVersion, false).values());
        List<Long> firsts = new ArrayList<>(segmentFiles.keySet());
        int keepFrom = 0;
        while (keepFrom + 1 < firsts.size() && firsts.get(keepFrom + 1) - 1 <= snapshotVersion) {
            obsolete.add(segmentFiles.get(firsts.get(keepFrom)));
            keepFrom++;
        }

        Optional<SyncMark.Mark> mark = SyncMark.read(dir);
        List<Segment> segments = new ArrayList<>();
        FileChannel active = null;
        long last = snapshotVersion;
        long records = 0;
        try {
            for (int i = keepFrom; i < firsts.size(); i++) {
                long first = firsts.get(i);
                Path file = segmentFiles.get(first);
                if (first - 1 != last && (i > keepFrom || first - 1 > snapshotVersion)) {
                    throw new CorruptLogException(file, 0, "log segment starts after version " + (first - 1)
                            + " but the log before it ends at version " + last + " (a segment is missing)");
                }
                last = first - 1;
                boolean isLast = i == firsts.size() - 1;
                FileChannel ch = FileChannel.open(file, isLast
                        ? new StandardOpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE}
                        : new StandardOpenOption[] {StandardOpenOption.READ});
                try {
                    Replay r = replay(ch, file, first, isLast, isLast ? syncedLength(mark, first) : Long.MAX_VALUE,
                            last, snapshotVersion, sink);
                    last = r.lastVersion;
                    records += r.records;
                    segments.add(new Segment(file, first, r.validEnd));
                    if (isLast) {
                        ch.position(r.validEnd);
                        active = ch;
                        ch = null;
                    }
                } finally {
                    if (ch != null) {
                        ch.close();
                    }
                }
            }
            long recovered = Math.max(snapshotVersion, last);
            if (active == null) {
                active = DurableLogFormat.createSegment(dir, recovered + 1);
                segments.add(new Segment(dir.resolve(DurableLogFormat.segmentName(recovered + 1)), recovered + 1,
                        SEGMENT_HEADER_BYTES));
                last = recovered;
            }
            for (Path file : obsolete) {
                LOG.info("Deleting {}: covered by the snapshot at version {}", file, snapshotVersion);
                Files.delete(file);
                deleted = true;
            }
            if (deleted) {
                DurableLogFormat.fsyncDirectory(dir);
            }
            LOG.info("Recovered the durable log in {}: snapshot version {} ({} entries), {} log records replayed from "
                    + "{} segments, recovered version {}", dir, snapshotVersion, snapshotEntries, records,
                    segments.size(), recovered);
            return new Result(segments, active, snapshotVersion, recovered, last);
        } catch (IOException | RuntimeException e) {
            if (active != null) {
                try {
                    active.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    private record Replay(long validEnd, long lastVersion, long records) { }

    /**
     * How much of the last segment (first version {@code first}) was fsynced by a log acknowledging before fsync:
     * the mark's length when it names this segment, only the header when it names an earlier one (this segment
     * was created after the last fsync). Without a mark (a log fsyncing every group) the whole file counts as
     * synced.
     */
    private static long syncedLength(Optional<SyncMark.Mark> mark, long first) {
        if (mark.isEmpty() || mark.get().segmentFirstVersion() > first) {
            return Long.MAX_VALUE;
        }
        return mark.get().segmentFirstVersion() == first ? mark.get().syncedLength() : SEGMENT_HEADER_BYTES;
    }

    /**
     * Replays one segment: records with a version above {@code snapshotVersion} go to {@code sink}. A damaged
     * record is a torn write only when the segment is the last one and no valid record follows it anywhere in the
     * file; then the file is truncated before it. Anything else damaged is a {@link CorruptLogException}.
     */
    private static Replay replay(FileChannel ch, Path file, long first, boolean isLast, long syncedLength,
                                 long previousVersion, long snapshotVersion, RecoverySink sink) throws IOException {
        long size = ch.size();
        InputStream in = new BufferedInputStream(Channels.newInputStream(ch), 1 << 16); // not closed: owns ch
        byte[] header = new byte[SEGMENT_HEADER_BYTES];
        DurableLogFormat.checkSegmentHeader(header, in.readNBytes(header, 0, header.length), file, first);

        long pos = SEGMENT_HEADER_BYTES;
        long last = previousVersion;
        long records = 0;
        byte[] frame = new byte[FRAME_BYTES];
        ByteBuffer frameBuf = ByteBuffer.wrap(frame);
        byte[] payload = new byte[1 << 12];
        while (pos < size) {
            String problem = null;
            int len = 0;
            if (size - pos < FRAME_BYTES || in.readNBytes(frame, 0, FRAME_BYTES) < FRAME_BYTES) {
                problem = "truncated record header";
            } else {
                len = frameBuf.getInt(0);
                if (len < MIN_PAYLOAD_BYTES || len > MAX_PAYLOAD_BYTES) {
                    problem = "impossible record length " + Integer.toUnsignedString(len);
                } else if (len > size - pos - FRAME_BYTES) {
                    problem = "record of " + len + " bytes runs past the end of the file";
                } else {
                    if (payload.length < len) {
                        payload = new byte[Math.max(len, payload.length * 2)];
                    }
                    if (in.readNBytes(payload, 0, len) < len) {
                        problem = "record runs past the end of the file";
                    } else if (DurableLogFormat.crc32c(payload, 0, len) != frameBuf.getInt(4)) {
                        problem = "record checksum mismatch";
                    }
                }
            }
            if (problem != null) {
                if (!isLast) {
                    throw new CorruptLogException(file, pos, problem + " in a segment that is not the last");
                }
                if (pos >= syncedLength) {
                    LOG.warn("Dropping the unsynced end of {}: {} at byte offset {}, past the {} bytes fsynced last; "
                            + "truncating {} bytes. The log acknowledged commits before fsyncing them "
                            + "(nereusEmbeddedFdbSyncIntervalMillis > 0), and an operating system crash or power loss "
                            + "lost part of what it had written since", file, problem, pos, syncedLength, size - pos);
                    ch.truncate(pos);
                    ch.force(true);
                    break;
                }
                long next = DurableLogFormat.findValidRecord(ch, pos + 1, size);
                if (next >= 0) {
                    throw new CorruptLogException(file, pos, problem + ", and a valid record follows at byte offset " + next);
                }
                LOG.warn("Dropping a torn write at the end of {}: {} at byte offset {}; truncating {} bytes (no "
                        + "acknowledged record is lost: a record is acknowledged only after it is wholly on disk)",
                        file, problem, pos, size - pos);
                ch.truncate(pos);
                ch.force(true);
                break;
            }
            LogRecord record = DurableLogFormat.decodePayload(payload, len, file, pos);
            if (record.version() <= last) {
                throw new CorruptLogException(file, pos, "record version " + record.version()
                        + " does not follow version " + last);
            }
            last = record.version();
            if (last > snapshotVersion) {
                sink.apply(record);
            }
            records++;
            pos += FRAME_BYTES + len;
        }
        return new Replay(pos, last, records);
    }
}
