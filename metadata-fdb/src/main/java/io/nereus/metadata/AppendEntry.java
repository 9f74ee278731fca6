package io.nereus.metadata;

import java.util.Objects;

/**
 * One entry to append, before the stream has placed it: an indivisible payload covering {@code recordCount}
 * offsets (1 for a Pulsar entry, {@code lastOffsetDelta + 1} for a Kafka record batch). The stream assigns its
 * offsets when it appends it; read back, the same entry is a {@link StreamEntry}. The WAL stores it as is, as one
 * entry of a stream's section of a WAL batch.
 *
 * @param payload     the bytes; not copied, not to be modified after the append
 * @param recordCount offsets covered, {@code >= 1}
 */
public record AppendEntry(byte[] payload, int recordCount) {
    public AppendEntry {
        Objects.requireNonNull(payload, "payload");
        if (recordCount < 1) {
            throw new IllegalArgumentException("entry record count must be >= 1: " + recordCount);
        }
    }

    public static AppendEntry of(byte[] payload) {
        return new AppendEntry(payload, 1);
    }
}
