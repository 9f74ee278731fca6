package io.nereus.fdb.embedded;

import java.util.Arrays;
import java.util.Objects;

/** A resolved mutation of one commit: SET(key, value) or CLEAR_RANGE(begin, end), end exclusive. */
record Effect(byte kind, byte[] key, byte[] value) {
    static final byte SET = 1;
    static final byte CLEAR_RANGE = 2;

    Effect {
        if (kind != SET && kind != CLEAR_RANGE) {
            throw new IllegalArgumentException("unknown effect kind " + kind);
        }
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
    }

    static Effect set(byte[] key, byte[] value) {
        return new Effect(SET, key, value);
    }

    static Effect clearRange(byte[] begin, byte[] end) {
        return new Effect(CLEAR_RANGE, begin, end);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Effect e && e.kind == kind && Arrays.equals(e.key, key) && Arrays.equals(e.value, value);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * kind + Arrays.hashCode(key)) + Arrays.hashCode(value);
    }
}
