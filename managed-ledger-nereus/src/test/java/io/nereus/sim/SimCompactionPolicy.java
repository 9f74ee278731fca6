package io.nereus.sim;

import io.nereus.generation.CompactionPolicy;
import io.nereus.generation.KeyTable;
import io.nereus.metadata.StreamEntry;
import java.util.Optional;

/**
 * The simulation's compaction semantics: every entry is one record whose key is its payload's length modulo
 * {@value #KEYS} (the simulation's payloads have random lengths), so a compacted view keeps the latest entry of
 * each of a few keys.
 */
final class SimCompactionPolicy implements CompactionPolicy {
    static final int KEYS = 5;

    static String key(int payloadLength) {
        return "k" + payloadLength % KEYS;
    }

    @Override
    public void scan(StreamEntry entry, KeyTable keys) {
        keys.put(key(entry.size()), entry.range().start(), 0);
    }

    @Override
    public Optional<byte[]> retain(StreamEntry entry, KeyTable keys) {
        return keys.isLatest(key(entry.size()), entry.range().start(), 0) ? Optional.of(entry.bytes())
                : Optional.empty();
    }
}
