package io.nereus.metadata;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * A checksum of a physical payload, tagged with its algorithm so that other algorithms can follow.
 *
 * @param type  the algorithm
 * @param value the unsigned value, {@code 0 <= value <= type.maxValue()}
 */
public record Checksum(ChecksumType type, long value) {
    public Checksum {
        check(type, value);
    }

    /** Refuses a checksum this record may not hold. */
    static void check(ChecksumType type, long value) {
        Objects.requireNonNull(type, "type");
        if (value < 0 || value > type.maxValue()) {
            throw new IllegalArgumentException(type + " checksum value out of range: " + value);
        }
    }

    /** A CRC-32C value as returned by {@link CRC32C#getValue()} or as a signed int. */
    public static Checksum crc32c(long value) {
        return new Checksum(ChecksumType.CRC32C, value & 0xFFFF_FFFFL);
    }

    /** The CRC-32C of {@code data}. */
    public static Checksum crc32cOf(byte[] data) {
        CRC32C crc = new CRC32C();
        crc.update(data);
        return crc32c(crc.getValue());
    }

    /** The CRC-32C of the remaining bytes of {@code data}; the buffer's position is not changed. */
    public static Checksum crc32cOf(ByteBuffer data) {
        CRC32C crc = new CRC32C();
        crc.update(data.duplicate());
        return crc32c(crc.getValue());
    }

    /** True when {@code data} has this checksum. */
    public boolean matches(byte[] data) {
        return switch (type) {
            case CRC32C -> crc32cOf(data).value == value;
        };
    }

    @Override
    public String toString() {
        return type + ":" + String.format("%0" + (2 * type.width()) + "x", value);
    }
}
