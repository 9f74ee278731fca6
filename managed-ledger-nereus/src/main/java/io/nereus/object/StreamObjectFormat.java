package io.nereus.object;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import java.util.Map;

/**
 * The stored format of a stream object, a higher-generation copy of one range of one stream in one view. Written
 * once by {@link StreamObjectWriter}, read by {@link StreamObjectReader}. All integers are big-endian; CRC-32C
 * everywhere. Two versions, told apart by the header's version byte:
 * <ul>
 *   <li>version 1, <b>dense</b> (the COMMITTED view): the entries cover the object's range without gaps, each
 *       starting where the previous ended;</li>
 *   <li>version 2, <b>sparse</b> (the TOPIC_COMPACTED view): the range is the object's coverage, stated explicitly;
 *       entries keep their original offsets, in increasing order, with gaps where a compaction removed entries, and
 *       there may be none at all (every key deleted).</li>
 * </ul>
 *
 * <pre>
 * object   = header block* index footer
 * header   = magic "NRSO" (4) | version u8 (1 or 2) | view u8 | reserved u16 = 0
 *            | stream i64 | first offset i64 | end offset i64 | entry count i32 | block count i32   (40 bytes)
 *            [first, end) is the range (version 1) or the coverage (version 2); version 1 has >= 1 entry and block
 * block    = entry+                       entries in offset order; the first starts at the block's first offset
 * entry v1 = record count i32 (>= 1) | payload length i32 (>= 0) | payload bytes
 *            the entry covers [start, start + record count); the next entry starts where it ends
 * entry v2 = offset i64 | record count i32 (>= 1) | payload length i32 (>= 0) | payload bytes
 *            the entry covers [offset, offset + record count); the next entry starts at or after its end
 * index    = the header's 40 bytes again | (first offset i64 | position i64 | length i32 | entries i32
 *            | block CRC-32C i32) per block, in offset order                   (40 + 28 per block bytes)
 * footer   = index position i64 | index length i32 | index CRC-32C i32 | reserved i32 = 0 | magic "NRSF"
 *                                                                                              (24 bytes)
 * </pre>
 *
 * <p>The index CRC-32C is the object's checksum: the generation index record that publishes the object stores
 * it, and a reader checks the index it fetched against it before trusting anything in it; each block is then
 * checked against its CRC in the index. So a read of one entry fetches the footer and index (one ranged get of
 * the object's tail, a second only for a large index) and one block, never the whole object, and every byte it
 * returns is covered by the checksum the index record holds. The header at the start repeats the index's copy
 * for tools and for the writer's read-back verification.
 */
public final class StreamObjectFormat {
    /** Dense: entries without gaps. */
    static final int VERSION = 1;
    /** Sparse: entries with explicit offsets inside an explicit coverage. */
    static final int SPARSE_VERSION = 2;
    static final byte[] MAGIC = {'N', 'R', 'S', 'O'};
    static final byte[] FOOTER_MAGIC = {'N', 'R', 'S', 'F'};
    static final int HEADER_BYTES = 40;
    static final int INDEX_ENTRY_BYTES = 28;
    static final int FOOTER_BYTES = 24;
    static final int ENTRY_HEADER_BYTES = 8;
    static final int SPARSE_ENTRY_HEADER_BYTES = 16;

    private StreamObjectFormat() {
    }

    /** A CORRUPT_DATA failure naming the object and the check that failed, with more key/value context. */
    static NereusException corrupt(String object, String reason, Object... more) {
        Map<String, Object> context = ErrorContext.of("object", object, "reason", reason);
        context.putAll(ErrorContext.of(more));
        return new NereusException(ErrorCode.CORRUPT_DATA, context);
    }
}
