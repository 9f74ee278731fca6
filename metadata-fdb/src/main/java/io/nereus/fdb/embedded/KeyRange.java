package io.nereus.fdb.embedded;

/** A half-open key range {@code [begin, end)} in unsigned byte order; empty when {@code begin >= end}. */
record KeyRange(byte[] begin, byte[] end) {
    static KeyRange single(byte[] key) {
        return new KeyRange(key, Bytes.keyAfter(key));
    }

    /** Whether the range holds exactly one key, {@code begin} ({@code end} is {@code begin + 0x00}). */
    boolean isPoint() {
        int n = begin.length;
        return end.length == n + 1 && end[n] == 0 && java.util.Arrays.equals(begin, 0, n, end, 0, n);
    }

    boolean isEmpty() {
        return Bytes.compare(begin, end) >= 0;
    }

    int byteSize() {
        return begin.length + end.length;
    }
}
