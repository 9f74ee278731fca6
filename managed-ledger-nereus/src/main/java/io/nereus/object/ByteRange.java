package io.nereus.object;

/**
 * A half-open range of bytes of an object, {@code [offset, offset + length)}: {@code offset >= 0},
 * {@code length >= 0}, the end fitting in a {@code long}. {@code length == 0} is the empty range; it is within an
 * object when {@code offset <= size}, like {@code [size, size)} right after the last byte.
 */
public record ByteRange(long offset, long length) {
    public ByteRange {
        if (offset < 0 || length < 0 || offset > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException("byte range needs offset >= 0, length >= 0 and an end that fits in a"
                    + " long: offset " + offset + ", length " + length);
        }
    }

    public static ByteRange of(long offset, long length) {
        return new ByteRange(offset, length);
    }

    /** The first byte after the range. */
    public long end() {
        return offset + length;
    }

    public boolean isEmpty() {
        return length == 0;
    }

    /** True when the range lies within an object of {@code size} bytes. */
    public boolean within(long size) {
        return end() <= size;
    }

    @Override
    public String toString() {
        return "[" + offset + ", " + end() + ")";
    }
}
