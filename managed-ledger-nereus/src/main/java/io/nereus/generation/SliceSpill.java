package io.nereus.generation;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamEntry;
import io.netty.buffer.Unpooled;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A local file holding the entries a {@link Materializer} pass over one WAL slice took for its streams' objects,
 * when they are more than it holds in memory: each record's entries are appended as they are read ({@link #write}),
 * and read back when the stream's object is written ({@link #read}). So a slice whose batches interleave many
 * streams is read from BookKeeper once, whatever the number of streams, with memory bounded by one object.
 *
 * <p>Layout, per entry: {@code i64 start, i64 end, i32 length, payload}. The file is this process's
 * ({@link SpillFiles#MATERIALIZER_PREFIX}), deleted by {@link #close}; one a crash left behind is deleted by the next
 * materializer starting on the host. {@link #clear} makes it empty for another slice without deleting it: the next
 * entries overwrite the old from the file's start, in pages the page cache still holds. Entries go through reused
 * direct buffers each way, so spilling allocates no heap arrays per entry (and the file channel copies nothing to a
 * temporary buffer). Writes collect in a {@value #WRITE_BEHIND}-byte buffer that goes to the file when full or when
 * a read wants bytes still in it: a record's entries are a section of one WAL batch, a kilobyte or two at a
 * thousand streams, and writing each with a call of its own made the kernel zero the rest of every page it started
 * (a profile of a copy at 1,000 streams: a sixth of the materializer thread's samples). Confined to the
 * materializer's thread.
 */
final class SliceSpill implements AutoCloseable {
    private static final int ENTRY_HEADER = 8 + 8 + 4;
    /** Bytes of entries collected before they are written to the file together. */
    static final int WRITE_BEHIND = 1 << 20;

    /** Where some entries were written: {@code count} entries in {@code length} bytes from {@code position}. */
    record Extent(long position, long length, int count) {
    }

    /**
     * Extents in the order added, held as numbers rather than an object each: a stream spilled from a large slice has
     * one per section it wrote there, thousands of them, kept until its object is written.
     */
    static final class Extents {
        private long[] positions = new long[8];
        private long[] lengths = new long[8];
        private int[] counts = new int[8];
        private int size;

        void add(Extent x) {
            if (size == positions.length) {
                int grown = Math.multiplyExact(2, size);
                positions = Arrays.copyOf(positions, grown);
                lengths = Arrays.copyOf(lengths, grown);
                counts = Arrays.copyOf(counts, grown);
            }
            positions[size] = x.position();
            lengths[size] = x.length();
            counts[size] = x.count();
            size++;
        }

        void addAll(Extents other) {
            for (int i = 0; i < other.size; i++) {
                add(other.get(i));
            }
        }

        Extent get(int i) {
            Objects.checkIndex(i, size);
            return new Extent(positions[i], lengths[i], counts[i]);
        }

        int size() {
            return size;
        }

        void clear() {
            size = 0;
        }
    }

    private final Path file;
    private final FileChannel channel;
    /** Bytes written so far: the file's first {@link #flushed}, then those in {@link #pending}. */
    private long size;
    private long flushed;
    /** Entries written and not yet in the file; allocated by the first write. */
    private ByteBuffer pending;
    /** What a write assembles and a read fills; grown to the largest extent so far, kept until the spill closes. */
    private ByteBuffer scratch = ByteBuffer.allocateDirect(64 * 1024);

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

    /**
     * Forgets every entry: the next write starts at the file's beginning, over the old bytes, which no read reaches
     * any more (reads stop at {@link #size}). The file keeps its length until it is written past it or deleted.
     */
    void clear() {
        size = 0;
        flushed = 0;
        if (pending != null) {
            pending.clear();
        }
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
        if (pending == null) {
            pending = ByteBuffer.allocateDirect(WRITE_BEHIND);
        }
        if (bytes > pending.remaining()) {
            flush();
        }
        long position = size;
        if (bytes > pending.remaining()) {
            // more than the write-behind buffer holds: assembled apart and written at once (nothing is pending)
            ByteBuffer buf = scratch((int) bytes);
            put(entries, buf);
            buf.flip();
            while (buf.hasRemaining()) {
                channel.write(buf, position + buf.position());
            }
            flushed += bytes;
        } else {
            put(entries, pending);
        }
        size += bytes;
        return new Extent(position, bytes, entries.size());
    }

    private static void put(List<StreamEntry> entries, ByteBuffer buf) {
        for (StreamEntry e : entries) {
            buf.putLong(e.range().start()).putLong(e.range().end()).putInt(e.size());
            e.payload().getBytes(e.payload().readerIndex(), buf.slice(buf.position(), e.size()));
            buf.position(buf.position() + e.size());
        }
    }

    /** Writes the pending entries to the file. */
    private void flush() throws IOException {
        if (pending == null || pending.position() == 0) {
            return;
        }
        pending.flip();
        while (pending.hasRemaining()) {
            channel.write(pending, flushed + pending.position());
        }
        flushed += pending.limit();
        pending.clear();
    }

    /**
     * Hands {@code each} the entries written as {@code extent}, in order. Their payloads are views of this spill's
     * buffer (unpooled, needing no release), valid only during the call: {@code each} copies what it keeps. Fails
     * before handing out any entry when the extent is not one the file holds whole.
     */
    void read(Extent extent, Consumer<StreamEntry> each) throws IOException {
        if (extent.position() < 0 || extent.length() > Integer.MAX_VALUE || extent.position() + extent.length() > size) {
            throw new IOException("no such extent in spill file " + file + " of " + size + " bytes: " + extent);
        }
        if (extent.position() + extent.length() > flushed) {
            flush();
        }
        ByteBuffer buf = scratch((int) extent.length());
        while (buf.hasRemaining()) {
            if (channel.read(buf, extent.position() + buf.position()) < 0) {
                throw new EOFException("spill file " + file + " ends inside " + extent);
            }
        }
        buf.flip();
        // checked whole before any entry is handed out
        ByteBuffer check = buf.duplicate();
        for (int i = 0; i < extent.count(); i++) {
            if (check.remaining() < ENTRY_HEADER) {
                throw new IOException("spill file " + file + " holds fewer entries than " + extent);
            }
            check.position(check.position() + 16);
            int length = check.getInt();
            if (length < 0 || length > check.remaining()) {
                throw new IOException("spill file " + file + " has an entry of " + length + " bytes in " + extent);
            }
            check.position(check.position() + length);
        }
        if (check.hasRemaining()) {
            throw new IOException("spill file " + file + " holds more bytes than the entries of " + extent);
        }
        for (int i = 0; i < extent.count(); i++) {
            long start = buf.getLong();
            long end = buf.getLong();
            int length = buf.getInt();
            each.accept(new StreamEntry(new OffsetRange(start, end),
                    Unpooled.wrappedBuffer(buf.slice(buf.position(), length))));
            buf.position(buf.position() + length);
        }
    }

    /** The scratch buffer, cleared and limited to {@code bytes}; a larger one when it holds fewer. */
    private ByteBuffer scratch(int bytes) {
        if (scratch.capacity() < bytes) {
            scratch = ByteBuffer.allocateDirect(Math.max(bytes, (int) Math.min(Integer.MAX_VALUE,
                    2L * scratch.capacity())));
        }
        return scratch.clear().limit(bytes);
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
