package io.nereus.metadata;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * How much Nereus metadata there is: keys and bytes (key plus value) under the root, by kind, counted by
 * {@link CollectionStore#census} over a series of snapshots (so a census taken under load is approximate).
 *
 * @param keys   every key under the root
 * @param bytes  their key and value bytes
 * @param byKind keys per kind: {@code catalog}, {@code head}, {@code index}, {@code fallback}, {@code retired},
 *               {@code genseq}, {@code intent}, {@code cursor}, {@code props}, {@code producer},
 *               {@code producerEnd}, {@code walSlice}, {@code walStream}, {@code walLease}, {@code walState},
 *               {@code purge}, {@code counter}, {@code meta}, {@code other}
 */
public record MetadataCensus(long keys, long bytes, Map<String, Long> byKind) {
    public MetadataCensus {
        Objects.requireNonNull(byKind, "byKind");
        byKind = Map.copyOf(byKind);
    }

    /** {@code keys=<n> bytes=<n>} then every kind as {@code name=<n>}, sorted by name: the census log line's form. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("keys=").append(keys).append(" bytes=").append(bytes);
        new TreeMap<>(byKind).forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
        return b.toString();
    }
}
