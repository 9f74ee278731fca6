package io.nereus.metadata;

import java.util.Objects;

/**
 * An entry of a stream as every layer reads it back (the WAL's target reader, the tail cache, the stream's read
 * API, the facade): the offsets it covers and its payload. The one entry value above the append.
 *
 * @param range   the entry's offsets, not empty; {@code range.length()} is its record count
 * @param payload the bytes as appended
 */
public record StreamEntry(OffsetRange range, byte[] payload) {
    public StreamEntry {
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(payload, "payload");
        if (range.isEmpty()) {
            throw new IllegalArgumentException("stream entry range must not be empty");
        }
    }
}
