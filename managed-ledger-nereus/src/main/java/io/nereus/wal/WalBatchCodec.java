package io.nereus.wal;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.Checksum;
import io.nereus.metadata.StreamId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The stored form of a {@link WalBatch}: the bytes of one BookKeeper entry of a WAL slice.
 *
 * <p>Layout, version 1, all integers big-endian:
 * <pre>
 * header     magic        int32   0x4E57414C ("NWAL")
 *            version      int16   1
 *            flags        int16   0 (reserved; readers refuse other values)
 *            sliceId      int64   BookKeeper ledger id of the slice
 *            sequence     int64   writer's batch sequence number
 *            streamCount  int32   number of sections, >= 0
 * directory  streamCount times, in section order (position in batch = index):
 *            streamId     int64   > 0
 *            firstOffset  int64   >= 0
 *            entryCount   int32   >= 1
 *            sectionStart int32   byte position of the section's payloads, from the start of the payload area
 *            sectionBytes int32   total payload bytes of the section
 *            sectionCrc   int32   CRC32C of the section's payload bytes (the generation-0 record's checksum)
 *            entryCount times:
 *              recordCount int32  >= 1; offsets the entry covers
 *              entryBytes  int32  >= 0; entry payload length; entries are stored back to back
 * payloads   the sections' payloads, back to back in section order
 * trailer    batchCrc     int32   CRC32C of every byte before it
 * </pre>
 * A reader checks the length, magic, version and trailer before trusting any field, then the directory's
 * internal consistency; a section's own CRC is checked by the reader that uses the section
 * ({@link #verifySection}). Unknown versions are refused, never guessed.
 */
public final class WalBatchCodec {
    /** The check of a stored batch that failed: the {@code reason} of a CORRUPT_DATA failure of {@link #decode}. */
    public enum Check { TRUNCATED, BAD_MAGIC, UNKNOWN_VERSION, MALFORMED, CHECKSUM_MISMATCH }

    public static final int MAGIC = 0x4E57414C;
    public static final short VERSION = 1;
    static final int HEADER_BYTES = 4 + 2 + 2 + 8 + 8 + 4;
    static final int SECTION_FIXED_BYTES = 8 + 8 + 4 + 4 + 4 + 4;
    static final int ENTRY_DIR_BYTES = 8;
    static final int TRAILER_BYTES = 4;

    private WalBatchCodec() {
    }

    /** Bytes {@code batch} encodes to. */
    public static int encodedSize(WalBatch batch) {
        long n = HEADER_BYTES + TRAILER_BYTES;
        for (WalSection s : batch.sections()) {
            n += SECTION_FIXED_BYTES + (long) ENTRY_DIR_BYTES * s.entries().size() + s.payloadBytes();
        }
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("WAL batch too large: " + n + " bytes");
        }
        return (int) n;
    }

    /**
     * The stored form of a batch, without copying or reading a payload: a composite buffer of the header and
     * directory, a retained duplicate of each entry's payload and the trailer. The trailer is not computed over the
     * payloads again: it is the header's CRC32C combined with the sections' ({@link WalSection#checksum}, the
     * CRC32C of each section's payload bytes; the payload area is the sections back to back), which is the CRC32C of
     * the same bytes, so the format and what a reader checks are unchanged. The header and trailer come from
     * {@code alloc} (direct, so that a composite of direct payloads is written to the socket without a copy). The
     * caller owns the result (BookKeeper's {@code asyncAddEntry} takes it over and releases it, and with it the
     * payloads' references it holds); the batch's own references to its payloads are untouched.
     */
    public static ByteBuf encodeBuffer(WalBatch batch, ByteBufAllocator alloc) {
        int total = encodedSize(batch);
        int payloadBytes = 0;
        int entries = 0;
        for (WalSection s : batch.sections()) {
            payloadBytes = Math.addExact(payloadBytes, Math.toIntExact(s.payloadBytes()));
            entries += s.entries().size();
        }
        int headBytes = total - payloadBytes - TRAILER_BYTES;
        CompositeByteBuf out = alloc.compositeDirectBuffer(entries + 2);
        ByteBuf head = alloc.directBuffer(headBytes, headBytes);
        try {
            head.writeInt(MAGIC).writeShort(VERSION).writeShort(0).writeLong(batch.sliceId())
                    .writeLong(batch.sequence()).writeInt(batch.sections().size());
            int sectionStart = 0;
            for (WalSection s : batch.sections()) {
                int bytes = Math.toIntExact(s.payloadBytes());
                head.writeLong(s.stream().value()).writeLong(s.firstOffset()).writeInt(s.entries().size())
                        .writeInt(sectionStart).writeInt(bytes).writeInt((int) s.checksum().value());
                for (AppendEntry e : s.entries()) {
                    head.writeInt(e.recordCount()).writeInt(e.size());
                }
                sectionStart = Math.addExact(sectionStart, bytes);
            }
            int batchCrc = Crc32c.update(0, head);
            out.addComponent(true, head); // the composite counts what a component holds when it is added
            head = null;
            for (WalSection s : batch.sections()) {
                batchCrc = Crc32c.combine(batchCrc, (int) s.checksum().value(), s.payloadBytes());
                for (AppendEntry e : s.entries()) {
                    if (e.size() > 0) {
                        out.addComponent(true, e.payload().retainedDuplicate());
                    }
                }
            }
            out.addComponent(true, alloc.directBuffer(TRAILER_BYTES, TRAILER_BYTES).writeInt(batchCrc));
            return out;
        } catch (RuntimeException e) {
            if (head != null) {
                head.release();
            }
            out.release();
            throw e;
        }
    }

    /** The stored form of a batch as one new heap array, for tests and tools (the writer uses encodeBuffer). */
    public static byte[] encode(WalBatch batch) {
        ByteBuf b = encodeBuffer(batch, UnpooledByteBufAllocator.DEFAULT);
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    /**
     * Decodes a stored batch held in an array; as {@link #decode(ByteBuf)} over {@code data} wrapped (unpooled, so
     * the entries' payloads need no release).
     */
    public static WalBatch decode(byte[] data) {
        return decode(Unpooled.wrappedBuffer(data));
    }

    /**
     * Decodes a stored batch, {@code data}'s readable bytes; section checksums are carried, not verified (see
     * {@link #verifySection}). The entries' payloads are slices of {@code data} (not copies and not retained): they
     * are valid while the caller holds its reference to {@code data}, whose bytes must not change afterwards. A
     * reader that keeps a payload longer takes a reference of its own ({@code retainedSlice}). {@code data}'s
     * indices do not move.
     *
     * @throws NereusException CORRUPT_DATA, its {@code reason} the failed {@link Check} and the values it compared
     */
    public static WalBatch decode(ByteBuf data) {
        ByteBuf b = data.slice();
        int length = b.readableBytes();
        if (length < HEADER_BYTES + TRAILER_BYTES) {
            throw corrupt(Check.TRUNCATED, null, "length", length, "minimum", HEADER_BYTES + TRAILER_BYTES);
        }
        int magic = b.getInt(0);
        if (magic != MAGIC) {
            throw corrupt(Check.BAD_MAGIC, null, "magic", Integer.toHexString(magic),
                    "expected", Integer.toHexString(MAGIC));
        }
        short version = b.getShort(4);
        if (version != VERSION) {
            throw corrupt(Check.UNKNOWN_VERSION, null, "version", (int) version, "supported", (int) VERSION);
        }
        int computed = Crc32c.update(0, b.slice(0, length - TRAILER_BYTES));
        int stored = b.getInt(length - TRAILER_BYTES);
        if (computed != stored) {
            // truncated or corrupt
            throw corrupt(Check.CHECKSUM_MISMATCH, null, "stored", Integer.toHexString(stored),
                    "computed", Integer.toHexString(computed));
        }
        try {
            b.readerIndex(6);
            b.writerIndex(length - TRAILER_BYTES);
            return decodeBody(b);
        } catch (IndexOutOfBoundsException | IllegalArgumentException | ArithmeticException e) {
            throw corrupt(Check.MALFORMED, e, "detail", e.getMessage());
        }
    }

    private static NereusException corrupt(Check check, Throwable cause, Object... more) {
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("reason", check);
        context.putAll(ErrorContext.of(more));
        return new NereusException(ErrorCode.CORRUPT_DATA, context, cause);
    }

    /** The batch after its version: {@code b}'s readable bytes, up to the trailer, read from index 6. */
    private static WalBatch decodeBody(ByteBuf b) {
        int end = b.writerIndex();
        short flags = b.readShort();
        if (flags != 0) {
            throw new IllegalArgumentException("unknown flags " + flags);
        }
        long sliceId = b.readLong();
        long sequence = b.readLong();
        int count = b.readInt();
        if (count < 0 || count > (end - HEADER_BYTES) / SECTION_FIXED_BYTES) {
            throw new IllegalArgumentException("stream count " + count + " does not fit the batch");
        }
        record Dir(StreamId stream, long first, int start, int bytes, int crc, int[] records, int[] sizes) {
        }
        List<Dir> dirs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            StreamId stream = new StreamId(b.readLong());
            long first = b.readLong();
            int entries = b.readInt();
            int start = b.readInt();
            int bytes = b.readInt();
            int crc = b.readInt();
            if (entries < 1 || entries > (end - b.readerIndex()) / ENTRY_DIR_BYTES) {
                throw new IllegalArgumentException("section " + i + " entry count " + entries + " does not fit the batch");
            }
            int[] records = new int[entries];
            int[] sizes = new int[entries];
            long sum = 0;
            for (int j = 0; j < entries; j++) {
                records[j] = b.readInt();
                sizes[j] = b.readInt();
                if (sizes[j] < 0) {
                    throw new IllegalArgumentException("section " + i + " entry " + j + " has negative size");
                }
                sum += sizes[j];
            }
            if (sum != bytes) {
                throw new IllegalArgumentException("section " + i + " entry sizes add up to " + sum + ", not " + bytes);
            }
            dirs.add(new Dir(stream, first, start, bytes, crc, records, sizes));
        }
        int payloadArea = b.readerIndex();
        List<WalSection> sections = new ArrayList<>(count);
        int expectedStart = 0;
        for (Dir d : dirs) {
            if (d.start() != expectedStart || (long) payloadArea + d.start() + d.bytes() > end) {
                throw new IllegalArgumentException("section of " + d.stream() + " lies outside the payload area");
            }
            int pos = payloadArea + d.start();
            List<AppendEntry> entries = new ArrayList<>(d.records().length);
            for (int j = 0; j < d.records().length; j++) {
                // a view of the stored bytes, not a copy and not retained: valid while the caller holds its reference
                entries.add(new AppendEntry(b.slice(pos, d.sizes()[j]), d.records()[j]));
                pos += d.sizes()[j];
            }
            sections.add(new WalSection(d.stream(), d.first(), entries, Checksum.crc32c(d.crc())));
            expectedStart += d.bytes();
        }
        if (payloadArea + expectedStart != end) {
            throw new IllegalArgumentException((end - payloadArea - expectedStart) + " bytes after the last section");
        }
        return new WalBatch(sliceId, sequence, sections);
    }

    /** True when the section's payload bytes have the CRC32C {@code expected}. */
    public static boolean verifySection(WalSection section, Checksum expected) {
        return Checksum.crc32c(WalSection.crcOf(section.entries())).equals(expected);
    }
}
