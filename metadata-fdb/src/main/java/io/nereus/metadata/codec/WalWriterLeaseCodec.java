package io.nereus.metadata.codec;

import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.WalWriterLease;
import java.time.Duration;

/**
 * Binary form of a {@link WalWriterLease}, the value of {@code (WAL_LEASE, incarnation)}.
 *
 * <pre>
 * format 1:
 *   u8     format = 1
 *   string writerId
 *   i64    beat (&gt;= 0)
 *   i64    lease in milliseconds (&gt;= 1)
 * </pre>
 */
public final class WalWriterLeaseCodec implements ValueCodec<WalWriterLease> {
    public static final WalWriterLeaseCodec INSTANCE = new WalWriterLeaseCodec();
    public static final int FORMAT_V1 = 1;

    private WalWriterLeaseCodec() {
    }

    @Override
    public byte[] encode(WalWriterLease l) {
        return FdbLimits.checkValue("WalWriterLease value", new ValueWriter(48).u8(FORMAT_V1).string(l.writerId())
                .i64(l.beat()).i64(l.lease().toMillis()).toByteArray());
    }

    @Override
    public WalWriterLease decode(byte[] bytes) {
        ValueReader r = new ValueReader("WalWriterLease value", bytes);
        r.formatVersion(FORMAT_V1);
        String writer = r.string("writerId");
        long beat = r.i64("beat");
        long millis = r.i64("lease");
        r.expectEnd();
        return r.build(() -> new WalWriterLease(writer, beat, Duration.ofMillis(millis)));
    }
}
