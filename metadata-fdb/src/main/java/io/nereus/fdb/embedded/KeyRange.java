package io.nereus.fdb.embedded;

import java.util.Arrays;

/**
 * A half-open key range {@code [begin, end)} in unsigned byte order; empty when {@code begin >= end}.
 *
 * <p>A range of one key ({@link #single}) computes its end, {@code key + 0x00}, only when asked: every read and write
 * of a key makes one, and most are only ever checked as points (the store's per-key conflict versions), so the copy
 * of the key an end needs would be garbage at once.
 */
final class KeyRange {
    private final byte[] begin;
    /** {@code null} for a range of one key until {@link #end} is first asked for. */
    private byte[] end;
    private final boolean point;

    KeyRange(byte[] begin, byte[] end) {
        this.begin = begin;
        this.end = end;
        int n = begin.length;
        this.point = end.length == n + 1 && end[n] == 0 && Arrays.equals(begin, 0, n, end, 0, n);
    }

    private KeyRange(byte[] key) {
        this.begin = key;
        this.point = true;
    }

    static KeyRange single(byte[] key) {
        return new KeyRange(key);
    }

    byte[] begin() {
        return begin;
    }

    byte[] end() {
        byte[] e = end;
        if (e == null) {
            e = Bytes.keyAfter(begin);
            end = e;
        }
        return e;
    }

    /** Whether the range holds exactly one key, {@code begin} ({@code end} is {@code begin + 0x00}). */
    boolean isPoint() {
        return point;
    }

    boolean isEmpty() {
        return !point && Bytes.compare(begin, end) >= 0;
    }

    int byteSize() {
        return point ? 2 * begin.length + 1 : begin.length + end.length;
    }

    @Override
    public String toString() {
        return "[" + Bytes.printable(begin) + ", " + Bytes.printable(end()) + ")";
    }
}
