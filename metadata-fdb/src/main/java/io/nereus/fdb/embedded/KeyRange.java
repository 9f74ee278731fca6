package io.nereus.fdb.embedded;

/** A half-open key range {@code [begin, end)} in unsigned byte order; empty when {@code begin >= end}. */
record KeyRange(byte[] begin, byte[] end) {
    static KeyRange single(byte[] key) {
        return new KeyRange(key, Bytes.keyAfter(key));
    }

    boolean isEmpty() {
        return Bytes.compare(begin, end) >= 0;
    }

    int byteSize() {
        return begin.length + end.length;
    }
}
