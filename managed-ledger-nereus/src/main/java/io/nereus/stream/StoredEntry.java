package io.nereus.stream;

import io.nereus.metadata.OffsetRange;
import java.util.Objects;

/**
 * An entry as read back: the offsets it covers and its payload.
 *
 * @param range   the entry's offsets; {@code range.length()} is its record count
 * @param payload the bytes as appended
 */
public record StoredEntry(OffsetRange range, byte[] payload) {
    public StoredEntry {
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(payload, "payload");
        if (range.isEmpty()) {
            throw new IllegalArgumentException("stored entry range must not be empty");
        }
    }
}
