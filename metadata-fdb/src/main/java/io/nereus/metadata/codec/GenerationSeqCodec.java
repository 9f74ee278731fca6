package io.nereus.metadata.codec;

import io.nereus.metadata.GenerationId;

/**
 * Binary form of the value of {@code (STREAM, sid, GENSEQ, view)}: the next generation id to allocate in
 * that (stream, view). It only grows; ids below it are never handed out again.
 *
 * <pre>
 * format 1:
 *   u8  format = 1
 *   i64 next generation id (&gt;= 0)
 * </pre>
 */
public final class GenerationSeqCodec implements ValueCodec<GenerationId> {
    public static final GenerationSeqCodec INSTANCE = new GenerationSeqCodec();
    public static final int FORMAT_V1 = 1;

    private GenerationSeqCodec() {
    }

    @Override
    public byte[] encode(GenerationId next) {
        return new ValueWriter(9).u8(FORMAT_V1).i64(next.value()).toByteArray();
    }

    @Override
    public GenerationId decode(byte[] bytes) {
        ValueReader r = new ValueReader("GenerationSeq value", bytes);
        r.formatVersion(FORMAT_V1);
        long next = r.i64("next generation");
        r.expectEnd();
        return r.build(() -> GenerationId.of(next));
    }
}
