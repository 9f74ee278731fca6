package io.nereus.generation;

import io.nereus.metadata.StreamEntry;
import java.util.Optional;

/**
 * What a topic compaction keeps of each entry, in the payload format of the stream's owner (Pulsar messages, see
 * {@code io.nereus.pulsar.PulsarCompactionPolicy}); {@link TopicCompactor} does the rest. A compaction calls
 * {@link #scan} for every entry in offset order (phase one: which record is the latest of each key), then
 * {@link #retain} for every entry in the same order (phase two: what stays). An entry holds one or more records
 * ("slots": a Pulsar batch's messages), each with a key or none.
 *
 * <p>Called from the compactor's thread only; implementations may keep no state between entries. An entry is lent
 * for the call: its payload (a reference-counted buffer, {@link StreamEntry}) is the compactor's, which releases it
 * afterwards, so a policy neither releases it nor keeps it past the call (what it keeps it returns as bytes).
 */
public interface CompactionPolicy {
    /**
     * Phase one: reports every keyed record of {@code entry} to {@code keys}: {@link KeyTable#put} for a value,
     * {@link KeyTable#remove} for a deletion (a tombstone).
     */
    void scan(StreamEntry entry, KeyTable keys);

    /**
     * Phase two: the payload to keep for {@code entry} (itself, or rewritten to hold only its records that are still
     * the latest of their key, {@link KeyTable#isLatest}), or empty to drop the entry.
     */
    Optional<byte[]> retain(StreamEntry entry, KeyTable keys);
}
