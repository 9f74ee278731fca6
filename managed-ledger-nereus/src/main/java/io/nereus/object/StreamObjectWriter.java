package io.nereus.object;

import io.nereus.metadata.Checksum;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Encodes one range of one stream as a dense stream object ({@link StreamObjectFormat}: consecutive entries). Entries are
 * grouped into blocks of at most {@code blockTargetBytes} stored bytes (entry headers included), except that a
 * block holds at least one entry, so one large entry makes one large block. Stateless: safe from any thread. The
 * object is built in memory. Sparse objects (entries at their own offsets inside an explicit coverage, the compacted
 * view) are written to a file entry by entry by {@link StreamObjectSpill}, which shares {@link #header}.
 */
public final class StreamObjectWriter {
    private final int blockTargetBytes;

    public StreamObjectWriter(int blockTargetBytes) {
        if (blockTargetBytes <= 0) {
            throw new IllegalArgumentException("stream object block target must be > 0 bytes: " + blockTargetBytes);
        }
        this.blockTargetBytes = blockTargetBytes;
    }

    /**
     * The dense object holding {@code entries}, which must be consecutive (each starts where the previous ended) and
     * not empty.
     *
     * @throws IllegalArgumentException naming the first entry that breaks the range, or an object over 2 GiB
     */
    public Encoded encode(StreamId stream, ReadView view, List<StreamEntry> entries) {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(view, "view");
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("a stream object needs at least one entry");
        }
        long first = entries.get(0).range().start();
        long expected = first;
        for (int i = 0; i < entries.size(); i++) {
            StreamEntry e = entries.get(i);
            if (e.range().start() != expected) {
                throw new IllegalArgumentException("stream object entries must be consecutive: entry " + i
                        + " starts at " + e.range().start() + ", expected " + expected);
            }
            expected = e.range().end();
        }
        return write(stream, view, new OffsetRange(first, expected), entries);
    }

    private Encoded write(StreamId stream, ReadView view, OffsetRange range, List<StreamEntry> entries) {
        int entryHeader = StreamObjectFormat.ENTRY_HEADER_BYTES;
        long size = StreamObjectFormat.HEADER_BYTES;
        List<int[]> blocks = new ArrayList<>(); // {first entry index, entry count}
        int blockStart = 0;
        long blockBytes = 0;
        for (int i = 0; i < entries.size(); i++) {
            StreamEntry e = entries.get(i);
            if (e.range().length() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("entry " + i + " covers more than 2^31-1 offsets");
            }
            int stored = entryHeader + e.size();
            if (i > blockStart && blockBytes + stored > blockTargetBytes) {
                blocks.add(new int[] {blockStart, i - blockStart});
                blockStart = i;
                blockBytes = 0;
            }
            blockBytes += stored;
            size += stored;
        }
        if (!entries.isEmpty()) {
            blocks.add(new int[] {blockStart, entries.size() - blockStart});
        }
        long indexLength = StreamObjectFormat.HEADER_BYTES
                + (long) blocks.size() * StreamObjectFormat.INDEX_ENTRY_BYTES;
        size += indexLength + StreamObjectFormat.FOOTER_BYTES;
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("stream object would be " + size + " bytes, more than 2^31-1");
        }
        ByteBuffer b = ByteBuffer.allocate((int) size);
        byte[] header = header(StreamObjectFormat.VERSION, stream, view, range, entries.size(), blocks.size());
        b.put(header);
        ByteBuffer index = ByteBuffer.allocate((int) indexLength);
        index.put(header);
        for (int[] block : blocks) {
            int position = b.position();
            long blockFirst = entries.get(block[0]).range().start();
            for (int i = block[0]; i < block[0] + block[1]; i++) {
                StreamEntry e = entries.get(i);
                b.putInt((int) e.range().length()).putInt(e.size());
                ByteBuf p = e.payload();
                int at = b.position();
                p.getBytes(p.readerIndex(), b.array(), b.arrayOffset() + at, e.size());
                b.position(at + e.size());
            }
            int length = b.position() - position;
            CRC32C crc = new CRC32C();
            crc.update(b.array(), position, length);
            index.putLong(blockFirst).putLong(position).putInt(length).putInt(block[1]).putInt((int) crc.getValue());
        }
        long indexPosition = b.position();
        CRC32C indexCrc = new CRC32C();
        indexCrc.update(index.array());
        b.put(index.array());
        b.putLong(indexPosition).putInt((int) indexLength).putInt((int) indexCrc.getValue()).putInt(0)
                .put(StreamObjectFormat.FOOTER_MAGIC);
        return new Encoded(b.array(), range, Checksum.crc32c(indexCrc.getValue()), entries.size(), blocks.size());
    }

    /** The 40-byte header of {@link StreamObjectFormat}, which the index repeats. */
    static byte[] header(int version, StreamId stream, ReadView view, OffsetRange range, int entries,
            int blocks) {
        ByteBuffer h = ByteBuffer.allocate(StreamObjectFormat.HEADER_BYTES);
        h.put(StreamObjectFormat.MAGIC).put((byte) version).put((byte) view.code())
                .putShort((short) 0)
                .putLong(stream.value()).putLong(range.start()).putLong(range.end()).putInt(entries).putInt(blocks);
        return h.array();
    }

    /**
     * An encoded stream object.
     *
     * @param bytes    the whole object, to be stored as is
     * @param range    the offsets it holds
     * @param checksum its index CRC-32C, which the publishing index record stores and every read checks
     * @param entries  entries held
     * @param blocks   blocks written
     */
    public record Encoded(byte[] bytes, OffsetRange range, Checksum checksum, int entries, int blocks) {
        public Encoded {
            Objects.requireNonNull(bytes, "bytes");
            Objects.requireNonNull(range, "range");
            Objects.requireNonNull(checksum, "checksum");
        }
    }
}
