package io.nereus.stream;

/**
 * Counters of a storage instance's tail cache, since the instance started.
 *
 * @param maxBytes  payload bytes the cache may hold
 * @param bytes     payload bytes held now
 * @param entries   entries held now
 * @param hits      lookups served from the cache
 * @param hitBytes  payload bytes of those lookups
 * @param misses    lookups the cache could not serve (the read went to the resolver)
 * @param inserted  entries put after their commit
 * @param evicted   entries evicted to stay within {@code maxBytes}
 */
public record TailCacheStats(long maxBytes, long bytes, long entries, long hits, long hitBytes, long misses,
        long inserted, long evicted) {
}
