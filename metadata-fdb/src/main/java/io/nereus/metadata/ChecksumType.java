package io.nereus.metadata;

/**
 * Checksum algorithms with their stable stored codes and value widths. New algorithms get new codes;
 * codes are never reused.
 */
public enum ChecksumType {
    /** CRC-32C (Castagnoli), as computed by {@link java.util.zip.CRC32C}; a 4-byte unsigned value. */
    CRC32C(1, 4);

    private final int code;
    private final int width;

    ChecksumType(int code, int width) {
        this.code = code;
        this.width = width;
    }

    /** The stable stored code. */
    public int code() {
        return code;
    }

    /** Bytes the value occupies in stored form (big-endian). */
    public int width() {
        return width;
    }

    /** Largest value of this type. */
    public long maxValue() {
        return width >= 8 ? Long.MAX_VALUE : (1L << (8 * width)) - 1;
    }

    public static ChecksumType fromCode(int code) {
        for (ChecksumType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown checksum type code " + code);
    }
}
