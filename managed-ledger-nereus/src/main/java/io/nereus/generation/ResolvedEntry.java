package io.nereus.generation;

import io.nereus.metadata.OffsetRange;
import java.util.Objects;

/** One entry of a resolved range: the offsets it covers and its payload, read and checksum-verified. */
public record ResolvedEntry(OffsetRange range, byte[] payload) {
    public ResolvedEntry {
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(payload, "payload");
    }
}
