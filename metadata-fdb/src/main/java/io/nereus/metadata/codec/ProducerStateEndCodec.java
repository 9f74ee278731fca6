package io.nereus.metadata.codec;

/**
 * Binary form of the end offset of a stream's stored producer state, the value of {@code (STREAM, sid, PRODUCER_END)}:
 * the stored producer entries reflect every batch below it (see {@link io.nereus.metadata.ProducerSnapshot}).
 *
 * <pre>
 * format 1:
 *   u8  format = 1
 *   i64 endOffset   >= 0
 * </pre>
 */
public final class ProducerStateEndCodec implements ValueCodec<Long> {
    public static final ProducerStateEndCodec INSTANCE = new ProducerStateEndCodec();
    public static final int FORMAT_V1 = 1;

    private ProducerStateEndCodec() {
    }

    @Override
    public byte[] encode(Long endOffset) {
        if (endOffset < 0) {
            throw new IllegalArgumentException("producer state end offset must be >= 0: " + endOffset);
        }
        return new ValueWriter(9).u8(FORMAT_V1).i64(endOffset).toByteArray();
    }

    @Override
    public Long decode(byte[] bytes) {
        ValueReader r = new ValueReader("ProducerStateEnd value", bytes);
        r.formatVersion(FORMAT_V1);
        long end = r.i64("endOffset");
        r.expectEnd();
        return r.build(() -> {
            if (end < 0) {
                throw new IllegalArgumentException("producer state end offset must be >= 0: " + end);
            }
            return end;
        });
    }
}
