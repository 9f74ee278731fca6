package io.nereus.object;

import io.nereus.metadata.Checksum;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Writes one sparse stream object ({@link StreamObjectFormat} version 2) to a local file entry by entry, so that an
 * object of any size is written while holding only a write buffer of {@value #WRITE_BUFFER_BYTES} bytes and the
 * block index ({@value StreamObjectFormat#INDEX_ENTRY_BYTES} bytes per block) in memory; the file is then put whole
 * ({@link ObjectContent#ofFile}). It is the one writer of sparse objects. Entries are grouped into blocks as
 * {@link StreamObjectWriter} groups a dense object's, each block's CRC-32C is computed as its bytes are written, and
 * the header (which counts entries and blocks) is written in place at {@link #finish}.
 *
 * <p>{@link #bufferedBytes()} is what the writer holds at a time: the bytes waiting in its write buffer, the index
 * built so far and the entry being added (its payload is the caller's until it is in the buffer or the file);
 * {@link #peakBufferedBytes()} the most it held. Blocking local file I/O on the caller's thread; one thread at a
 * time. The caller owns the file: it creates it (empty) and deletes it.
 */
public final class StreamObjectSpill implements AutoCloseable {
    /** Bytes the writer collects before one write to the file. */
    public static final int WRITE_BUFFER_BYTES = 64 * 1024;

    private final Path file;
    private final FileChannel out;
    private final StreamId stream;
    private final ReadView view;
    private final OffsetRange coverage;
    private final int blockTargetBytes;
    private final ByteBuffer buffer = ByteBuffer.allocate(WRITE_BUFFER_BYTES);
    private final CRC32C blockCrc = new CRC32C();
    private byte[] index = new byte[StreamObjectFormat.HEADER_BYTES + 16 * StreamObjectFormat.INDEX_ENTRY_BYTES];
    private int indexLength = StreamObjectFormat.HEADER_BYTES;
    /** Position in the object of the next byte written (in the file or in the buffer). */
    private long position = StreamObjectFormat.HEADER_BYTES;
    private long next;
    private int entries;
    private int blocks;
    private long blockFirst;
    private long blockPosition;
    private int blockEntries;
    private long blockBytes;
    private long peakBuffered;
    private boolean finished;

    private StreamObjectSpill(Path file, FileChannel out, StreamId stream, ReadView view, OffsetRange coverage,
            int blockTargetBytes) {
        this.file = file;
        this.out = out;
        this.stream = stream;
        this.view = view;
        this.coverage = coverage;
        this.blockTargetBytes = blockTargetBytes;
        this.next = coverage.start();
    }

    /**
     * Starts the sparse object of {@code coverage} in {@code file}, which must exist and is truncated.
     *
     * @param blockTargetBytes target stored bytes of one block, as {@link StreamObjectWriter}'s
     * @throws IllegalArgumentException an empty coverage or a block target of 0 bytes or less
     */
    public static StreamObjectSpill create(Path file, StreamId stream, ReadView view, OffsetRange coverage,
            int blockTargetBytes) throws IOException {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(view, "view");
        Objects.requireNonNull(coverage, "coverage");
        if (coverage.isEmpty()) {
            throw new IllegalArgumentException("a sparse stream object needs a non-empty coverage");
        }
        if (blockTargetBytes <= 0) {
            throw new IllegalArgumentException("stream object block target must be > 0 bytes: " + blockTargetBytes);
        }
        FileChannel out = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        try {
            out.position(StreamObjectFormat.HEADER_BYTES); // the header is written at finish
        } catch (IOException | RuntimeException e) {
            out.close();
            throw e;
        }
        return new StreamObjectSpill(file, out, stream, view, coverage, blockTargetBytes);
    }

    /**
     * Appends {@code entry} at its offset: after the previous entry's end, inside the coverage.
     *
     * @throws IllegalArgumentException the entry is out of order, outside the coverage, covers more than 2^31-1
     *                                  offsets, or the object would exceed 2^31-1 entries (unlike an object encoded
     *                                  in memory, its size in bytes is not limited to 2^31-1)
     */
    public void add(StreamEntry entry) throws IOException {
        Objects.requireNonNull(entry, "entry");
        checkOpen();
        if (entry.range().start() < next || entry.range().end() > coverage.end()) {
            throw new IllegalArgumentException("sparse stream object entry " + entries + " " + entry.range()
                    + " is out of order or outside the coverage " + coverage);
        }
        if (entry.range().length() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("entry " + entries + " covers more than 2^31-1 offsets");
        }
        if (entries == Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a stream object holds at most 2^31-1 entries");
        }
        int size = entry.size();
        long stored = StreamObjectFormat.SPARSE_ENTRY_HEADER_BYTES + (long) size;
        peakBuffered = Math.max(peakBuffered, bufferedBytes() + size);
        if (blockEntries > 0 && blockBytes + stored > blockTargetBytes) {
            endBlock();
        }
        if (blockEntries == 0) {
            blockFirst = entry.range().start();
            blockPosition = position;
        }
        ByteBuffer head = ByteBuffer.allocate(StreamObjectFormat.SPARSE_ENTRY_HEADER_BYTES);
        head.putLong(entry.range().start()).putInt((int) entry.range().length()).putInt(size).flip();
        put(head);
        put(entry.payload().nioBuffer());
        blockEntries++;
        blockBytes += stored;
        entries++;
        next = entry.range().end();
    }

    /**
     * Writes the index, the footer and the header: the file then holds the whole object. The writer is finished
     * (closed); {@link #close} is still safe to call.
     */
    public Spilled finish() throws IOException {
        checkOpen();
        if (blockEntries > 0) {
            endBlock();
        }
        flush();
        byte[] header = StreamObjectWriter.header(StreamObjectFormat.SPARSE_VERSION, stream, view, coverage, entries,
                blocks);
        System.arraycopy(header, 0, index, 0, header.length);
        CRC32C indexCrc = new CRC32C();
        indexCrc.update(index, 0, indexLength);
        long indexPosition = position;
        write(ByteBuffer.wrap(index, 0, indexLength));
        ByteBuffer footer = ByteBuffer.allocate(StreamObjectFormat.FOOTER_BYTES);
        footer.putLong(indexPosition).putInt(indexLength).putInt((int) indexCrc.getValue()).putInt(0)
                .put(StreamObjectFormat.FOOTER_MAGIC).flip();
        write(footer);
        ByteBuffer h = ByteBuffer.wrap(header);
        while (h.hasRemaining()) {
            out.write(h, h.position());
        }
        long size = position;
        finished = true;
        out.close();
        return new Spilled(file, size, coverage, Checksum.crc32c(indexCrc.getValue()), entries, blocks);
    }

    /** Bytes held now: the write buffer's content and the index built so far. */
    public long bufferedBytes() {
        return buffer.position() + (long) indexLength;
    }

    /** The most bytes held at once, counting the payload of the entry being added. */
    public long peakBufferedBytes() {
        return Math.max(peakBuffered, bufferedBytes());
    }

    /** Entries added so far. */
    public int entries() {
        return entries;
    }

    /** Closes the file, finished or not (an unfinished object is garbage; the caller deletes the file). */
    @Override
    public void close() throws IOException {
        finished = true;
        out.close();
    }

    private void checkOpen() {
        if (finished) {
            throw new IllegalStateException("the stream object spill of " + file + " is finished or closed");
        }
    }

    private void endBlock() {
        long length = position - blockPosition;
        if (indexLength + StreamObjectFormat.INDEX_ENTRY_BYTES > index.length) {
            index = Arrays.copyOf(index, Math.max(index.length * 2, indexLength + StreamObjectFormat.INDEX_ENTRY_BYTES));
        }
        ByteBuffer.wrap(index, indexLength, StreamObjectFormat.INDEX_ENTRY_BYTES).putLong(blockFirst)
                .putLong(blockPosition).putInt((int) length).putInt(blockEntries).putInt((int) blockCrc.getValue());
        indexLength += StreamObjectFormat.INDEX_ENTRY_BYTES;
        blocks++;
        blockEntries = 0;
        blockBytes = 0;
        blockCrc.reset();
    }

    /** Block bytes: counted in the block's CRC, collected in the buffer (written directly when larger). */
    private void put(ByteBuffer bytes) throws IOException {
        blockCrc.update(bytes.duplicate());
        if (bytes.remaining() > buffer.remaining()) {
            flush();
        }
        if (bytes.remaining() > buffer.capacity()) {
            write(bytes);
            return;
        }
        position += bytes.remaining();
        buffer.put(bytes);
    }

    private void flush() throws IOException {
        buffer.flip();
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
        buffer.clear();
    }

    /** Writes {@code bytes} at the file's position (the buffer is empty). */
    private void write(ByteBuffer bytes) throws IOException {
        position += bytes.remaining();
        while (bytes.hasRemaining()) {
            out.write(bytes);
        }
    }

    /**
     * A finished object in its file.
     *
     * @param file     the file holding it, from its first byte
     * @param size     its size in bytes
     * @param range    its coverage
     * @param checksum its index CRC-32C, which the publishing index record stores and every read checks
     * @param entries  entries held
     * @param blocks   blocks written
     */
    public record Spilled(Path file, long size, OffsetRange range, Checksum checksum, int entries, int blocks) {
        public Spilled {
            Objects.requireNonNull(file, "file");
            Objects.requireNonNull(range, "range");
            Objects.requireNonNull(checksum, "checksum");
        }
    }
}
