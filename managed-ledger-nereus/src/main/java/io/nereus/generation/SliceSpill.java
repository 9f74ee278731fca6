package io.nereus.generation;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamEntry;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A local file holding the entries a {@link Materializer} pass over one WAL slice took for its streams' objects,
 * when they are more than it holds in memory: each record's entries are appended as they are read ({@link #write}),
 * and read back when the stream's object is written ({@link #read}). So a slice whose batches interleave many
 * streams is read from BookKeeper once, whatever the number of streams, with memory bounded by one object.
 *
 * <p>Layout, per entry: {@code i64 start, i64 end, i32 length, payload}. The file is this process's
 * ({@link SpillFiles#MATERIALIZER_PREFIX}), deleted by {@link #close}; one a crash left behind is deleted by the next
 * materializer starting on the host. Confined to the materializer's thread.
 */
final class SliceSpill implements AutoCloseable {
    private static final int ENTRY_HEADER = 8 + 8 + 4;

    /** Where some entries were written: {@code count} entries in {@code length} bytes from {@code position}. */
    record Extent(long position, long length, int count) {
    }

    private final Path file;
    private final FileChannel channel;
    private long size;

    private SliceSpill(Path file, FileChannel channel) {
        this.file = file;
        this.channel = channel;
    }

    /** A new, empty spill in {@code dir}. */
    static SliceSpill create(Path dir) throws IOException {
        Path file = SpillFiles.create(dir, SpillFiles.MATERIALIZER_PREFIX);
        try {
            return new SliceSpill(file, FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE));
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(file);
            throw e;
        }
    }

    Path file() {
        return file;
    }

    /** Bytes written so far. */
    long size() {
        return size;
    }

    /** Appends {@code entries} (their payloads are read, not released); returns where they are. */
    Extent write(List<StreamEntry> entries) throws IOException {
        long bytes = 0;
        for (StreamEntry e : entries) {
            bytes += ENTRY_HEADER + e.size();
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new IOException("entries of " + bytes + " bytes are more than one spill write takes");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) bytes);
        for (StreamEntry e : entries) {
            buf.putLong(e.range().start()).putLong(e.range().end()).putInt(e.size());
            e.payload().getBytes(e.payload().readerIndex(), buf.array(), buf.position(), e.size());
            buf.position(buf.position() + e.size());
        }
        buf.flip();
        long position = size;
        while (buf.hasRemaining()) {
            channel.write(buf, position + buf.position());
        }
        size += bytes;
        return new Extent(position, bytes, entries.size());
    }

    /** The entries written as {@code extent}, as heap copies (unpooled, needing no release). */
    List<StreamEntry> read(Extent extent) throws IOException {
        if (extent.position() < 0 || extent.length() > Integer.MAX_VALUE || extent.position() + extent.length() > size) {
            throw new IOException("no such extent in spill file " + file + " of " + size + " bytes: " + extent);
        }
        ByteBuffer buf = ByteBuffer.allocate((int) extent.length());
        while (buf.hasRemaining()) {
            if (channel.read(buf, extent.position() + buf.position()) < 0) {
                throw new EOFException("spill file " + file + " ends inside " + extent);
            }
        }
        buf.flip();
        List<StreamEntry> out = new ArrayList<>(extent.count());
        for (int i = 0; i < extent.count(); i++) {
            if (buf.remaining() < ENTRY_HEADER) {
                throw new IOException("spill file " + file + " holds fewer entries than " + extent);
            }
            long start = buf.getLong();
            long end = buf.getLong();
            int length = buf.getInt();
            if (length < 0 || length > buf.remaining()) {
                throw new IOException("spill file " + file + " has an entry of " + length + " bytes in " + extent);
            }
            byte[] payload = new byte[length];
            buf.get(payload);
            out.add(new StreamEntry(new OffsetRange(start, end), payload));
        }
        if (buf.hasRemaining()) {
            throw new IOException("spill file " + file + " holds more bytes than the entries of " + extent);
        }
        return out;
    }

    /** Closes and deletes the file. */
    @Override
    public void close() throws IOException {
        try {
            channel.close();
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
