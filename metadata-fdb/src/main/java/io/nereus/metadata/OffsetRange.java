package io.nereus.metadata;

import java.util.Optional;

/**
 * A half-open range of stream offsets {@code [start, end)}: {@code start} is included, {@code end} is the
 * first offset after the range. {@code 0 <= start <= end}; {@code start == end} is the empty range.
 * Adjacent ranges compose: {@code [a, b)} followed by {@code [b, c)} is {@code [a, c)}.
 */
public record OffsetRange(long start, long end) implements Comparable<OffsetRange> {
    public OffsetRange {
        if (start < 0) {
            throw new IllegalArgumentException("offset range start must be >= 0: [" + start + ", " + end + ")");
        }
        if (end < start) {
            throw new IllegalArgumentException("offset range end must be >= start: [" + start + ", " + end + ")");
        }
    }

    public static OffsetRange of(long start, long end) {
        return new OffsetRange(start, end);
    }

    /** The range holding exactly {@code offset}. */
    public static OffsetRange single(long offset) {
        return new OffsetRange(offset, Math.addExact(offset, 1));
    }

    /** Written out, the same as a record's (see {@link StreamId#equals}). */
    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof OffsetRange other && other.start == start && other.end == end;
    }

    @Override
    public int hashCode() {
        return 31 * Long.hashCode(start) + Long.hashCode(end);
    }

    public long length() {
        return end - start;
    }

    public boolean isEmpty() {
        return start == end;
    }

    public boolean contains(long offset) {
        return offset >= start && offset < end;
    }

    /** True when every offset of {@code other} is in this range; the empty range is contained in any range. */
    public boolean contains(OffsetRange other) {
        return other.isEmpty() || (other.start >= start && other.end <= end);
    }

    /** True when the two ranges share at least one offset. */
    public boolean overlaps(OffsetRange other) {
        return start < other.end && other.start < end && !isEmpty() && !other.isEmpty();
    }

    /** The offsets in both ranges, or empty when they share none. */
    public Optional<OffsetRange> intersect(OffsetRange other) {
        long s = Math.max(start, other.start);
        long e = Math.min(end, other.end);
        return s < e ? Optional.of(new OffsetRange(s, e)) : Optional.empty();
    }

    @Override
    public int compareTo(OffsetRange other) {
        int c = Long.compare(start, other.start);
        return c != 0 ? c : Long.compare(end, other.end);
    }

    @Override
    public String toString() {
        return "[" + start + ", " + end + ")";
    }
}
