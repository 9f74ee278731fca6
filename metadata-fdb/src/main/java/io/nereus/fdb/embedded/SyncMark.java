package io.nereus.fdb.embedded;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * The {@code SYNCED} file of a {@link DurableLog} that acknowledges records before fsyncing them (a sync interval
 * above zero): how many bytes of which segment were on disk at the last fsync. Recovery may drop damage past that
 * point (an OS crash lost part of what was written but not yet synced) even when well-formed records follow it;
 * damage before it is corruption, as without the file.
 *
 * <pre>
 * SYNCED = magic u32 "NRSY" (0x4E525359) | segment first version u64 | synced length u64
 *        | CRC32C of the preceding 20 bytes u32                                   (24 bytes)
 * </pre>
 * Written as {@code SYNCED.tmp}, fsynced and renamed into place after each fsync of the active segment, so the file
 * on disk never claims more than was synced; without a directory fsync a crash may leave an older mark, which only
 * claims less.
 */
final class SyncMark {
    static final String FILE = "SYNCED";
    static final String TMP = FILE + DurableLogFormat.TMP_SUFFIX;
    private static final int MAGIC = 0x4E525359;
    private static final int BYTES = 24;

    /** The segment (by first version) and its length that were on disk. */
    record Mark(long segmentFirstVersion, long syncedLength) {
    }

    private SyncMark() {
    }

    /** The mark in {@code dir}; empty when there is none or it is damaged (then nothing is known to be synced). */
    static Optional<Mark> read(Path dir) throws IOException {
        byte[] b;
        try {
            b = Files.readAllBytes(dir.resolve(FILE));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
        ByteBuffer buf = ByteBuffer.wrap(b);
        if (b.length != BYTES || buf.getInt(0) != MAGIC || DurableLogFormat.crc32c(b, 0, 20) != buf.getInt(20)) {
            return Optional.empty();
        }
        return Optional.of(new Mark(buf.getLong(4), buf.getLong(12)));
    }

    static void write(Path dir, long segmentFirstVersion, long syncedLength) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(BYTES);
        buf.putInt(MAGIC).putLong(segmentFirstVersion).putLong(syncedLength);
        buf.putInt(DurableLogFormat.crc32c(buf.array(), 0, 20));
        buf.flip();
        Path tmp = dir.resolve(TMP);
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        Files.move(tmp, dir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    static void delete(Path dir) throws IOException {
        Files.deleteIfExists(dir.resolve(FILE));
        Files.deleteIfExists(dir.resolve(TMP));
    }
}
