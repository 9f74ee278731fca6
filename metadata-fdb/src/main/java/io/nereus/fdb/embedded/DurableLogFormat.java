package io.nereus.fdb.embedded;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;

/** The on-disk format of {@link DurableLog}; its Javadoc describes the layout. All integers are big-endian. */
final class DurableLogFormat {
    /**
     * Directories are created readable, writable and searchable by their owner only (on file systems with POSIX
     * permissions): they hold the data and metadata of every topic.
     */
    private static final FileAttribute<?>[] OWNER_ONLY =
            FileSystems.getDefault().supportedFileAttributeViews().contains("posix")
                    ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rwx------"))}
                    : new FileAttribute<?>[0];

    /** "NRWL": the first four bytes of a log segment. */
    static final int SEGMENT_MAGIC = 0x4E52574C;
    /** "NRSN": the first four bytes of a snapshot. */
    static final int SNAPSHOT_MAGIC = 0x4E52534E;
    /** The only format version this build reads and writes, for segments and snapshots alike. */
    static final int FORMAT_VERSION = 1;

    /** magic u32, format version u32, first version u64, CRC32C of the preceding 16 bytes u32. */
    static final int SEGMENT_HEADER_BYTES = 20;
    /** magic u32, format version u32, snapshot version u64. */
    static final int SNAPSHOT_HEADER_BYTES = 16;
    /** entry count u64, CRC32C u32. */
    static final int SNAPSHOT_TRAILER_BYTES = 12;
    /** payload length u32, CRC32C of the payload u32. */
    static final int FRAME_BYTES = 8;
    /** version u64 and effect count u32 of a record with no effects. */
    static final int MIN_PAYLOAD_BYTES = 12;
    /** The largest payload this build writes or accepts. */
    static final int MAX_PAYLOAD_BYTES = 1 << 30;
    /** kind u8, key length u32, value length u32. */
    static final int EFFECT_OVERHEAD_BYTES = 9;

    static final String TMP_SUFFIX = ".tmp";
    static final String LOCK_FILE = "LOCK";
    private static final Pattern SEGMENT_NAME = Pattern.compile("wal-(\\d{20})\\.log");
    private static final Pattern SNAPSHOT_NAME = Pattern.compile("snapshot-(\\d{20})\\.snap");

    private DurableLogFormat() {
    }

    static String segmentName(long firstVersion) {
        return String.format("wal-%020d.log", firstVersion);
    }

    static String snapshotName(long version) {
        return String.format("snapshot-%020d.snap", version);
    }

    /** The first version encoded in a segment file name, or -1 if {@code name} is not a segment name. */
    static long parseSegmentName(String name) {
        return parseVersion(SEGMENT_NAME.matcher(name));
    }

    /** The version encoded in a snapshot file name, or -1 if {@code name} is not a snapshot name. */
    static long parseSnapshotName(String name) {
        return parseVersion(SNAPSHOT_NAME.matcher(name));
    }

    /** Whether {@code name} is a temporary file this log may have left behind when it crashed. */
    static boolean isTempName(String name) {
        return name.endsWith(TMP_SUFFIX) && (name.startsWith("wal-") || name.startsWith("snapshot-"));
    }

    private static long parseVersion(Matcher m) {
        if (!m.matches()) {
            return -1;
        }
        try {
            return Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            return -1; // 20 digits can exceed Long.MAX_VALUE
        }
    }

    // ----------------------------------------------------------------------------------------------- records

    /** The payload size of {@code record}; may exceed {@link #MAX_PAYLOAD_BYTES} (callers check). */
    static long payloadBytes(LogRecord record) {
        long n = MIN_PAYLOAD_BYTES;
        for (Effect e : record.effects()) {
            n += EFFECT_OVERHEAD_BYTES + (long) e.key().length + e.value().length;
        }
        return n;
    }

    /** Appends the framed record (length, CRC32C, payload) to {@code out}, which must have room for it. */
    static void encodeRecord(LogRecord record, int payloadBytes, ByteBuffer out, CRC32C crc) {
        int frameStart = out.position();
        out.putInt(payloadBytes).putInt(0);
        int payloadStart = out.position();
        out.putLong(record.version()).putInt(record.effects().size());
        for (Effect e : record.effects()) {
            out.put(e.kind()).putInt(e.key().length).put(e.key()).putInt(e.value().length).put(e.value());
        }
        int payloadEnd = out.position();
        if (payloadEnd - payloadStart != payloadBytes) {
            throw new IllegalStateException("record size changed while encoding (were its arrays mutated?)");
        }
        crc.reset();
        crc.update(out.duplicate().position(payloadStart).limit(payloadEnd));
        out.putInt(frameStart + 4, (int) crc.getValue());
    }

    static int crc32c(byte[] bytes, int off, int len) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, off, len);
        return (int) crc.getValue();
    }

    /**
     * Decodes a payload whose checksum matched. A malformed one is corruption, never a torn write: the checksum
     * proves these are the bytes that were written.
     */
    static LogRecord decodePayload(byte[] payload, int len, Path file, long recordOffset) throws CorruptLogException {
        ByteBuffer in = ByteBuffer.wrap(payload, 0, len);
        long version = in.getLong();
        int count = in.getInt();
        if (version <= 0) {
            throw new CorruptLogException(file, recordOffset, "record has impossible version " + version);
        }
        if (count < 0 || count > (len - MIN_PAYLOAD_BYTES) / EFFECT_OVERHEAD_BYTES) {
            throw new CorruptLogException(file, recordOffset, "record has impossible effect count " + Integer.toUnsignedString(count));
        }
        List<Effect> effects = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            if (in.remaining() < EFFECT_OVERHEAD_BYTES) {
                throw new CorruptLogException(file, recordOffset, "record effect " + i + " runs past the payload");
            }
            byte kind = in.get();
            byte[] key = readArray(in, file, recordOffset, i);
            byte[] value = readArray(in, file, recordOffset, i);
            if (kind != Effect.SET && kind != Effect.CLEAR_RANGE) {
                throw new CorruptLogException(file, recordOffset, "record effect " + i + " has unknown kind " + kind);
            }
            effects.add(new Effect(kind, key, value));
        }
        if (in.hasRemaining()) {
            throw new CorruptLogException(file, recordOffset, "record has " + in.remaining() + " unused payload bytes");
        }
        return new LogRecord(version, effects);
    }

    private static byte[] readArray(ByteBuffer in, Path file, long recordOffset, int effect) throws CorruptLogException {
        int n = in.remaining() >= 4 ? in.getInt() : -1;
        if (n < 0 || n > in.remaining()) {
            throw new CorruptLogException(file, recordOffset, "record effect " + effect + " has an impossible length");
        }
        byte[] bytes = new byte[n];
        in.get(bytes);
        return bytes;
    }

    /**
     * Looks for a well-formed record (plausible length that fits before {@code size}, plausible effect count and
     * first kind, matching checksum) starting anywhere in {@code [from, size)}. Returns its offset, or -1.
     * Used to tell a torn tail (nothing valid after the damage) from damage in the middle of the log.
     */
    static long findValidRecord(FileChannel ch, long from, long size) throws IOException {
        final int probe = FRAME_BYTES + MIN_PAYLOAD_BYTES + 1;
        ByteBuffer win = ByteBuffer.allocate(1 << 20);
        long winStart = from;
        int winLen = 0;
        byte[] payload = new byte[0];
        for (long q = from; q + FRAME_BYTES + MIN_PAYLOAD_BYTES <= size; q++) {
            if (q + probe > winStart + winLen && winStart + winLen < size) {
                winStart = q;
                win.clear();
                while (win.hasRemaining() && winStart + win.position() < size) {
                    if (ch.read(win, winStart + win.position()) < 0) {
                        break;
                    }
                }
                winLen = win.position();
            }
            int at = (int) (q - winStart);
            if (at + FRAME_BYTES + MIN_PAYLOAD_BYTES > winLen) {
                return -1; // the file is shorter than it said
            }
            int len = win.getInt(at);
            if (len < MIN_PAYLOAD_BYTES || len > MAX_PAYLOAD_BYTES || len > size - q - FRAME_BYTES) {
                continue;
            }
            int count = win.getInt(at + FRAME_BYTES + 8);
            if (count < 0 || count > (len - MIN_PAYLOAD_BYTES) / EFFECT_OVERHEAD_BYTES) {
                continue;
            }
            if (count == 0) {
                if (len != MIN_PAYLOAD_BYTES) {
                    continue;
                }
            } else if (at + probe <= winLen) {
                byte kind = win.get(at + probe - 1);
                if (kind != Effect.SET && kind != Effect.CLEAR_RANGE) {
                    continue;
                }
            }
            if (payload.length < len) {
                payload = new byte[len];
            }
            ByteBuffer dst = ByteBuffer.wrap(payload, 0, len);
            while (dst.hasRemaining()) {
                if (ch.read(dst, q + FRAME_BYTES + dst.position()) < 0) {
                    break;
                }
            }
            if (!dst.hasRemaining() && crc32c(payload, 0, len) == win.getInt(at + 4)) {
                return q;
            }
        }
        return -1;
    }

    // ----------------------------------------------------------------------------------------------- segments

    static ByteBuffer segmentHeader(long firstVersion) {
        ByteBuffer b = ByteBuffer.allocate(SEGMENT_HEADER_BYTES);
        b.putInt(SEGMENT_MAGIC).putInt(FORMAT_VERSION).putLong(firstVersion);
        b.putInt(crc32c(b.array(), 0, 16));
        return b.flip();
    }

    /** Validates a segment header read from {@code file}, whose name says {@code firstVersion}. */
    static void checkSegmentHeader(byte[] h, int n, Path file, long firstVersion) throws CorruptLogException {
        if (n < SEGMENT_HEADER_BYTES) {
            throw new CorruptLogException(file, n, "segment header truncated (" + n + " of " + SEGMENT_HEADER_BYTES + " bytes)");
        }
        ByteBuffer b = ByteBuffer.wrap(h);
        if (b.getInt(0) != SEGMENT_MAGIC) {
            throw new CorruptLogException(file, 0, "not a log segment (bad magic)");
        }
        int format = b.getInt(4);
        if (format != FORMAT_VERSION) {
            throw new CorruptLogException(file, 4, "unsupported log format version " + Integer.toUnsignedString(format)
                    + " (this build reads version " + FORMAT_VERSION + ")");
        }
        if (b.getInt(16) != crc32c(h, 0, 16)) {
            throw new CorruptLogException(file, 16, "segment header checksum mismatch");
        }
        if (b.getLong(8) != firstVersion) {
            throw new CorruptLogException(file, 8, "segment header says first version " + b.getLong(8)
                    + " but the file name says " + firstVersion);
        }
    }

    // ----------------------------------------------------------------------------------------------- snapshots

    /**
     * Writes {@code snapshot} to {@code file} (replacing it) and fsyncs it. Returns the number of entries.
     *
     * @param aborted polled while writing; when it turns true the write stops with an {@link IOException}
     */
    static long writeSnapshot(Path file, long version, StateSnapshot snapshot, BooleanSupplier aborted) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            SnapshotWriter w = new SnapshotWriter(ch);
            w.putInt(SNAPSHOT_MAGIC);
            w.putInt(FORMAT_VERSION);
            w.putLong(version);
            long count = 0;
            byte[] previous = null;
            for (Iterator<Map.Entry<byte[], byte[]>> it = snapshot.entries(); it.hasNext(); ) {
                Map.Entry<byte[], byte[]> e = it.next();
                byte[] key = e.getKey();
                byte[] value = e.getValue();
                if (previous != null && Arrays.compareUnsigned(previous, key) >= 0) {
                    throw new IllegalStateException("snapshot entries are not in strictly ascending key order");
                }
                w.putInt(key.length);
                w.put(key);
                w.putInt(value.length);
                w.put(value);
                previous = key;
                if ((++count & 1023) == 0 && aborted.getAsBoolean()) {
                    throw new IOException("snapshot write aborted: the log is closing");
                }
            }
            w.putLong(count);
            int crc = w.flush();
            ByteBuffer tail = ByteBuffer.allocate(4).putInt(crc).flip();
            while (tail.hasRemaining()) {
                ch.write(tail);
            }
            ch.force(true);
            return count;
        }
    }

    /** Buffers writes to a channel and keeps a CRC32C of everything written through it. */
    private static final class SnapshotWriter {
        private final FileChannel ch;
        private final ByteBuffer buf = ByteBuffer.allocate(1 << 18);
        private final CRC32C crc = new CRC32C();

        SnapshotWriter(FileChannel ch) {
            this.ch = ch;
        }

        void putInt(int v) throws IOException {
            room(4);
            buf.putInt(v);
        }

        void putLong(long v) throws IOException {
            room(8);
            buf.putLong(v);
        }

        void put(byte[] bytes) throws IOException {
            if (bytes.length > buf.capacity()) {
                flush();
                crc.update(bytes);
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            } else {
                room(bytes.length);
                buf.put(bytes);
            }
        }

        private void room(int n) throws IOException {
            if (buf.remaining() < n) {
                flush();
            }
        }

        /** Writes out the buffer; returns the CRC32C of everything written so far. */
        int flush() throws IOException {
            buf.flip();
            crc.update(buf.duplicate());
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            buf.clear();
            return (int) crc.getValue();
        }
    }

    /**
     * Streams the entries of a snapshot file into {@code sink} and then verifies its trailer. On damage (the
     * checksum is only known at the end, so some entries may already have been delivered) it throws
     * {@link CorruptLogException}.
     */
    static long readSnapshot(Path file, long version, RecoverySink sink) throws IOException {
        long size = Files.size(file);
        if (size < SNAPSHOT_HEADER_BYTES + SNAPSHOT_TRAILER_BYTES) {
            throw new CorruptLogException(file, size, "snapshot truncated (" + size + " bytes)");
        }
        CRC32C crc = new CRC32C();
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
             DataInputStream in = new DataInputStream(new CheckedInputStream(raw, crc))) {
            if (in.readInt() != SNAPSHOT_MAGIC) {
                throw new CorruptLogException(file, 0, "not a snapshot (bad magic)");
            }
            int format = in.readInt();
            if (format != FORMAT_VERSION) {
                throw new CorruptLogException(file, 4, "unsupported snapshot format version "
                        + Integer.toUnsignedString(format) + " (this build reads version " + FORMAT_VERSION + ")");
            }
            long headerVersion = in.readLong();
            if (headerVersion != version) {
                throw new CorruptLogException(file, 8, "snapshot header says version " + headerVersion
                        + " but the file name says " + version);
            }
            long end = size - SNAPSHOT_TRAILER_BYTES;
            long pos = SNAPSHOT_HEADER_BYTES;
            long count = 0;
            byte[] previous = null;
            while (pos < end) {
                long entry = pos;
                byte[] key = readSized(in, end - pos, file, entry, "key");
                pos += 4 + key.length;
                byte[] value = readSized(in, end - pos, file, entry, "value");
                pos += 4 + value.length;
                if (previous != null && Arrays.compareUnsigned(previous, key) >= 0) {
                    throw new CorruptLogException(file, entry, "snapshot keys are not in ascending order");
                }
                sink.loadSnapshotEntry(key, value);
                previous = key;
                count++;
            }
            long storedCount = in.readLong();
            int actualCrc = (int) crc.getValue();
            int storedCrc = new DataInputStream(raw).readInt();
            if (storedCrc != actualCrc) {
                throw new CorruptLogException(file, end + 8, "snapshot checksum mismatch");
            }
            if (storedCount != count) {
                throw new CorruptLogException(file, end, "snapshot trailer says " + storedCount + " entries but holds " + count);
            }
            return count;
        }
    }

    private static byte[] readSized(DataInputStream in, long available, Path file, long entry, String what) throws IOException {
        if (available < 4) {
            throw new CorruptLogException(file, entry, "snapshot entry " + what + " length runs into the trailer");
        }
        int n = in.readInt();
        if (n < 0 || n > available - 4) {
            throw new CorruptLogException(file, entry, "snapshot entry has an impossible " + what + " length "
                    + Integer.toUnsignedString(n));
        }
        byte[] bytes = new byte[n];
        in.readFully(bytes);
        return bytes;
    }

    // ----------------------------------------------------------------------------------------------- files

    /** Creates {@code dir} and any missing parents, fsyncing the parent of each directory it creates. */
    static void createDirectoriesDurably(Path dir) throws IOException {
        List<Path> missing = new ArrayList<>();
        for (Path p = dir.toAbsolutePath(); p != null && !Files.isDirectory(p); p = p.getParent()) {
            missing.add(p);
        }
        Files.createDirectories(dir, OWNER_ONLY);
        for (Path p : missing) {
            if (p.getParent() != null) {
                fsyncDirectory(p.getParent());
            }
        }
    }

    /** Makes creations, renames and deletions in {@code dir} durable. */
    static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /**
     * Creates the segment {@code wal-<firstVersion>.log} in {@code dir} atomically: header written and fsynced in a
     * temporary file, renamed into place, directory fsynced. Returns a channel positioned after the header, open
     * for reading and writing.
     */
    static FileChannel createSegment(Path dir, long firstVersion) throws IOException {
        Path path = dir.resolve(segmentName(firstVersion));
        Path tmp = dir.resolve(segmentName(firstVersion) + TMP_SUFFIX);
        FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            ByteBuffer header = segmentHeader(firstVersion);
            while (header.hasRemaining()) {
                ch.write(header);
            }
            ch.force(true);
            Files.move(tmp, path, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            fsyncDirectory(dir);
            ch.position(SEGMENT_HEADER_BYTES);
            return ch;
        } catch (IOException | RuntimeException e) {
            try {
                ch.close();
                Files.deleteIfExists(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }
}
