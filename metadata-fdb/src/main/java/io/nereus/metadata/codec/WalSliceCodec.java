package io.nereus.metadata.codec;

import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.WalSlice;
import io.nereus.metadata.WalSliceState;

/**
 * Binary form of a {@link WalSlice}, the value of {@code (WAL, sliceId)}.
 *
 * <pre>
 * format 1:
 *   u8     format = 1
 *   u8     state (WalSliceState code)
 *   string writerId
 * </pre>
 */
public final class WalSliceCodec implements ValueCodec<WalSlice> {
    public static final WalSliceCodec INSTANCE = new WalSliceCodec();
    public static final int FORMAT_V1 = 1;

    private WalSliceCodec() {
    }

    @Override
    public byte[] encode(WalSlice s) {
        return FdbLimits.checkValue("WalSlice value",
                new ValueWriter(32).u8(FORMAT_V1).u8(s.state().code()).string(s.writerId()).toByteArray());
    }

    @Override
    public WalSlice decode(byte[] bytes) {
        ValueReader r = new ValueReader("WalSlice value", bytes);
        r.formatVersion(FORMAT_V1);
        int state = r.u8("state");
        String writer = r.string("writerId");
        r.expectEnd();
        return r.build(() -> new WalSlice(WalSliceState.fromCode(state), writer));
    }
}
