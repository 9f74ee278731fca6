package io.nereus.metadata.codec;

import io.nereus.metadata.OffsetRange;

/**
 * Binary form of an {@link OffsetRange}; the value of {@code (WAL, sliceId, sid)}, the range of a stream
 * covered by a WAL slice.
 *
 * <pre>
 * format 1:
 *   u8  format = 1
 *   i64 start
 *   i64 end
 * </pre>
 */
public final class OffsetRangeCodec implements ValueCodec<OffsetRange> {
    public static final OffsetRangeCodec INSTANCE = new OffsetRangeCodec();
    public static final int FORMAT_V1 = 1;

    private OffsetRangeCodec() {
    }

    @Override
    public byte[] encode(OffsetRange range) {
        return new ValueWriter(17).u8(FORMAT_V1).i64(range.start()).i64(range.end()).toByteArray();
    }

    @Override
    public OffsetRange decode(byte[] bytes) {
        ValueReader r = new ValueReader("OffsetRange value", bytes);
        r.formatVersion(FORMAT_V1);
        long start = r.i64("start");
        long end = r.i64("end");
        r.expectEnd();
        return r.build(() -> new OffsetRange(start, end));
    }
}
