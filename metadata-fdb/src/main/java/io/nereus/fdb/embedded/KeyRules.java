package io.nereus.fdb.embedded;

import io.nereus.fdb.FdbErrors;
import java.util.Arrays;

/**
 * FoundationDB's rules for keys and values, each failing with the error code the real client gives: sizes
 * (2102, 2103), the system key space (2004 without the system-keys options), inverted ranges (2005) and the
 * versionstamp placement of versionstamped mutations (2000).
 */
final class KeyRules {
    static final int KEY_SIZE_LIMIT = 10_000;
    static final int SYSTEM_KEY_SIZE_LIMIT = 30_000;
    static final int VALUE_SIZE_LIMIT = 100_000;

    private KeyRules() {
    }

    /** The first key past what a transaction with {@code s} may read: {@code \xff}, or {@code \xff\xff}. */
    static byte[] maxReadKey(TransactionSettings s) {
        return s.readSystemKeys || s.accessSystemKeys ? Bytes.SPECIAL_PREFIX : Bytes.SYSTEM_PREFIX;
    }

    private static boolean isSystem(byte[] key) {
        return key.length > 0 && key[0] == (byte) 0xff;
    }

    private static void checkSize(byte[] key) {
        if (key.length > (isSystem(key) ? SYSTEM_KEY_SIZE_LIMIT : KEY_SIZE_LIMIT)) {
            throw new EmbeddedFdbException(FdbErrors.KEY_TOO_LARGE);
        }
    }

    /** A single key read must lie below the readable key space's end; a selector may name the end itself. */
    static void checkReadKey(byte[] key, TransactionSettings s) {
        if (Bytes.compare(key, maxReadKey(s)) >= 0) {
            throw new EmbeddedFdbException(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
        }
        checkSize(key);
    }

    /** A key about to be written; {@code end} allows the system prefix itself as the end of a range clear. */
    static void checkWriteKey(byte[] key, boolean end, TransactionSettings s) {
        if (isSystem(key) && !s.accessSystemKeys && !(end && Arrays.equals(key, Bytes.SYSTEM_PREFIX))) {
            throw new EmbeddedFdbException(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
        }
        checkSize(key);
    }

    /** A conflict range added by hand. */
    static void checkConflictRange(byte[] begin, byte[] end, TransactionSettings s) {
        if (Bytes.compare(begin, end) > 0) {
            throw new EmbeddedFdbException(FdbErrors.INVERTED_RANGE);
        }
        if (Bytes.compare(end, maxReadKey(s)) > 0) {
            throw new EmbeddedFdbException(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
        }
    }

    static void checkValue(byte[] value) {
        if (value.length > VALUE_SIZE_LIMIT) {
            throw new EmbeddedFdbException(FdbErrors.VALUE_TOO_LARGE);
        }
    }

    /** The versionstamp position encoded in the last four bytes (little-endian) of {@code bytes}. */
    static int versionstampOffset(byte[] bytes) {
        if (bytes.length < 14) {
            throw new EmbeddedFdbException(FdbErrors.CLIENT_INVALID_OPERATION,
                    "A versionstamped key or value needs at least 14 bytes (10-byte stamp and 4-byte offset)");
        }
        int n = bytes.length;
        int offset = (bytes[n - 4] & 0xff) | (bytes[n - 3] & 0xff) << 8 | (bytes[n - 2] & 0xff) << 16
                | (bytes[n - 1] & 0xff) << 24;
        if (offset < 0 || offset + 10 > n - 4) {
            throw new EmbeddedFdbException(FdbErrors.CLIENT_INVALID_OPERATION,
                    "Versionstamp offset " + offset + " does not leave room for 10 bytes in " + (n - 4));
        }
        return offset;
    }
}
