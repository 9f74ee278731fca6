package io.nereus.fdb.embedded;

import com.apple.foundationdb.tuple.ByteArrayUtil;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Comparator;

/** Key arithmetic in FoundationDB's order: unsigned lexicographic bytes. */
final class Bytes {
    static final byte[] EMPTY = new byte[0];
    static final byte[] SYSTEM_PREFIX = {(byte) 0xff};
    static final byte[] SPECIAL_PREFIX = {(byte) 0xff, (byte) 0xff};
    /** Unsigned lexicographic order; {@link Arrays#compareUnsigned} is a JIT intrinsic (vectorized mismatch). */
    static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long MUL = 0x9E3779B97F4A7C15L;

    private Bytes() {
    }

    /**
     * A hash of {@code key}'s content for hash tables, every bit depending on every byte. {@link Arrays#hashCode}
     * is no good for keys: tuple-encoded keys differ in a few bytes at fixed places, and its polynomial sends
     * millions of them onto a few hundred thousand values (2,000,000 generation-0 keys of 1,000 streams: 399,381
     * distinct hashes, up to 21 keys on one), which turns hash lookups into searches of long chains.
     */
    static int hash(byte[] key) {
        long h = key.length * MUL;
        int i = 0;
        for (; i + 8 <= key.length; i += 8) {
            h = Long.rotateLeft(h ^ ((long) LONGS.get(key, i) * MUL), 29) * 5 + 0x52dce729;
        }
        long tail = 0;
        for (int shift = 0; i < key.length; i++, shift += 8) {
            tail |= (key[i] & 0xffL) << shift;
        }
        h ^= tail * MUL;
        // murmur3's 64-bit finalizer
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) (h ^ (h >>> 32));
    }

    static int compare(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    /** The first key after {@code key}: {@code key + 0x00}. */
    static byte[] keyAfter(byte[] key) {
        byte[] r = Arrays.copyOf(key, key.length + 1);
        return r;
    }

    /** Whether {@code end} is {@code key + 0x00}: {@code [key, end)} holds exactly {@code key}. */
    static boolean isKeyAfter(byte[] key, byte[] end) {
        return end.length == key.length + 1 && end[key.length] == 0
                && Arrays.equals(key, 0, key.length, end, 0, key.length);
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
