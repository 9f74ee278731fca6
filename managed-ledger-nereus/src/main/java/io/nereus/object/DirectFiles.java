package io.nereus.object;

import com.sun.nio.file.ExtendedOpenOption;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Object files written and read with direct I/O ({@code O_DIRECT}), past the operating system's page cache.
 *
 * <p>An object is written once, read back once to verify it, then read rarely, through the {@link BlockCache}.
 * Through the page cache each of its bytes is first copied into a page the kernel must find (about 4 ns a byte on
 * the virtual machine of docs/benchmarks.md, which seems to hand freed memory back to its host), and the file then
 * sits in memory the bookie's journal and entry logs want. Direct I/O moves the bytes between the device and this
 * process's memory without that copy: writes go through an aligned staging buffer of {@value #STAGING_BYTES} bytes
 * per I/O thread (the object's own buffers are not aligned), the last block padded and the file then truncated to
 * its length; reads fetch the aligned blocks around the range into the staging buffer and copy the range out, or,
 * for blocks read into buffers of their own ({@link #readBuffer}), straight into an aligned region of that buffer.
 *
 * <p>Whether the directory's filesystem allows it is found by {@link #probe} (some filesystems refuse
 * {@code O_DIRECT}); where it does not, the store uses the page cache as before.
 */
public final class DirectFiles {
    private static final Logger LOG = LoggerFactory.getLogger(DirectFiles.class);
    /** Bytes a direct write or read moves at a time, the size of each I/O thread's staging buffer. */
    static final int STAGING_BYTES = 1024 * 1024;
    private static final OpenOption[] WRITE_NEW = {StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
            ExtendedOpenOption.DIRECT};
    private static final OpenOption[] READ = {StandardOpenOption.READ, ExtendedOpenOption.DIRECT};
    private static final OpenOption[] READ_WRITE = {StandardOpenOption.READ, StandardOpenOption.WRITE,
            ExtendedOpenOption.DIRECT};

    /** Offsets and lengths of direct transfers are multiples of this: the filesystem's block size. */
    private final int alignment;
    /** Each I/O thread's aligned buffer; the threads are the store's few, and a buffer is freed with its thread. */
    private final ThreadLocal<ByteBuffer> staging;

    private DirectFiles(int alignment) {
        this.alignment = alignment;
        this.staging = ThreadLocal.withInitial(
                () -> ByteBuffer.allocateDirect(STAGING_BYTES + alignment).alignedSlice(alignment));
    }

    /**
     * Direct I/O in {@code dir} if its filesystem allows it: writes and reads back one block of a probe file named
     * {@code probeName} in {@code dir} (removed after). Empty, with the reason logged, when it does not.
     */
    public static Optional<DirectFiles> probe(Path dir, String probeName) {
        Path probe = dir.resolve(probeName);
        try {
            int alignment = Math.toIntExact(Files.getFileStore(dir).getBlockSize());
            if (alignment <= 0 || Integer.bitCount(alignment) != 1 || alignment > STAGING_BYTES) {
                LOG.info("No direct I/O: the filesystem's block size {} does not suit it"
                        + " dir={}", alignment, dir);
                return Optional.empty();
            }
            ByteBuffer block = ByteBuffer.allocateDirect(2 * alignment).alignedSlice(alignment);
            block.limit(alignment);
            try (FileChannel ch = FileChannel.open(probe, WRITE_NEW)) {
                while (block.hasRemaining()) {
                    ch.write(block, block.position());
                }
            }
            block.clear().limit(alignment);
            try (FileChannel ch = FileChannel.open(probe, READ)) {
                while (block.hasRemaining() && ch.read(block, block.position()) >= 0) {
                    // until the block is read or the file ends
                }
            }
            if (block.hasRemaining()) {
                throw new IOException("a direct read returned " + block.position() + " of " + alignment + " bytes");
            }
            return Optional.of(new DirectFiles(alignment));
        } catch (IOException | UnsupportedOperationException | ArithmeticException e) {
            LOG.info("No direct I/O: the filesystem refuses it dir={} reason={}", dir,
                    e.toString());
            return Optional.empty();
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (IOException e) {
                LOG.warn("Direct I/O probe file not removed (removed at the next open) file={}", probe, e);
            }
        }
    }

    /** Offsets, lengths and buffer addresses of direct transfers are multiples of this. */
    public int alignment() {
        return alignment;
    }

    /**
     * Opens the existing {@code file} for direct reads and writes, which the caller makes at offsets and lengths that
     * are multiples of {@link #alignment()}, from buffers aligned to it.
     */
    public FileChannel openForReadingAndWriting(Path file) throws IOException {
        return FileChannel.open(file, READ_WRITE);
    }

    /**
     * Creates {@code file} (it must not exist) holding {@code content}, fsynced; returns the content's CRC32C.
     */
    long writeNew(Path file, ObjectContent content) throws IOException {
        ByteBuffer buffer = staging.get().clear();
        try (FileChannel ch = FileChannel.open(file, WRITE_NEW)) {
            StagedWrites out = new StagedWrites(ch, buffer);
            long crc = content.writeTo(out);
            out.finish();
            ch.truncate(content.length());
            ch.force(true);
            return crc;
        }
    }

    /**
     * Reads {@code length} bytes from {@code offset} of the file {@code ch} has open for direct reads
     * ({@link #openForReading}); the caller has checked that the file holds them. Fails with {@link EOFException}
     * when the file turns out shorter.
     */
    byte[] read(FileChannel ch, long offset, int length) throws IOException {
        byte[] out = new byte[length];
        read(ch, offset, length, Unpooled.wrappedBuffer(out).clear());
        return out;
    }

    /**
     * Reads {@code length} bytes from {@code offset} of the file {@code ch} has open for direct reads into
     * {@code out} (written at its writer index), through this thread's staging buffer; fails with
     * {@link EOFException} when the file turns out shorter.
     */
    public void read(FileChannel ch, long offset, int length, ByteBuf out) throws IOException {
        ByteBuffer buffer = staging.get();
        long mask = alignment - 1L;
        long position = offset & ~mask;
        long alignedEnd = (offset + length + mask) & ~mask;
        int copied = 0;
        while (copied < length) {
            int chunk = (int) Math.min(STAGING_BYTES, alignedEnd - position);
            buffer.clear().limit(chunk);
            while (buffer.hasRemaining()) {
                int n = ch.read(buffer, position + buffer.position());
                if (n <= 0 || (buffer.position() & mask) != 0) {
                    break; // the file's end: direct reads fall short of a block only there
                }
            }
            int skip = (int) (offset + copied - position);
            int available = buffer.position() - skip;
            if (available <= 0) {
                throw new EOFException("the file ends at " + (position + buffer.position()) + ", before byte "
                        + (offset + copied));
            }
            int take = Math.min(available, length - copied);
            out.writeBytes(buffer.duplicate().position(skip).limit(skip + take));
            copied += take;
            position += chunk;
        }
    }

    /**
     * Reads {@code length} bytes from {@code offset} of the file {@code ch} has open for direct reads into a new
     * direct buffer of {@code alloc}, with no copy: the aligned blocks around the range are read into an aligned
     * region of the buffer, whose readable bytes are then the range (the buffer holds up to two blocks more around
     * them, and one block of room for the alignment). The caller owns the buffer's one reference. Falls back to
     * {@link #read(FileChannel, long, int, ByteBuf)} through the staging buffer when the buffer's address is not
     * known (no {@code Unsafe}). Fails with {@link EOFException} when the file turns out shorter.
     */
    public ByteBuf readBuffer(FileChannel ch, long offset, int length, ByteBufAllocator alloc) throws IOException {
        long mask = alignment - 1L;
        long position = offset & ~mask;
        int span = Math.toIntExact(((offset + length + mask) & ~mask) - position);
        ByteBuf out = alloc.directBuffer(span + alignment);
        try {
            if (!out.hasMemoryAddress()) {
                read(ch, offset, length, out);
                return out;
            }
            int pad = (int) (-out.memoryAddress() & mask);
            ByteBuffer region = out.nioBuffer(pad, span);
            while (region.hasRemaining()) {
                int n = ch.read(region, position + region.position());
                if (n <= 0 || (region.position() & mask) != 0) {
                    break; // the file's end: direct reads fall short of a block only there
                }
            }
            int skip = (int) (offset - position);
            if (region.position() - skip < length) {
                throw new EOFException("the file ends at " + (position + region.position()) + ", before byte "
                        + (offset + length));
            }
            out.setIndex(pad + skip, pad + skip + length);
            return out;
        } catch (IOException | RuntimeException e) {
            out.release();
            throw e;
        }
    }

    /** Opens {@code file} for direct reads. */
    FileChannel openForReading(Path file) throws IOException {
        return FileChannel.open(file, READ);
    }

    /**
     * Takes bytes in any amounts and writes them to the file in aligned pieces of the staging buffer's size; the
     * rest, zero-padded to a whole block, at {@link #finish()}.
     */
    private final class StagedWrites implements WritableByteChannel {
        private final FileChannel ch;
        private final ByteBuffer buffer;
        private long position;

        StagedWrites(FileChannel ch, ByteBuffer buffer) {
            this.ch = ch;
            this.buffer = buffer;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            int taken = 0;
            while (src.hasRemaining()) {
                int n = Math.min(src.remaining(), buffer.remaining());
                buffer.put(buffer.position(), src, src.position(), n);
                buffer.position(buffer.position() + n);
                src.position(src.position() + n);
                taken += n;
                if (!buffer.hasRemaining()) {
                    writeStaged();
                }
            }
            return taken;
        }

        void finish() throws IOException {
            int used = buffer.position();
            if (used == 0) {
                return;
            }
            int padded = (used + alignment - 1) & -alignment;
            while (buffer.position() < padded) {
                buffer.put((byte) 0);
            }
            writeStaged();
        }

        private void writeStaged() throws IOException {
            buffer.flip();
            while (buffer.hasRemaining()) {
                position += ch.write(buffer, position);
            }
            buffer.clear();
        }

        @Override
        public boolean isOpen() {
            return ch.isOpen();
        }

        @Override
        public void close() {
        }
    }
}
