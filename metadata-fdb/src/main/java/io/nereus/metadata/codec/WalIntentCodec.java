package io.nereus.metadata.codec;

import io.nereus.metadata.WalIntent;

/**
 * Binary form of a {@link WalIntent}, the value of {@code (STREAM, sid, INTENT, sliceId)}.
 *
 * <pre>
 * format 1:
 *   u8  format = 1
 *   i64 firstOffset
 *   i64 writerEpoch
 * </pre>
 */
public final class WalIntentCodec implements ValueCodec<WalIntent> {
    public static final WalIntentCodec INSTANCE = new WalIntentCodec();
    public static final int FORMAT_V1 = 1;

    private WalIntentCodec() {
    }

    @Override
    public byte[] encode(WalIntent i) {
        return new ValueWriter(17).u8(FORMAT_V1).i64(i.firstOffset()).i64(i.writerEpoch()).toByteArray();
    }

    @Override
    public WalIntent decode(byte[] bytes) {
        ValueReader r = new ValueReader("WalIntent value", bytes);
        r.formatVersion(FORMAT_V1);
        long first = r.i64("firstOffset");
        long epoch = r.i64("writerEpoch");
        r.expectEnd();
        return r.build(() -> new WalIntent(first, epoch));
    }
}
