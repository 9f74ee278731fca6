package io.nereus.metadata;

/**
 * A physical representation number of one stream in one read view. Generation 0 is the append-time
 * (WAL) representation; higher ids are allocated monotonically per (stream, view) from the GENSEQ key
 * and never reused, even after quarantine or retirement. A generation id is not an offset, a commit
 * version, an epoch or an object version.
 */
public record GenerationId(long value) implements Comparable<GenerationId> {
    /** The append-time representation. */
    public static final GenerationId APPEND = new GenerationId(0);

    public GenerationId {
        if (value < 0) {
            throw new IllegalArgumentException("generation id must be >= 0: " + value);
        }
    }

    public static GenerationId of(long value) {
        return value == 0 ? APPEND : new GenerationId(value);
    }

    public boolean isAppend() {
        return value == 0;
    }

    /** The id allocated after this one. */
    public GenerationId next() {
        return new GenerationId(Math.addExact(value, 1));
    }

    @Override
    public int compareTo(GenerationId other) {
        return Long.compare(value, other.value);
    }

    @Override
    public String toString() {
        return "gen-" + value;
    }
}
