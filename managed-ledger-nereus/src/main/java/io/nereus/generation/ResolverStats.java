package io.nereus.generation;

/**
 * Counters of one {@link GenerationResolver} since its storage instance started: how reads that missed the tail
 * cache were resolved, what they read, and the repairs and quarantines they caused.
 *
 * @param cacheHits         resolutions served by a cached index record
 * @param indexLookups      resolutions that looked the offset up in the generation index (cache misses, and retries
 *                          after a cached record failed to read)
 * @param walBytes          payload bytes read from generation 0 (WAL sections)
 * @param objectBytes       payload bytes read from higher generations (stream objects)
 * @param repaired          generation-0 repairs that wrote the missing record again
 * @param provedTrimmed     repairs that proved the offset trimmed
 * @param incomplete        repairs that ran out of budget or time
 * @param noEvidence        repairs that found no WAL evidence
 * @param quarantined       records quarantined because they could not be read
 */
public record ResolverStats(long cacheHits, long indexLookups, long walBytes, long objectBytes, long repaired,
        long provedTrimmed, long incomplete, long noEvidence, long quarantined) {
}
