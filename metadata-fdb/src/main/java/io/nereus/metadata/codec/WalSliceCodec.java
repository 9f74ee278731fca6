package io.nereus.metadata.codec;

import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.WalSlice;
import io.nereus.metadata.WalSliceState;

/**
 * Binary form of a {@link WalSlice}, the value of {@code (WAL, sliceId)} and of its by-state copy
 * {@code (WAL_STATE, state, sliceId)}.
 *
 * <pre>
 * format 1:
 *   u8     format = 1
 *   u8     state (WalSliceState code)
 *   string writerId
 *   i64    incarnation (&gt; 0)
 * </pre>
 *
 * <p>Builds before the WAL writer recorded its slices had this type without {@code incarnation} and never stored
 * it, so format 1 is the first layout ever written.
 */
public final class WalSliceCodec implements ValueCodec<WalSlice> {
    public static final WalSliceCodec INSTANCE = new WalSliceCodec();
    public static final int FORMAT_V1 = 1;

    private WalSliceCodec() {
    }

    @Override
    public byte[] encode(WalSlice s) {
        return FdbLimits.checkValue("WalSlice value", new ValueWriter(48).u8(FORMAT_V1).u8(s.state().code())
                .string(s.writerId()).i64(s.incarnation()).toByteArray());
    }

    @Override
    public WalSlice decode(byte[] bytes) {
        ValueReader r = new ValueReader("WalSlice value", bytes);
        r.formatVersion(FORMAT_V1);
        int state = r.u8("state");
        String writer = r.string("writerId");
        long incarnation = r.i64("incarnation");
        r.expectEnd();
        return r.build(() -> new WalSlice(WalSliceState.fromCode(state), writer, incarnation));
    }
}
