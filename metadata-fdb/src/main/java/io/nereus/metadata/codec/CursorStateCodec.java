package io.nereus.metadata.codec;

import io.nereus.metadata.AckSet;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.OffsetRange;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * Binary form of a {@link CursorState}, split into FoundationDB values: a header stored under
 * {@code (STREAM, sid, CURSOR, name, 0)} and data chunks under {@code (…, name, 1..N)}. Any state that fits
 * a transaction is stored exactly, never truncated: one million disjoint acknowledged ranges take a few
 * megabytes of body and a few dozen chunks.
 *
 * <pre>
 * header (chunk 0), format 1:
 *   u8     format = 1
 *   varint chunkCount N            (&gt;= 1)
 *   varint bodyLength              (sum of the data chunks' body bytes)
 *   u32    CRC-32C of the body
 *
 * data chunk i (1..N), format 1:
 *   u8     format = 1
 *   bytes  the next slice of the body: exactly MAX_CHUNK_BODY_BYTES in every chunk but the last,
 *          1..MAX_CHUNK_BODY_BYTES in the last
 *
 * body:
 *   varint markDeleteEnd
 *   varint rangeCount
 *   rangeCount  * { varint gap, varint length }
 *                 gap = start - (previous range's end, or markDeleteEnd for the first); length &gt;= 1
 *   varint ackSetCount
 *   ackSetCount * { varint offsetDelta, varint wordCount, wordCount * i64 word }
 *                 offsetDelta = offset - (previous offset, or markDeleteEnd for the first);
 *                 &gt;= 1 after the first; 1 &lt;= wordCount &lt;= AckSet.MAX_WORDS
 *   varint propertyCount
 *   propertyCount * { string key, zigzag value }           keys strictly increasing
 *   varint cursorPropertyCount
 *   cursorPropertyCount * { string key, string value }     keys strictly increasing
 * </pre>
 *
 * <p>Delta and varint encoding keep dense acknowledgement patterns at about two bytes per range. The
 * header's CRC and lengths detect chunks from different writes or lost chunks.
 */
public final class CursorStateCodec {
    public static final CursorStateCodec INSTANCE = new CursorStateCodec();
    public static final int FORMAT_V1 = 1;
    /** Body bytes per data chunk; each chunk value is one byte more, well under the 100,000-byte limit. */
    public static final int MAX_CHUNK_BODY_BYTES = 90_000;
    private static final String WHAT = "CursorState";

    private CursorStateCodec() {
    }

    /** The header followed by the data chunks, in chunk-index order. */
    public List<byte[]> encode(CursorState s) {
        ValueWriter body = new ValueWriter(64 + 3 * s.individuallyDeleted().size());
        body.varint(s.markDeleteEnd());
        body.varint(s.individuallyDeleted().size());
        long previousEnd = s.markDeleteEnd();
        for (OffsetRange r : s.individuallyDeleted()) {
            body.varint(r.start() - previousEnd).varint(r.length());
            previousEnd = r.end();
        }
        body.varint(s.batchAckSets().size());
        long previousOffset = s.markDeleteEnd();
        for (Map.Entry<Long, AckSet> e : s.batchAckSets().entrySet()) {
            long offset = e.getKey();
            AckSet set = e.getValue();
            body.varint(offset - previousOffset).varint(set.wordCount());
            for (int i = 0; i < set.wordCount(); i++) {
                body.i64(set.word(i));
            }
            previousOffset = offset;
        }
        body.varint(s.properties().size());
        for (Map.Entry<String, Long> e : new TreeMap<>(s.properties()).entrySet()) {
            body.string(e.getKey()).zigzag(e.getValue());
        }
        body.varint(s.cursorProperties().size());
        for (Map.Entry<String, String> e : new TreeMap<>(s.cursorProperties()).entrySet()) {
            body.string(e.getKey()).string(e.getValue());
        }

        byte[] buf = body.buffer();
        int length = body.size();
        int chunks = Math.max(1, (length + MAX_CHUNK_BODY_BYTES - 1) / MAX_CHUNK_BODY_BYTES);
        CRC32C crc = new CRC32C();
        crc.update(buf, 0, length);
        List<byte[]> values = new ArrayList<>(chunks + 1);
        values.add(new ValueWriter(20).u8(FORMAT_V1).varint(chunks).varint(length)
                .unsigned(crc.getValue(), 4).toByteArray());
        for (int i = 0; i < chunks; i++) {
            int from = i * MAX_CHUNK_BODY_BYTES;
            int len = Math.min(MAX_CHUNK_BODY_BYTES, length - from);
            byte[] chunk = new byte[1 + len];
            chunk[0] = FORMAT_V1;
            System.arraycopy(buf, from, chunk, 1, len);
            values.add(chunk);
        }
        return values;
    }

    /** The number of data chunks a header announces, so a reader can check it read them all. */
    public int chunkCount(byte[] header) {
        ValueReader r = new ValueReader(WHAT + " header", header);
        r.formatVersion(FORMAT_V1);
        return r.varintInt("chunkCount", Integer.MAX_VALUE);
    }

    /**
     * Decodes the values written by {@link #encode}: the header first, then the data chunks in order.
     *
     * @throws io.nereus.error.NereusException METADATA_FORMAT when a chunk is missing, extra, of an unknown
     *         format, truncated, corrupt, or the state violates its invariants
     */
    public CursorState decode(List<byte[]> values) {
        if (values.isEmpty()) {
            throw ValueReader.formatError(null, WHAT, "no header chunk");
        }
        ValueReader h = new ValueReader(WHAT + " header", values.get(0));
        h.formatVersion(FORMAT_V1);
        int chunks = h.varintInt("chunkCount", Integer.MAX_VALUE);
        long length = h.varint("bodyLength");
        long expectedCrc = h.unsigned("body CRC-32C", 4);
        h.expectEnd();
        if (chunks < 1) {
            throw ValueReader.formatError(null, WHAT + " header", "chunk count must be >= 1", "chunks", chunks);
        }
        if (values.size() - 1 != chunks) {
            throw ValueReader.formatError(null, WHAT, "data chunks are not those the header announces",
                    "announced", chunks, "present", values.size() - 1);
        }
        if (length > (long) chunks * MAX_CHUNK_BODY_BYTES || length <= (long) (chunks - 1) * MAX_CHUNK_BODY_BYTES) {
            throw ValueReader.formatError(null, WHAT + " header", "body length does not fit the chunk count",
                    "bodyLength", length, "chunks", chunks, "maxChunkBodyBytes", MAX_CHUNK_BODY_BYTES);
        }
        byte[] body = new byte[(int) length];
        int at = 0;
        for (int i = 1; i <= chunks; i++) {
            byte[] chunk = values.get(i);
            String what = WHAT + " chunk " + i + " of " + chunks;
            new ValueReader(what, chunk).formatVersion(FORMAT_V1);
            int expected = i < chunks ? MAX_CHUNK_BODY_BYTES : (int) (length - at);
            if (chunk.length - 1 != expected) {
                throw ValueReader.formatError(null, what, "chunk holds another number of body bytes",
                        "holds", chunk.length - 1, "expected", expected);
            }
            System.arraycopy(chunk, 1, body, at, expected);
            at += expected;
        }
        CRC32C crc = new CRC32C();
        crc.update(body);
        if (crc.getValue() != expectedCrc) {
            // chunks are corrupt or from different writes
            throw ValueReader.formatError(null, WHAT, "body CRC-32C mismatch", "stored", Long.toHexString(expectedCrc),
                    "computed", Long.toHexString(crc.getValue()));
        }
        return decodeBody(body);
    }

    private static CursorState decodeBody(byte[] body) {
        ValueReader r = new ValueReader(WHAT + " body", body);
        long markDeleteEnd = r.varint("markDeleteEnd");
        int rangeCount = r.count("rangeCount", 2);
        List<OffsetRange> ranges = new ArrayList<>(rangeCount);
        long previousEnd = markDeleteEnd;
        for (int i = 0; i < rangeCount; i++) {
            long start = addChecked(r, previousEnd, r.varint("range gap"));
            long end = addChecked(r, start, r.varint("range length"));
            if (end == start) {
                throw r.invalid("acknowledged range has length 0", "range", i);
            }
            ranges.add(new OffsetRange(start, end));
            previousEnd = end;
        }
        int ackSetCount = r.count("ackSetCount", 10);
        TreeMap<Long, AckSet> sets = new TreeMap<>();
        long previousOffset = markDeleteEnd;
        for (int i = 0; i < ackSetCount; i++) {
            long delta = r.varint("ack set offset delta");
            if (i > 0 && delta == 0) {
                throw r.invalid("ack set repeats an offset", "ackSet", i, "offset", previousOffset);
            }
            long offset = addChecked(r, previousOffset, delta);
            int words = r.varintInt("ack set word count", AckSet.MAX_WORDS);
            if (words == 0) {
                throw r.invalid("ack set has no words", "ackSet", i, "offset", offset);
            }
            long[] w = new long[words];
            for (int j = 0; j < words; j++) {
                w[j] = r.i64("ack set word");
            }
            sets.put(offset, AckSet.of(w));
            previousOffset = offset;
        }
        int propertyCount = r.count("propertyCount", 2);
        Map<String, Long> properties = new HashMap<>();
        String previousKey = null;
        for (int i = 0; i < propertyCount; i++) {
            String k = r.string("property key");
            checkOrder(r, previousKey, k, "property");
            properties.put(k, r.zigzag("property value"));
            previousKey = k;
        }
        int cursorPropertyCount = r.count("cursorPropertyCount", 2);
        Map<String, String> cursorProperties = new HashMap<>();
        previousKey = null;
        for (int i = 0; i < cursorPropertyCount; i++) {
            String k = r.string("cursor property key");
            checkOrder(r, previousKey, k, "cursor property");
            cursorProperties.put(k, r.string("cursor property value"));
            previousKey = k;
        }
        r.expectEnd();
        return r.build(() -> new CursorState(markDeleteEnd, ranges, sets, properties, cursorProperties));
    }

    private static long addChecked(ValueReader r, long base, long delta) {
        long sum = base + delta;
        if (sum < base) {
            throw r.invalid("offset overflows", "position", r.position());
        }
        return sum;
    }

    private static void checkOrder(ValueReader r, String previous, String key, String what) {
        if (previous != null && previous.compareTo(key) >= 0) {
            throw r.invalid("keys must be sorted and unique", "map", what, "key", key, "previous", previous);
        }
    }
}
