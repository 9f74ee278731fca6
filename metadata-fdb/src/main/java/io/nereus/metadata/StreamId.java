package io.nereus.metadata;

/**
 * Identity of one logical stream: one per Pulsar topic incarnation (delete + recreate allocates a new id).
 * Allocated from the {@code streams} counter; always positive.
 */
public record StreamId(long value) implements Comparable<StreamId> {
    public StreamId {
        if (value <= 0) {
            throw new IllegalArgumentException("stream id must be positive: " + value);
        }
    }

    public static StreamId of(long value) {
        return new StreamId(value);
    }

    /*
     * equals and hashCode written out (the same as a record's): the generated ones go through method handles that a
     * profile of the broker showed not inlined at every call site (stream ids key the maps of every commit and of
     * every slice copy), costing a chain of calls per comparison.
     */
    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof StreamId other && other.value == value;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(value);
    }

    @Override
    public int compareTo(StreamId other) {
        return Long.compare(value, other.value);
    }

    @Override
    public String toString() {
        return "stream-" + value;
    }
}
