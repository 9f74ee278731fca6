package io.nereus.fdb.embedded;

import com.apple.foundationdb.MutationType;
import java.util.Arrays;

/**
 * The value semantics of FoundationDB's atomic mutations (fdbclient {@code Atomic.h}, API 730: AND and MIN
 * use their "V2" forms). {@code existing == null} means the key is absent; a {@code null} result means the
 * key is cleared.
 */
final class Atomics {
    static final int VALUE_SIZE_LIMIT = 100_000;

    private Atomics() {
    }

    static byte[] apply(MutationType type, byte[] existing, byte[] param) {
        // By code: the deprecated AND, OR and XOR share the codes of BIT_AND, BIT_OR and BIT_XOR.
        return switch (type.code()) {
            case 2 -> add(existing, param);
            case 6 -> existing == null ? param : and(existing, param);
            case 7 -> isEmpty(existing) ? param : or(existing, param);
            case 8 -> isEmpty(existing) ? param : xor(existing, param);
            case 12 -> max(existing, param);
            case 13 -> min(existing, param);
            case 16 -> existing == null || Bytes.compare(param, existing) < 0 ? param : existing;
            case 17 -> existing == null || Bytes.compare(param, existing) > 0 ? param : existing;
            case 20 -> existing != null && Arrays.equals(existing, param) ? null : existing;
            case 9 -> appendIfFits(existing, param);
            default -> throw new IllegalArgumentException("not a value-combining mutation: " + type);
        };
    }

    private static boolean isEmpty(byte[] b) {
        return b == null || b.length == 0;
    }

    /** Little-endian addition truncated to the parameter's length. */
    private static byte[] add(byte[] existing, byte[] param) {
        if (isEmpty(existing)) {
            return param;
        }
        byte[] r = new byte[param.length];
        int carry = 0;
        for (int i = 0; i < param.length; i++) {
            int a = i < existing.length ? existing[i] & 0xff : 0;
            int s = a + (param[i] & 0xff) + carry;
            r[i] = (byte) s;
            carry = s >>> 8;
        }
        return r;
    }

    private static byte[] fit(byte[] existing, int length) {
        return Arrays.copyOf(existing, length);
    }

    private static byte[] and(byte[] existing, byte[] param) {
        byte[] r = fit(existing, param.length);
        for (int i = 0; i < r.length; i++) {
            r[i] &= param[i];
        }
        return r;
    }

    private static byte[] or(byte[] existing, byte[] param) {
        byte[] r = fit(existing, param.length);
        for (int i = 0; i < r.length; i++) {
            r[i] |= param[i];
        }
        return r;
    }

    private static byte[] xor(byte[] existing, byte[] param) {
        byte[] r = fit(existing, param.length);
        for (int i = 0; i < r.length; i++) {
            r[i] ^= param[i];
        }
        return r;
    }

    /** Unsigned little-endian comparison of {@code a} and {@code b}, both of the same length. */
    private static int compareLittleEndian(byte[] a, byte[] b) {
        for (int i = a.length - 1; i >= 0; i--) {
            int c = Integer.compare(a[i] & 0xff, b[i] & 0xff);
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static byte[] max(byte[] existing, byte[] param) {
        if (existing == null || param.length == 0) {
            return param;
        }
        byte[] e = fit(existing, param.length);
        return compareLittleEndian(e, param) >= 0 ? e : param;
    }

    private static byte[] min(byte[] existing, byte[] param) {
        if (existing == null || param.length == 0) {
            return param;
        }
        byte[] e = fit(existing, param.length);
        return compareLittleEndian(e, param) <= 0 ? e : param;
    }

    private static byte[] appendIfFits(byte[] existing, byte[] param) {
        if (isEmpty(existing)) {
            return param;
        }
        if (param.length == 0) {
            return existing;
        }
        if (existing.length + param.length > VALUE_SIZE_LIMIT) {
            return existing;
        }
        byte[] r = Arrays.copyOf(existing, existing.length + param.length);
        System.arraycopy(param, 0, r, existing.length, param.length);
        return r;
    }
}
