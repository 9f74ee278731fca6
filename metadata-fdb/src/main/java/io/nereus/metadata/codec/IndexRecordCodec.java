package io.nereus.metadata.codec;

import io.nereus.metadata.Checksum;
import io.nereus.metadata.ChecksumType;
import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.IndexKey;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.IndexRecordState;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadTarget;
import io.nereus.metadata.WalTarget;

/**
 * Binary form of the value of a generation-index record; the key supplies stream, view, end offset and
 * generation ({@link IndexKey}). The same value is stored under INDEX and, once moved out of the lookup
 * space, under RETIRED.
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
 * </pre>
 */
public final class IndexRecordCodec {
    public static final IndexRecordCodec INSTANCE = new IndexRecordCodec();
    public static final int FORMAT_V1 = 1;
    static final int TARGET_WAL = 1;
    static final int TARGET_OBJECT = 2;
    private static final String WHAT = "IndexRecord value";

    private IndexRecordCodec() {
    }

    public byte[] encode(IndexRecord rec) {
        // a generation-0 record (one per stream append) is sized exactly, so the writer's buffer is the value
        int size = rec.target() instanceof WalTarget
                ? 1 + 8 + 1 + (1 + 8 + 8 + 4) + 1 + rec.checksum().type().width() + 3 * 8
                : 96;
        ValueWriter w = new ValueWriter(size)
                .u8(FORMAT_V1)
                .i64(rec.range().start())
                .u8(rec.state().code());
        ReadTarget t = rec.target();
        if (t instanceof WalTarget wal) {
            w.u8(TARGET_WAL).i64(wal.sliceId()).i64(wal.entryId()).i32(wal.positionInBatch());
        } else if (t instanceof ObjectTarget obj) {
            w.u8(TARGET_OBJECT).string(obj.key()).i64(obj.byteOffset()).i64(obj.byteLength())
                    .i64(obj.objectSize()).string(obj.version());
        } else {
            throw new IllegalArgumentException("unknown read target type " + t.getClass().getName());
        }
        Checksum c = rec.checksum();
        w.u8(c.type().code()).unsigned(c.value(), c.type().width());
        w.i64(rec.entryCount()).i64(rec.bytes()).i64(rec.metadataVersion());
        return FdbLimits.checkValue(WHAT, w.toByteArray());
    }

    /**
     * Decodes the value stored under {@code key}.
     *
     * @throws io.nereus.error.NereusException METADATA_FORMAT when {@code value} is not a valid encoding for that key
     */
    public IndexRecord decode(IndexKey key, byte[] value) {
        ValueReader r = new ValueReader(() -> WHAT + " of " + key, value);
        r.formatVersion(FORMAT_V1);
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
        r.expectEnd();
        return r.build(() -> new IndexRecord(key.stream(), key.view(), new OffsetRange(start, key.endOffset()),
                key.generation(), IndexRecordState.fromCode(state), target, new Checksum(type, checksumValue),
                entryCount, bytes, metadataVersion));
    }
}
