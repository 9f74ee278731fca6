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

    @Override
    public int compareTo(StreamId other) {
        return Long.compare(value, other.value);
    }

    @Override
    public String toString() {
        return "stream-" + value;
    }
}
