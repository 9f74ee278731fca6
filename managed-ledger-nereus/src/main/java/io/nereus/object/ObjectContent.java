package io.nereus.object;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The bytes of an object to be put: either one or more buffers (byte arrays or {@link ByteBuffer}s, heap or direct),
 * concatenated in order, held in memory (a writer assembles an object of bounded size, such as a header, blocks of
 * entries and a footer, without copying them into one array), or the first {@code length} bytes of a local file (an
 * object written piece by piece without holding it, such as a compacted generation, {@link StreamObjectSpill}).
 * Neither the buffers nor the file are copied: do not change them, nor free a direct buffer's memory, until the put
 * has completed. A store may read the content more than once (a retried request or part); a file's content is read
 * in bounded pieces, never whole into memory.
 */
public final class ObjectContent {
    /** Bytes one read of a file's content copies at a time. */
    static final int FILE_COPY_BYTES = 64 * 1024;

    /** Read-only views of the content's buffers, each from its position to its limit. */
    private final List<ByteBuffer> chunks;
    private final Path file;
    private final long length;

    private ObjectContent(List<ByteBuffer> chunks) {
        long total = 0;
        for (ByteBuffer c : chunks) {
            total = Math.addExact(total, c.remaining());
        }
        this.chunks = chunks;
        this.file = null;
        this.length = total;
    }

    private ObjectContent(Path file, long length) {
        this.chunks = List.of();
        this.file = Objects.requireNonNull(file, "file");
        if (length < 0) {
            throw new IllegalArgumentException("content length must be >= 0: " + length);
        }
        this.length = length;
    }

    /** The concatenation of {@code chunks}; no chunk, or empty chunks, make an empty object. */
    public static ObjectContent of(byte[]... chunks) {
        return of(List.of(chunks));
    }

    public static ObjectContent of(List<byte[]> chunks) {
        List<ByteBuffer> views = new ArrayList<>(chunks.size());
        for (byte[] c : chunks) {
            views.add(ByteBuffer.wrap(Objects.requireNonNull(c, "content chunk")).asReadOnlyBuffer());
        }
        return new ObjectContent(List.copyOf(views));
    }

    /**
     * The concatenation of the bytes of {@code buffers}, each from its position to its limit (their positions are
     * not moved); no buffer, or empty ones, make an empty object. Direct buffers are written without a copy to the
     * heap.
     */
    public static ObjectContent ofBuffers(ByteBuffer... buffers) {
        List<ByteBuffer> views = new ArrayList<>(buffers.length);
        for (ByteBuffer b : buffers) {
            views.add(Objects.requireNonNull(b, "content buffer").slice().asReadOnlyBuffer());
        }
        return new ObjectContent(List.copyOf(views));
    }

    /**
     * The first {@code length} bytes of {@code file}. The file must hold at least that many bytes when a store reads
     * it (a put of a shorter file fails as an I/O failure, RETRIABLE_OBJECT_STORE_FAILED).
     */
    public static ObjectContent ofFile(Path file, long length) {
        return new ObjectContent(file, length);
    }

    /** Size of the object in bytes. */
    public long length() {
        return length;
    }

    /** The file holding the content; empty when the content is in memory. */
    Optional<Path> file() {
        return Optional.ofNullable(file);
    }

    /** Read-only views of every byte, in order, each positioned at its start; new views on each call. In memory only. */
    ByteBuffer[] buffers() {
        return buffers(0, length);
    }

    /**
     * Read-only views of the bytes {@code [offset, offset + count)}, in order; new views on each call. In memory only:
     * fails with {@link IllegalStateException} for a file's content.
     */
    ByteBuffer[] buffers(long offset, long count) {
        if (offset < 0 || count < 0 || offset + count > length) {
            throw new IllegalArgumentException("[" + offset + ", +" + count + ") is not within " + length + " bytes");
        }
        if (file != null) {
            throw new IllegalStateException("the content is a file's, not in memory");
        }
        List<ByteBuffer> out = new ArrayList<>();
        long chunkStart = 0;
        long end = offset + count;
        for (ByteBuffer c : chunks) {
            long chunkEnd = chunkStart + c.remaining();
            long from = Math.max(offset, chunkStart);
            long to = Math.min(end, chunkEnd);
            if (from < to) {
                out.add(c.slice((int) (from - chunkStart), (int) (to - from)));
            }
            chunkStart = chunkEnd;
        }
        return out.toArray(new ByteBuffer[0]);
    }

    /**
     * Writes the whole content to {@code out} at its current position and returns the content's CRC32C. A file's
     * content is copied {@value #FILE_COPY_BYTES} bytes at a time.
     *
     * @throws IOException also when the file holds fewer than {@link #length()} bytes
     */
    long writeTo(WritableByteChannel out) throws IOException {
        CRC32C crc = new CRC32C();
        if (file == null) {
            for (ByteBuffer b : buffers()) {
                while (b.hasRemaining()) {
                    out.write(b);
                }
            }
            chunks.forEach(c -> crc.update(c.duplicate()));
            return crc.getValue();
        }
        ByteBuffer buffer = ByteBuffer.allocate((int) Math.min(FILE_COPY_BYTES, Math.max(1, length)));
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
            long position = 0;
            while (position < length) {
                buffer.clear().limit((int) Math.min(buffer.capacity(), length - position));
                int read = in.read(buffer, position);
                if (read < 0) {
                    throw new IOException("content file " + file + " holds " + position + " bytes, fewer than its "
                            + length);
                }
                buffer.flip();
                crc.update(buffer.duplicate());
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                position += read;
            }
        }
        return crc.getValue();
    }

    /** The CRC32C of the whole content. In memory only. */
    long crc32c() {
        if (file != null) {
            throw new IllegalStateException("the content is a file's, not in memory");
        }
        CRC32C crc = new CRC32C();
        chunks.forEach(c -> crc.update(c.duplicate()));
        return crc.getValue();
    }
}
