package io.nereus.fdb.embedded;

import com.apple.foundationdb.tuple.ByteArrayUtil;
import java.util.Arrays;
import java.util.Comparator;

/** Key arithmetic in FoundationDB's order: unsigned lexicographic bytes. */
final class Bytes {
    static final byte[] EMPTY = new byte[0];
    static final byte[] SYSTEM_PREFIX = {(byte) 0xff};
    static final byte[] SPECIAL_PREFIX = {(byte) 0xff, (byte) 0xff};
    /** Unsigned lexicographic order; {@link Arrays#compareUnsigned} is a JIT intrinsic (vectorized mismatch). */
    static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;

    private Bytes() {
    }

    static int compare(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    /** The first key after {@code key}: {@code key + 0x00}. */
    static byte[] keyAfter(byte[] key) {
        byte[] r = Arrays.copyOf(key, key.length + 1);
        return r;
    }

    static byte[] min(byte[] a, byte[] b) {
        return compare(a, b) <= 0 ? a : b;
    }

    static byte[] max(byte[] a, byte[] b) {
        return compare(a, b) >= 0 ? a : b;
    }

    static String printable(byte[] key) {
        if (key == null) {
            return "null";
        }
        return ByteArrayUtil.printable(key.length > 64 ? Arrays.copyOf(key, 64) : key)
                + (key.length > 64 ? "...(" + key.length + " bytes)" : "");
    }
}
