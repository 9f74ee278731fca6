package io.nereus.object;

import io.nereus.metadata.Checksum;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Writes one range of one stream as a dense stream object ({@link StreamObjectFormat}: consecutive entries). Entries are
 * grouped into blocks of at most {@code blockTargetBytes} stored bytes (entry headers included), except that a
 * block holds at least one entry, so one large entry makes one large block. Stateless: safe from any thread; each
 * object is built by a {@link Builder} of its own. Sparse objects (entries at their own offsets inside an explicit
 * coverage, the compacted view) are written to a file entry by entry by {@link StreamObjectSpill}, which shares
 * {@link #header}.
 */
public final class StreamObjectWriter {
    /** Largest buffer a block starts with; a block target above it grows its buffer as entries come. */
    private static final int MAX_INITIAL_BLOCK_BYTES = 4 << 20;
    private static final ByteBuffer[] NO_VIEWS = new ByteBuffer[0];

    private final int blockTargetBytes;

    public StreamObjectWriter(int blockTargetBytes) {
        if (blockTargetBytes <= 0) {
            throw new IllegalArgumentException("stream object block target must be > 0 bytes: " + blockTargetBytes);
        }
        this.blockTargetBytes = blockTargetBytes;
    }

    /**
     * A new dense object of {@code stream} in {@code view}, its blocks in buffers of {@code alloc} (the only copy of
     * each entry's bytes on their way to the store: a pooled direct allocator keeps them off the heap).
     */
    public Builder builder(StreamId stream, ReadView view, ByteBufAllocator alloc) {
        return new Builder(Objects.requireNonNull(stream, "stream"), Objects.requireNonNull(view, "view"),
                Objects.requireNonNull(alloc, "alloc"));
    }

    /**
     * One object being written: entries are copied into its blocks as they are added, so a writer holds each byte once,
     * in the object's own layout, and {@link #finish} only adds the header, the index and the footer. Owns the block
     * buffers until {@link #close}, which must follow on every path (after the object's put has completed: the
     * {@link Encoded#content()} is a view of them). Confined to one thread at a time.
     */
    public final class Builder implements AutoCloseable {
        private final StreamId stream;
        private final ReadView view;
        private final ByteBufAllocator alloc;
        /** The blocks so far; the last is the one entries go to. */
        private final List<ByteBuf> blocks = new ArrayList<>();
        private long[] starts = new long[64];
        private int[] records = new int[64];
        private int[] sizes = new int[64];
        private int[] blockOf = new int[64];
        /** Where each entry's payload starts in its block. */
        private int[] at = new int[64];
        private int count;
        private long payloadBytes;
        private Encoded encoded;
        private boolean closed;
        /**
         * {@link #sameEntry}'s views: of the written blocks (dropped when an entry is added or entries are truncated
         * away), and of the last array or direct block read back ({@link #readBlock}: the block buffer the view shows).
         */
        private ByteBuffer[] blockViews = NO_VIEWS;
        private ByteBuffer readView;
        private ByteBuf readBlock;

        private Builder(StreamId stream, ReadView view, ByteBufAllocator alloc) {
            this.stream = stream;
            this.view = view;
            this.alloc = alloc;
        }

        /**
         * Copies {@code e} in as the object's next entry (its payload is read, not released). It must start where the
         * previous entry ended.
         *
         * @throws IllegalArgumentException naming the entry that breaks the range, or one of more than 2^31-1 offsets
         * @throws IllegalStateException after {@link #finish} or {@link #close}
         */
        public void add(StreamEntry e) {
            Objects.requireNonNull(e, "entry");
            if (closed || encoded != null) {
                throw new IllegalStateException("stream object of " + stream + " already "
                        + (closed ? "closed" : "finished"));
            }
            if (count > 0 && e.range().start() != end()) {
                throw new IllegalArgumentException("stream object entries must be consecutive: entry " + count
                        + " starts at " + e.range().start() + ", expected " + end());
            }
            if (e.range().length() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("entry " + count + " covers more than 2^31-1 offsets");
            }
            int stored = StreamObjectFormat.ENTRY_HEADER_BYTES + e.size();
            blockViews = NO_VIEWS; // the last block's grows
            ByteBuf block = blocks.isEmpty() ? null : blocks.get(blocks.size() - 1);
            if (block == null || (block.writerIndex() > 0 && block.writerIndex() + (long) stored > blockTargetBytes)) {
                block = alloc.directBuffer(Math.max(stored, Math.min(blockTargetBytes, MAX_INITIAL_BLOCK_BYTES)));
                blocks.add(block);
            }
            if (count == starts.length) {
                int n = count * 2;
                starts = Arrays.copyOf(starts, n);
                records = Arrays.copyOf(records, n);
                sizes = Arrays.copyOf(sizes, n);
                blockOf = Arrays.copyOf(blockOf, n);
                at = Arrays.copyOf(at, n);
            }
            ByteBuf p = e.payload();
            block.writeInt((int) e.range().length()).writeInt(e.size());
            starts[count] = e.range().start();
            records[count] = (int) e.range().length();
            sizes[count] = e.size();
            blockOf[count] = blocks.size() - 1;
            at[count] = block.writerIndex();
            block.writeBytes(p, p.readerIndex(), e.size());
            count++;
            payloadBytes += e.size();
        }

        /** Entries added (and not truncated away). */
        public int entries() {
            return count;
        }

        /** Payload bytes of the entries added. */
        public long payloadBytes() {
            return payloadBytes;
        }

        /** Where the entries added end; -1 when there are none. */
        public long end() {
            return count == 0 ? -1 : starts[count - 1] + records[count - 1];
        }

        /**
         * Drops every entry after the first {@code entries}: a writer that added part of something it then could not
         * finish (a run of appends whose later sections it could not read) keeps what came before.
         */
        public void truncate(int entries) {
            if (entries < 0 || entries > count) {
                throw new IllegalArgumentException("cannot keep " + entries + " of " + count + " entries");
            }
            if (encoded != null || closed) {
                throw new IllegalStateException("stream object of " + stream + " already finished or closed");
            }
            if (entries == count) {
                return;
            }
            blockViews = NO_VIEWS; // of blocks about to shrink or go
            int block = blockOf[entries];
            int entryStart = at[entries] - StreamObjectFormat.ENTRY_HEADER_BYTES;
            int keep = entryStart == 0 ? block : block + 1;
            while (blocks.size() > keep) {
                blocks.remove(blocks.size() - 1).release();
            }
            if (entryStart > 0) {
                blocks.get(block).writerIndex(entryStart);
            }
            for (int i = entries; i < count; i++) {
                payloadBytes -= sizes[i];
            }
            count = entries;
        }

        /**
         * The object of the entries added: the header, the blocks (views of this builder's buffers, valid until
         * {@link #close}), the index and the footer. Once; nothing can be added afterwards.
         *
         * @throws IllegalArgumentException when no entry was added
         */
        public Encoded finish() {
            if (closed || encoded != null) {
                throw new IllegalStateException("stream object of " + stream + " already "
                        + (closed ? "closed" : "finished"));
            }
            if (count == 0) {
                throw new IllegalArgumentException("a stream object needs at least one entry");
            }
            OffsetRange range = new OffsetRange(starts[0], end());
            byte[] header = header(StreamObjectFormat.VERSION, stream, view, range, count, blocks.size());
            ByteBuffer tail = ByteBuffer.allocate(StreamObjectFormat.HEADER_BYTES
                    + blocks.size() * StreamObjectFormat.INDEX_ENTRY_BYTES + StreamObjectFormat.FOOTER_BYTES);
            tail.put(header);
            ByteBuffer[] content = new ByteBuffer[blocks.size() + 2];
            content[0] = ByteBuffer.wrap(header);
            long position = StreamObjectFormat.HEADER_BYTES;
            int entry = 0;
            for (int b = 0; b < blocks.size(); b++) {
                ByteBuf block = blocks.get(b);
                ByteBuffer bytes = block.nioBuffer(0, block.writerIndex());
                CRC32C crc = new CRC32C();
                crc.update(bytes.duplicate());
                int first = entry;
                while (entry < count && blockOf[entry] == b) {
                    entry++;
                }
                tail.putLong(starts[first]).putLong(position).putInt(block.writerIndex()).putInt(entry - first)
                        .putInt((int) crc.getValue());
                content[b + 1] = bytes;
                position += block.writerIndex();
            }
            int indexLength = tail.position();
            CRC32C indexCrc = new CRC32C();
            indexCrc.update(tail.array(), 0, indexLength);
            tail.putLong(position).putInt(indexLength).putInt((int) indexCrc.getValue()).putInt(0)
                    .put(StreamObjectFormat.FOOTER_MAGIC);
            content[blocks.size() + 1] = tail.flip();
            encoded = new Encoded(ObjectContent.ofBuffers(content), range, Checksum.crc32c(indexCrc.getValue()), count,
                    blocks.size());
            return encoded;
        }

        /** Whether {@code e} is entry {@code i} as added: the same offsets and the same payload bytes. */
        public boolean sameEntry(int i, StreamEntry e) {
            Objects.checkIndex(i, count);
            if (closed) {
                throw new IllegalStateException("stream object of " + stream + " already closed");
            }
            if (e.range().start() != starts[i] || e.range().length() != records[i] || e.size() != sizes[i]) {
                return false;
            }
            // compared as NIO buffers, whose comparison is vectorized (a ByteBuf's equals reads eight bytes at a time
            // with an accessibility check each: a third of the object store thread's time while objects were verified),
            // through views kept for the whole verification: one per written block, one per array read back (the
            // reader's entries are slices of its blocks' arrays); a view per entry was two objects per entry verified
            ByteBuffer written = blockView(blockOf[i]);
            written.clear().position(at[i]).limit(at[i] + sizes[i]);
            ByteBuf p = e.payload();
            int from;
            if (p.hasArray()) {
                if (readBlock != null || readView == null || readView.array() != p.array()) {
                    readView = ByteBuffer.wrap(p.array());
                    readBlock = null;
                }
                from = p.arrayOffset() + p.readerIndex();
            } else if (p.hasMemoryAddress() && p.unwrap() != null && p.unwrap().hasMemoryAddress()) {
                // a slice of a block read into direct memory: a view of the whole block, kept for its entries
                ByteBuf block = p.unwrap();
                if (readBlock != block) {
                    readView = block.nioBuffer(0, block.capacity());
                    readBlock = block;
                }
                from = Math.toIntExact(p.memoryAddress() - block.memoryAddress()) + p.readerIndex();
            } else {
                return written.equals(p.nioBuffer());
            }
            readView.clear().position(from).limit(from + sizes[i]);
            return written.equals(readView);
        }

        /** A view of all of written block {@code b}, made at its first use by {@link #sameEntry}. */
        private ByteBuffer blockView(int b) {
            if (blockViews.length <= b) {
                blockViews = Arrays.copyOf(blockViews, blocks.size());
            }
            ByteBuffer v = blockViews[b];
            if (v == null) {
                ByteBuf block = blocks.get(b);
                v = block.nioBuffer(0, block.writerIndex());
                blockViews[b] = v;
            }
            return v;
        }

        /** Releases the block buffers; idempotent. */
        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            blocks.forEach(ByteBuf::release);
            blocks.clear();
        }
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
     * @param content  the whole object, to be stored as is (while its builder is open)
     * @param range    the offsets it holds
     * @param checksum its index CRC-32C, which the publishing index record stores and every read checks
     * @param entries  entries held
     * @param blocks   blocks written
     */
    public record Encoded(ObjectContent content, OffsetRange range, Checksum checksum, int entries, int blocks) {
        public Encoded {
            Objects.requireNonNull(content, "content");
            Objects.requireNonNull(range, "range");
            Objects.requireNonNull(checksum, "checksum");
        }

        /** The object's size in bytes. */
        public long length() {
            return content.length();
        }
    }
}
