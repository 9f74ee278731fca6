package io.nereus.metadata.codec;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Appends the primitive fields of the stored-value vocabulary (see {@code package-info}) to a growing buffer. */
final class ValueWriter {
    private byte[] buf;
    private int size;

    ValueWriter(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    private void ensure(int more) {
        if (size + more > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
        }
    }

    ValueWriter u8(int v) {
        ensure(1);
        buf[size++] = (byte) v;
        return this;
    }

    ValueWriter i32(int v) {
        ensure(4);
        buf[size++] = (byte) (v >>> 24);
        buf[size++] = (byte) (v >>> 16);
        buf[size++] = (byte) (v >>> 8);
        buf[size++] = (byte) v;
        return this;
    }

    ValueWriter i64(long v) {
        ensure(8);
        for (int shift = 56; shift >= 0; shift -= 8) {
            buf[size++] = (byte) (v >>> shift);
        }
        return this;
    }

    /** Unsigned big-endian of {@code width} bytes. */
    ValueWriter unsigned(long v, int width) {
        ensure(width);
        for (int shift = 8 * (width - 1); shift >= 0; shift -= 8) {
            buf[size++] = (byte) (v >>> shift);
        }
        return this;
    }

    /** Unsigned LEB128 of a non-negative long. */
    ValueWriter varint(long v) {
        if (v < 0) {
            throw new IllegalArgumentException("varint of a negative value: " + v);
        }
        // exactly what it writes: a value sized to its fields stays one array (toByteArray returns it as it is)
        ensure(varintSize(v));
        while ((v & ~0x7FL) != 0) {
            buf[size++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[size++] = (byte) v;
        return this;
    }

    /** Zigzag-mapped LEB128 of any long. */
    ValueWriter zigzag(long v) {
        long z = (v << 1) ^ (v >> 63);
        ensure(varintSize(z));
        while ((z & ~0x7FL) != 0) {
            buf[size++] = (byte) ((z & 0x7F) | 0x80);
            z >>>= 7;
        }
        buf[size++] = (byte) z;
        return this;
    }

    ValueWriter string(String s) {
        return utf8(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A string already encoded as UTF-8: its length, then its bytes (as {@link #string}). */
    ValueWriter utf8(byte[] b) {
        varint(b.length);
        return bytes(b, 0, b.length);
    }

    /** Bytes {@link #varint} writes for {@code v}. */
    static int varintSize(long v) {
        int n = 1;
        while ((v & ~0x7FL) != 0) {
            v >>>= 7;
            n++;
        }
        return n;
    }

    ValueWriter bytes(byte[] b, int off, int len) {
        ensure(len);
        System.arraycopy(b, off, buf, size, len);
        size += len;
        return this;
    }

    int size() {
        return size;
    }

    /** The bytes written; the buffer itself when it is exactly full (then this writer must not be used again). */
    byte[] toByteArray() {
        return size == buf.length ? buf : Arrays.copyOf(buf, size);
    }

    /** The internal buffer; only the first {@link #size()} bytes are meaningful. */
    byte[] buffer() {
        return buf;
    }
}
