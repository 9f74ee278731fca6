package io.nereus.metadata.codec;

/**
 * Binary form of an allocation counter, the value of {@code (COUNTER, name)}: the next id to hand out.
 * Counters are read and written inside the allocating transaction (not atomic adds), so that the
 * allocated id is known to the transaction and a lost race is a conflict.
 *
 * <pre>
 * format 1:
 *   u8  format = 1
 *   i64 next (&gt;= 0)
 * </pre>
 */
public final class CounterCodec implements ValueCodec<Long> {
    public static final CounterCodec INSTANCE = new CounterCodec();
    public static final int FORMAT_V1 = 1;

    private CounterCodec() {
    }

    @Override
    public byte[] encode(Long next) {
        if (next < 0) {
            throw new IllegalArgumentException("counter value must be >= 0: " + next);
        }
        return new ValueWriter(9).u8(FORMAT_V1).i64(next).toByteArray();
    }

    @Override
    public Long decode(byte[] bytes) {
        ValueReader r = new ValueReader("Counter value", bytes);
        r.formatVersion(FORMAT_V1);
        long next = r.i64("next");
        r.expectEnd();
        if (next < 0) {
            throw r.invalid("counter value is negative", "next", next);
        }
        return next;
    }
}
