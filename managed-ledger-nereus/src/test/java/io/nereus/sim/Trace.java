package io.nereus.sim;

import java.util.Arrays;

/** A 64-bit hash of what a run saw, in order: acknowledged ranges and payloads, failures, faults, crash points. */
final class Trace {
    private long h = 0x6a09e667f3bcc908L;

    void add(long... values) {
        for (long v : values) {
            h = Long.rotateLeft((h ^ v) * 0x9e3779b97f4a7c15L, 31) * 0xbf58476d1ce4e5b9L;
        }
    }

    void add(byte[] bytes) {
        add(bytes.length, Arrays.hashCode(bytes));
    }

    long value() {
        return h;
    }
}
