package io.nereus.metadata.codec;

import io.nereus.metadata.Checksum;
import io.nereus.metadata.ChecksumType;
import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.GenerationId;
import io.nereus.metadata.IndexKey;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.IndexRecordState;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadTarget;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.WalTarget;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Binary form of the value of a generation-index record; the key supplies stream, view, end offset and
 * generation ({@link IndexKey}). The same value is stored under INDEX and, once moved out of the lookup
 * space, under RETIRED or FALLBACK; a stream's open run ({@link IndexRecord#open}), stored at
 * {@link IndexKey#openRun}, carries its end offset in the value (format 3).
 *
 * <pre>
 * format 1:
 *   u8     format = 1
 *   i64    startOffset              (range = [startOffset, key.endOffset))
 *   u8     state                    (IndexRecordState code)
 *   u8     target kind              1 = WAL, 2 = OBJECT
 *     WAL:    i64 sliceId, i64 entryId, i32 positionInBatch
 *     OBJECT: string key, i64 byteOffset, i64 byteLength, i64 objectSize, string version
 *   u8     checksum type            (ChecksumType code)
 *   uN     checksum value           N = the type's width (CRC32C: 4)
 *   i64    entryCount
 *   i64    bytes
 *   i64    metadataVersion
 *
 * format 2: a generation-0 record of a run of appends ({@link WalTarget} with earlier sections): format 1 with
 * target kind 3 (laid out as kind 1: the run's last section), followed by
 *   varint earlier sections, then for each, in offset order:
 *          varint entryId, varint positionInBatch, varint offsets (its end minus where it starts),
 *          uN checksum value (the record's checksum type)
 *
 * format 3: an open run, only at the open-run key:
 *   u8     format = 3
 *   i64    endOffset                (range = [startOffset, endOffset))
 *   then the record's value in format 1 or 2, its format byte first
 * </pre>
 * A record of one append is written in format 1, byte for byte as before runs existed.
 */
public final class IndexRecordCodec {
    public static final IndexRecordCodec INSTANCE = new IndexRecordCodec();
    public static final int FORMAT_V1 = 1;
    public static final int FORMAT_V2 = 2;
    public static final int FORMAT_V3 = 3;
    /** The bytes format 3 puts before the value of the run it holds: its format byte and end offset. */
    private static final int OPEN_RUN_PREFIX = 1 + 8;
    static final int TARGET_WAL = 1;
    static final int TARGET_OBJECT = 2;
    static final int TARGET_WAL_RUN = 3;
    private static final String WHAT = "IndexRecord value";

    private IndexRecordCodec() {
    }

    public byte[] encode(IndexRecord rec) {
        // a generation-0 record (written at every commit of a stream) is sized exactly: the writer's buffer is the value
        int width = rec.checksum().type().width();
        int size = rec.target() instanceof WalTarget wal
                ? 1 + 8 + 1 + (1 + 8 + 8 + 4) + 1 + width + 3 * 8 + runSize(wal, rec.range().start(), width)
                : 96;
        ReadTarget t = rec.target();
        boolean run = t instanceof WalTarget wal && !wal.earlier().isEmpty();
        ValueWriter w = new ValueWriter(rec.open() ? OPEN_RUN_PREFIX + size : size);
        if (rec.open()) {
            w.u8(FORMAT_V3).i64(rec.endOffset());
        }
        w.u8(run ? FORMAT_V2 : FORMAT_V1)
                .i64(rec.range().start())
                .u8(rec.state().code());
        if (t instanceof WalTarget wal) {
            w.u8(run ? TARGET_WAL_RUN : TARGET_WAL).i64(wal.sliceId()).i64(wal.entryId()).i32(wal.positionInBatch());
        } else if (t instanceof ObjectTarget obj) {
            w.u8(TARGET_OBJECT).string(obj.key()).i64(obj.byteOffset()).i64(obj.byteLength())
                    .i64(obj.objectSize()).string(obj.version());
        } else {
            throw new IllegalArgumentException("unknown read target type " + t.getClass().getName());
        }
        Checksum c = rec.checksum();
        w.u8(c.type().code()).unsigned(c.value(), c.type().width());
        w.i64(rec.entryCount()).i64(rec.bytes()).i64(rec.metadataVersion());
        if (run) {
            // the sections read from the target's arrays, none built
            WalTarget wal = (WalTarget) t;
            int n = wal.earlier().size();
            w.varint(n);
            long start = rec.range().start();
            for (int i = 0; i < n; i++) {
                if (wal.earlierChecksumType(i) != c.type()) {
                    throw new IllegalArgumentException("the sections of a WAL run share the record's checksum type "
                            + c.type() + ": " + wal.earlier().get(i));
                }
                long end = wal.earlierEnd(i);
                w.varint(wal.sectionEntryId(i)).varint(wal.earlierPosition(i)).varint(end - start)
                        .unsigned(wal.earlierChecksumValue(i), width);
                start = end;
            }
        }
        return FdbLimits.checkValue(WHAT, w.toByteArray());
    }

    /** The bytes the earlier sections of a run take after the target's fixed part; 0 for one section. */
    private static int runSize(WalTarget wal, long start, int width) {
        if (wal.earlier().isEmpty()) {
            return 0;
        }
        int sections = wal.earlier().size();
        int n = ValueWriter.varintSize(sections);
        for (int i = 0; i < sections; i++) {
            long end = wal.earlierEnd(i);
            n += ValueWriter.varintSize(wal.sectionEntryId(i)) + ValueWriter.varintSize(wal.earlierPosition(i))
                    + ValueWriter.varintSize(end - start) + width;
            start = end;
        }
        return n;
    }

    /**
     * Decodes the value stored under {@code key}: at the open-run key an open run ({@link IndexRecord#open}) in format
     * 3, anywhere else a record in format 1 or 2.
     *
     * @throws io.nereus.error.NereusException METADATA_FORMAT when {@code value} is not a valid encoding for that key
     */
    public IndexRecord decode(IndexKey key, byte[] value) {
        if (key.isOpenRun()) {
            return decodeBody(openRunEnd(key, value), key, value, OPEN_RUN_PREFIX).storedOpen(true);
        }
        return decodeBody(key, key, value, 0);
    }

    /**
     * The key an open run's value (format 3, stored at {@code key}, the open-run key) would have under its own end.
     */
    private static IndexKey openRunEnd(IndexKey key, byte[] value) {
        ValueReader r = new ValueReader(() -> WHAT + " of " + key, value);
        r.formatVersion(FORMAT_V3);
        long end = r.i64("open run endOffset");
        if (end <= 0 || end == IndexKey.OPEN_RUN_END) {
            throw r.invalid("an open run ends at an offset in 1.." + (IndexKey.OPEN_RUN_END - 1), "endOffset", end);
        }
        r.u8("open run's record format"); // the record follows: a value that ends here is truncated
        return new IndexKey(key.stream(), key.view(), end, key.generation());
    }

    /**
     * Closes the open run {@code stored} (the format-3 value at the open-run key {@code key}): the key under its own
     * end and the value there, the run's format-1/2 value that follows the prefix, byte for byte what
     * {@link #encode} gives for the record closed. So the commit that closes a run copies it instead of decoding and
     * encoding its sections. The prefix is checked as {@link #decode} checks it; the rest is copied as it is, so the
     * caller has decoded or extended {@code stored} first ({@link #extendRun} refuses what decode would).
     *
     * @throws io.nereus.error.NereusException METADATA_FORMAT when {@code stored} is no open run's value
     */
    public Map.Entry<IndexKey, byte[]> closeOpenRun(IndexKey key, byte[] stored) {
        if (!key.isOpenRun()) {
            throw new IllegalArgumentException("not the open-run key: " + key);
        }
        return Map.entry(openRunEnd(key, stored), Arrays.copyOfRange(stored, OPEN_RUN_PREFIX, stored.length));
    }

    /** Decodes a value in format 1 or 2 starting at {@code offset}, for the key {@code key} (stored at {@code at}). */
    private IndexRecord decodeBody(IndexKey key, IndexKey at, byte[] value, int offset) {
        ValueReader r = new ValueReader(() -> WHAT + " of " + at, value, offset, value.length);
        int format = r.formatVersion(FORMAT_V1, FORMAT_V2);
        long start = r.i64("startOffset");
        int state = r.u8("state");
        int kind = r.u8("target kind");
        ReadTarget target;
        switch (kind) {
            case TARGET_WAL -> {
                long slice = r.i64("WAL sliceId");
                long entry = r.i64("WAL entryId");
                int pos = r.i32("WAL positionInBatch");
                target = r.build(() -> new WalTarget(slice, entry, pos));
            }
            case TARGET_WAL_RUN -> {
                if (format != FORMAT_V2) {
                    throw r.invalid("a WAL run needs format 2", "format", format);
                }
                long slice = r.i64("WAL sliceId");
                long entry = r.i64("WAL entryId");
                int pos = r.i32("WAL positionInBatch");
                target = r.build(() -> new WalTarget(slice, entry, pos));
            }
            case TARGET_OBJECT -> {
                String objectKey = r.string("object key");
                long off = r.i64("object byteOffset");
                long len = r.i64("object byteLength");
                long size = r.i64("object objectSize");
                String version = r.string("object version");
                target = r.build(() -> new ObjectTarget(objectKey, off, len, size, version));
            }
            default -> throw r.invalid("unknown target kind", "kind", kind);
        }
        int checksumCode = r.u8("checksum type");
        ChecksumType type = r.build(() -> ChecksumType.fromCode(checksumCode));
        long checksumValue = r.unsigned("checksum value", type.width());
        long entryCount = r.i64("entryCount");
        long bytes = r.i64("bytes");
        long metadataVersion = r.i64("metadataVersion");
        if (kind == TARGET_WAL_RUN) {
            target = run(r, (WalTarget) target, start, type);
        } else if (format != FORMAT_V1) {
            throw r.invalid("format 2 is a WAL run's", "kind", kind);
        }
        r.expectEnd();
        ReadTarget t = target;
        return r.build(() -> new IndexRecord(key.stream(), key.view(), new OffsetRange(start, key.endOffset()),
                key.generation(), IndexRecordState.fromCode(state), t, new Checksum(type, checksumValue),
                entryCount, bytes, metadataVersion));
    }

    /**
     * The value of the generation-0 run stored as {@code stored} under {@code key} followed by {@code next}, the
     * one-section record of the stream's next append: a value that decodes, under the same key, to
     * {@code decode(key, stored).followedBy(next)}; {@code null} when {@code decode(key, stored).continuesWith(next,
     * maxSections)} is false. At the open-run key the run stays open: the result is in format 3 with the new end.
     * The commit extends a stream's run at every append, so this reads only the fixed fields and walks the earlier
     * sections' bytes, which it copies as they are, instead of building a record of every section (up to
     * {@link WalTarget#MAX_SECTIONS}) to encode them again. A value it does not find well formed is
     * decoded in full, which refuses it as {@link #decode} does.
     *
     * @throws io.nereus.error.NereusException METADATA_FORMAT when {@code stored} is not a valid encoding for
     *         {@code key}
     */
    public byte[] extendRun(IndexKey key, byte[] stored, IndexRecord next, int maxSections) {
        byte[] extended = key.isOpenRun() ? extendOpenRun(key, stored, next, maxSections)
                : extendWellFormed(key, key, stored, 0, next, maxSections);
        if (extended == NOT_CONTINUED) {
            return null;
        }
        if (extended != null) {
            return FdbLimits.checkValue(WHAT, extended);
        }
        IndexRecord run = decode(key, stored);
        return run.continuesWith(next, maxSections) ? encode(run.followedBy(next)) : null;
    }

    /** What {@link #extendWellFormed} returns for a well-formed run that {@code next} does not continue. */
    private static final byte[] NOT_CONTINUED = new byte[0];

    /** {@link #extendWellFormed} for an open run's value (format 3 at the open-run key), which stays open. */
    private static byte[] extendOpenRun(IndexKey key, byte[] stored, IndexRecord next, int maxSections) {
        if (stored.length < OPEN_RUN_PREFIX || (stored[0] & 0xFF) != FORMAT_V3) {
            return null;
        }
        IndexKey at;
        try {
            at = openRunEnd(key, stored);
        } catch (RuntimeException malformed) {
            return null;
        }
        return extendWellFormed(at, key, stored, OPEN_RUN_PREFIX, next, maxSections);
    }

    /**
     * {@link #extendRun} for a stored value that is a well-formed COMMITTED generation-0 record of the COMMITTED view
     * ({@link #NOT_CONTINUED} when {@code next} does not continue it); {@code null} for any other value, which the
     * caller then decodes in full. The checks are those {@link #decode} and the constructors it calls make. The
     * record's value starts at {@code offset} of {@code stored} ({@code key} has its end, {@code at} is where it is
     * stored): 0, or after an open run's format-3 prefix, which the result then has too, with the new end.
     */
    private static byte[] extendWellFormed(IndexKey key, IndexKey at, byte[] stored, int offset, IndexRecord next,
            int maxSections) {
        if (key.view() != ReadView.COMMITTED || !key.generation().equals(GenerationId.APPEND)) {
            return null;
        }
        // the reader's failures are decode's own: the same fields read in the same order, the same name of the value
        ValueReader r = new ValueReader(() -> WHAT + " of " + at, stored, offset, stored.length);
        int format = r.formatVersion(FORMAT_V1, FORMAT_V2);
        long start = r.i64("startOffset");
        int state = r.u8("state");
        int kind = r.u8("target kind");
        if (!(kind == TARGET_WAL && format == FORMAT_V1 || kind == TARGET_WAL_RUN && format == FORMAT_V2)
                || state != IndexRecordState.COMMITTED.code()) {
            return null;
        }
        long slice = r.i64("WAL sliceId");
        long entry = r.i64("WAL entryId");
        int position = r.i32("WAL positionInBatch");
        int checksumCode = r.u8("checksum type");
        ChecksumType type = checksumType(checksumCode);
        if (type == null) {
            return null;
        }
        long checksumValue = r.unsigned("checksum value", type.width());
        long entryCount = r.i64("entryCount");
        long bytes = r.i64("bytes");
        long metadataVersion = r.i64("metadataVersion");
        long end = key.endOffset();
        if (slice < 0 || entry < 0 || position < 0 || start < 0 || start >= end || entryCount < 1
                || entryCount > end - start || bytes < 0 || metadataVersion < 0) {
            return null;
        }
        int earlier = 0;
        int sectionsFrom = r.position();
        long lastEarlierEnd = start;
        if (kind == TARGET_WAL_RUN) {
            earlier = r.count("WAL run earlier sections", 4);
            if (earlier < 1 || earlier >= WalTarget.MAX_SECTIONS || entryCount < earlier + 1) {
                return null;
            }
            sectionsFrom = r.position();
            long previousEntry = -1;
            for (int i = 0; i < earlier; i++) {
                long sectionEntry = r.varint("WAL run section entryId");
                r.varintInt("WAL run section positionInBatch", Integer.MAX_VALUE);
                long offsets = r.varint("WAL run section offsets");
                r.unsigned("WAL run section checksum", type.width());
                if (offsets < 1 || offsets > Long.MAX_VALUE - lastEarlierEnd || sectionEntry <= previousEntry) {
                    return null;
                }
                lastEarlierEnd += offsets;
                previousEntry = sectionEntry;
            }
            if (previousEntry >= entry || lastEarlierEnd >= end) {
                return null;
            }
        }
        int sectionsTo = r.position();
        r.expectEnd();
        int sections = earlier + 1;
        if (!(next.view() == ReadView.COMMITTED && next.generation().isAppend()
                && next.state() == IndexRecordState.COMMITTED && next.stream().equals(key.stream())
                && next.range().start() == end && next.checksum().type() == type
                && next.target() instanceof WalTarget one && one.sliceId() == slice && one.earlier().isEmpty()
                && one.entryId() > entry && sections < Math.min(maxSections, WalTarget.MAX_SECTIONS))) {
            return NOT_CONTINUED;
        }
        int width = type.width();
        long lastOffsets = end - lastEarlierEnd;
        int size = 1 + 8 + 1 + (1 + 8 + 8 + 4) + 1 + width + 3 * 8 + ValueWriter.varintSize(sections)
                + (sectionsTo - sectionsFrom) + ValueWriter.varintSize(entry) + ValueWriter.varintSize(position)
                + ValueWriter.varintSize(lastOffsets) + width;
        ValueWriter w = new ValueWriter(offset + size);
        if (offset != 0) {
            w.u8(FORMAT_V3).i64(next.range().end());
        }
        w.u8(FORMAT_V2)
                .i64(start)
                .u8(IndexRecordState.COMMITTED.code())
                .u8(TARGET_WAL_RUN).i64(slice).i64(one.entryId()).i32(one.positionInBatch())
                .u8(type.code()).unsigned(next.checksum().value(), width)
                .i64(Math.addExact(entryCount, next.entryCount())).i64(Math.addExact(bytes, next.bytes())).i64(0)
                .varint(sections)
                .bytes(stored, sectionsFrom, sectionsTo - sectionsFrom)
                .varint(entry).varint(position).varint(lastOffsets).unsigned(checksumValue, width);
        return w.toByteArray();
    }

    private static ChecksumType checksumType(int code) {
        for (ChecksumType t : ChecksumType.values()) {
            if (t.code() == code) {
                return t;
            }
        }
        return null;
    }

    /** The earlier sections of a run, read after the record's fixed fields, added to its {@code last} section. */
    private static WalTarget run(ValueReader r, WalTarget last, long start, ChecksumType type) {
        int n = r.count("WAL run earlier sections", 4);
        if (n < 1) {
            throw r.invalid("a WAL run has earlier sections", "sections", n);
        }
        WalTarget.EarlierSections earlier = r.build(() -> new WalTarget.EarlierSections(n));
        long sectionStart = start;
        for (int i = 0; i < n; i++) {
            long entry = r.varint("WAL run section entryId");
            int pos = r.varintInt("WAL run section positionInBatch", Integer.MAX_VALUE);
            long offsets = r.varint("WAL run section offsets");
            long value = r.unsigned("WAL run section checksum", type.width());
            if (offsets < 1) {
                throw r.invalid("a WAL run section holds at least one offset", "section", i);
            }
            if (offsets > Long.MAX_VALUE - sectionStart) {
                throw r.invalid("a WAL run section ends beyond the largest offset", "section", i);
            }
            long end = sectionStart + offsets;
            sectionStart = end;
            r.build(() -> earlier.add(entry, pos, end, type, value));
        }
        return r.build(() -> new WalTarget(last.sliceId(), last.entryId(), last.positionInBatch(), earlier.toList()));
    }
}
