package io.nereus.fdb.embedded;

import java.util.Arrays;
import java.util.Objects;

/**
 * A resolved mutation of one commit: {@code SET(key, value)} or {@code CLEAR_RANGE(begin, end)}, end exclusive.
 * For {@link #CLEAR_RANGE} the {@code value} component holds the end key.
 *
 * <p>The arrays are not copied: once an effect has been handed to {@link DurableLog#append}, its arrays must not be
 * mutated (the log encodes them later, on the thread that writes it).
 */
record Effect(byte kind, byte[] key, byte[] value) {
    static final byte SET = 1;
    static final byte CLEAR_RANGE = 2;

    Effect {
        if (kind != SET && kind != CLEAR_RANGE) {
            throw new IllegalArgumentException("unknown effect kind " + kind);
        }
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, kind == SET ? "value" : "end key");
    }

    static Effect set(byte[] key, byte[] value) {
        return new Effect(SET, key, value);
    }

    static Effect clearRange(byte[] begin, byte[] end) {
        return new Effect(CLEAR_RANGE, begin, end);
    }

    /** The end key of a {@link #CLEAR_RANGE} (exclusive). */
    byte[] end() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Effect other
                && kind == other.kind
                && Arrays.equals(key, other.key)
                && Arrays.equals(value, other.value);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * kind + Arrays.hashCode(key)) + Arrays.hashCode(value);
    }

    /** Shows lengths and at most the first 16 bytes of each array, never a whole payload. */
    @Override
    public String toString() {
        return (kind == SET ? "SET(" : "CLEAR_RANGE(") + brief(key) + ", " + brief(value) + ")";
    }

    private static String brief(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        int n = Math.min(bytes.length, 16);
        for (int i = 0; i < n; i++) {
            sb.append(Character.forDigit((bytes[i] >> 4) & 0xF, 16)).append(Character.forDigit(bytes[i] & 0xF, 16));
        }
        if (bytes.length > n) {
            sb.append("..");
        }
        return sb.append('[').append(bytes.length).append(']').toString();
    }
}
