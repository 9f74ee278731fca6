package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.GenerationIndexStore;
import io.nereus.metadata.IndexKey;
import io.nereus.metadata.IndexLookup;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides which physical representation serves an offset (DESIGN §5) and reads it:
 * <ol>
 *   <li>the head decides first: below the trim point is {@link Resolution.Trimmed}, at or after the
 *       committed end {@link Resolution.NotYetCommitted};</li>
 *   <li>a cached positive resolution of the same view is tried;</li>
 *   <li>otherwise one lookup (head and covering records from one snapshot): only COMMITTED records of the
 *       same view, highest generation first; each candidate is read and checksum-verified;</li>
 *   <li>after a physical failure the cache entry is dropped and the next candidate tried; a higher generation
 *       whose object is missing or corrupt is first marked QUARANTINED (a conditional transaction), so no reader
 *       tries it again; when all fail, one fresh lookup is tried again before reporting
 *       {@link Resolution.Unreadable} with the last failure's evidence;</li>
 *   <li>a committed offset with no record in COMMITTED goes to generation-0 repair, then is resolved again.</li>
 * </ol>
 * Only successful reads are cached; misses, failures and repair timeouts never are. Thread-safe.
 *
 * <p>The entries of a {@link Resolution.Found} are the target reader's (retained slices, {@link TargetReader}); the
 * resolver passes them on untouched, and the receiver owns them.
 */
public final class GenerationResolver {
    private static final Logger LOG = LoggerFactory.getLogger(GenerationResolver.class);

    private final GenerationIndexStore index;
    private final TargetReader reader;
    private final GenerationZeroRepair repair;
    private final int maxCachedRecords;
    private final Map<CacheKey, ConcurrentSkipListMap<Long, IndexRecord>> cache = new ConcurrentHashMap<>();
    private final AtomicInteger cached = new AtomicInteger();
    private final AtomicLong quarantined = new AtomicLong();
    private final LongAdder cacheHits = new LongAdder();
    private final LongAdder indexLookups = new LongAdder();
    private final LongAdder walBytes = new LongAdder();
    private final LongAdder objectBytes = new LongAdder();
    private final LongAdder repaired = new LongAdder();
    private final LongAdder provedTrimmed = new LongAdder();
    private final LongAdder incomplete = new LongAdder();
    private final LongAdder noEvidence = new LongAdder();

    private record CacheKey(StreamId stream, ReadView view) {
    }

    public GenerationResolver(GenerationIndexStore index, TargetReader reader, GenerationZeroRepair repair,
            int maxCachedRecords) {
        this.index = Objects.requireNonNull(index, "index");
        this.reader = Objects.requireNonNull(reader, "reader");
        this.repair = Objects.requireNonNull(repair, "repair");
        this.maxCachedRecords = maxCachedRecords;
    }

    /** Resolves {@code offset} of {@code stream} in {@code view}, given a head snapshot the caller already read. */
    public CompletableFuture<Resolution> resolve(StreamId stream, ReadView view, long offset, StreamHead head) {
        return resolve(stream, view, offset, head.readableRange());
    }

    /**
     * Resolves {@code offset} of {@code stream} in {@code view}, given the stream's readable range {@code [trim
     * offset, committed end)} as the caller knows it (from a head snapshot, or as the stream's writer).
     */
    public CompletableFuture<Resolution> resolve(StreamId stream, ReadView view, long offset, OffsetRange readable) {
        return resolve(stream, view, offset, readable, Integer.MAX_VALUE, Long.MAX_VALUE);
    }

    /**
     * As {@link #resolve(StreamId, ReadView, long, OffsetRange)}, telling the target's reader how much the caller
     * wants from {@code offset} on ({@link TargetReader#read}): a stream object is then read block by block rather
     * than whole.
     */
    public CompletableFuture<Resolution> resolve(StreamId stream, ReadView view, long offset, OffsetRange readable,
            int maxEntries, long maxBytes) {
        Want want = new Want(offset, maxEntries, maxBytes);
        if (offset < readable.start()) {
            return CompletableFuture.completedFuture(new Resolution.Trimmed(readable.start()));
        }
        if (offset >= readable.end()) {
            return CompletableFuture.completedFuture(new Resolution.NotYetCommitted(readable.end()));
        }
        IndexRecord hit = cachedRecord(stream, view, offset);
        if (hit != null) {
            cacheHits.increment();
            return reader.read(hit, offset, maxEntries, maxBytes).handle((entries, error) -> {
                if (error == null) {
                    countRead(hit, entries);
                    return CompletableFuture.<Resolution>completedFuture(new Resolution.Found(hit, entries));
                }
                forget(hit);
                return lookupAndRead(stream, view, want, true);
            }).thenCompose(f -> f);
        }
        return lookupAndRead(stream, view, want, true);
    }

    /** What the caller wants read: from {@code offset}, up to the limits. */
    private record Want(long offset, int maxEntries, long maxBytes) {
    }

    private CompletableFuture<Resolution> lookupAndRead(StreamId stream, ReadView view, Want want, boolean mayRetry) {
        long offset = want.offset();
        indexLookups.increment();
        return index.lookup(stream, view, offset).thenCompose(lookup -> {
            if (lookup instanceof IndexLookup.Trimmed t) {
                return CompletableFuture.completedFuture(new Resolution.Trimmed(t.firstAvailable()));
            }
            if (lookup instanceof IndexLookup.NotYetCommitted n) {
                return CompletableFuture.completedFuture(new Resolution.NotYetCommitted(n.committedEnd()));
            }
            if (lookup instanceof IndexLookup.Unindexed) {
                if (view != ReadView.COMMITTED || !mayRetry) {
                    return CompletableFuture.completedFuture(new Resolution.Unindexed(offset));
                }
                return repair.repair(stream, offset).thenCompose(outcome -> {
                    countRepair(outcome);
                    if (outcome instanceof GenerationZeroRepair.Outcome.Repaired) {
                        return lookupAndRead(stream, view, want, false);
                    }
                    if (outcome instanceof GenerationZeroRepair.Outcome.ProvedTrimmed p) {
                        return CompletableFuture.completedFuture(new Resolution.Trimmed(p.firstAvailable()));
                    }
                    if (outcome instanceof GenerationZeroRepair.Outcome.Incomplete i) {
                        return CompletableFuture.failedFuture(new NereusException(ErrorCode.RETRIABLE_REPAIR_INCOMPLETE,
                                ErrorContext.of("stream", stream, "offset", offset, "why", i.why())));
                    }
                    return CompletableFuture.completedFuture(new Resolution.Unindexed(offset));
                });
            }
            List<IndexRecord> candidates = ((IndexLookup.Resolved) lookup).candidates();
            return tryCandidates(candidates, 0, want, null).thenCompose(r -> {
                if (r instanceof Resolution.Unreadable u && mayRetry) {
                    LOG.warn("every representation failed, resolving again: stream={} view={} offset={}",
                            stream, view, offset);
                    return lookupAndRead(stream, view, want, false);
                }
                return CompletableFuture.completedFuture(r);
            });
        });
    }

    private CompletableFuture<Resolution> tryCandidates(List<IndexRecord> candidates, int i, Want want,
            NereusException last) {
        if (i >= candidates.size()) {
            return CompletableFuture.completedFuture(new Resolution.Unreadable(last));
        }
        IndexRecord record = candidates.get(i);
        return reader.read(record, want.offset(), want.maxEntries(), want.maxBytes()).handle((entries, error) -> {
            if (error == null) {
                remember(record);
                countRead(record, entries);
                return CompletableFuture.<Resolution>completedFuture(new Resolution.Found(record, entries));
            }
            Throwable cause = Failures.unwrap(error);
            NereusException p = cause instanceof NereusException n && TargetReader.FAILURES.contains(n.code()) ? n
                    : new NereusException(ErrorCode.RETRIABLE_READ_FAILED, Map.of("target", record.target()), cause);
            LOG.warn("representation unreadable, falling back: stream={} view={} range={} generation={} code={}"
                    + " context={}", record.stream(), record.view(), record.range(), record.generation(), p.code(),
                    p.context());
            forget(record);
            if (i + 1 < candidates.size() && quarantinable(record, p)) {
                return quarantine(record, p).thenCompose(ignored -> tryCandidates(candidates, i + 1, want, p));
            }
            return tryCandidates(candidates, i + 1, want, p);
        }).thenCompose(f -> f);
    }

    /**
     * A higher generation whose object is gone or corrupt, with a lower candidate to fall back to, is quarantined so
     * that no reader tries it again. Generation 0 is never quarantined here: it is the last resort, and its failures
     * are reported as they are (DESIGN §5).
     */
    private static boolean quarantinable(IndexRecord record, NereusException failure) {
        return !record.generation().isAppend()
                && (failure.code() == ErrorCode.TARGET_MISSING || failure.code() == ErrorCode.CORRUPT_DATA);
    }

    private CompletableFuture<Void> quarantine(IndexRecord record, NereusException evidence) {
        return index.quarantine(IndexKey.of(record)).handle((stored, error) -> {
            if (error != null) {
                LOG.warn("quarantining an unreadable representation failed; it stays COMMITTED: stream={} range={}"
                        + " generation={}", record.stream(), record.range(), record.generation(), error);
            } else {
                LOG.error("representation QUARANTINED, reads fall back to a lower generation: stream={} view={}"
                        + " range={} generation={} target={} evidence={} {}", record.stream(), record.view(),
                        record.range(), record.generation(), record.target(), evidence.code(), evidence.context());
                quarantined.incrementAndGet();
            }
            return null;
        });
    }

    /** Records this resolver has quarantined since it started. */
    public long quarantinedRecords() {
        return quarantined.get();
    }

    /** What this resolver has done since it started; any thread. */
    public ResolverStats stats() {
        return new ResolverStats(cacheHits.sum(), indexLookups.sum(), walBytes.sum(), objectBytes.sum(),
                repaired.sum(), provedTrimmed.sum(), incomplete.sum(), noEvidence.sum(), quarantined.get());
    }

    private void countRead(IndexRecord record, List<StreamEntry> entries) {
        long bytes = 0;
        for (int i = 0; i < entries.size(); i++) {
            bytes += entries.get(i).size();
        }
        (record.generation().isAppend() ? walBytes : objectBytes).add(bytes);
    }

    private void countRepair(GenerationZeroRepair.Outcome outcome) {
        if (outcome instanceof GenerationZeroRepair.Outcome.Repaired) {
            repaired.increment();
        } else if (outcome instanceof GenerationZeroRepair.Outcome.ProvedTrimmed) {
            provedTrimmed.increment();
        } else if (outcome instanceof GenerationZeroRepair.Outcome.Incomplete) {
            incomplete.increment();
        } else {
            noEvidence.increment();
        }
    }

    private IndexRecord cachedRecord(StreamId stream, ReadView view, long offset) {
        ConcurrentSkipListMap<Long, IndexRecord> m = cache.get(new CacheKey(stream, view));
        if (m == null) {
            return null;
        }
        Map.Entry<Long, IndexRecord> e = m.higherEntry(offset);
        return e != null && e.getValue().serves(offset) ? e.getValue() : null;
    }

    private void remember(IndexRecord record) {
        if (cached.incrementAndGet() > maxCachedRecords) {
            cache.clear();
            cached.set(1);
        }
        cache.computeIfAbsent(new CacheKey(record.stream(), record.view()), k -> new ConcurrentSkipListMap<>())
                .put(record.endOffset(), record);
    }

    private void forget(IndexRecord record) {
        ConcurrentSkipListMap<Long, IndexRecord> m = cache.get(new CacheKey(record.stream(), record.view()));
        if (m != null && m.remove(record.endOffset(), record)) {
            cached.decrementAndGet();
        }
    }

    /** Drops every cached resolution of {@code stream} (after its records changed state, e.g. a trim). */
    public void invalidate(StreamId stream) {
        for (ReadView v : ReadView.values()) {
            ConcurrentSkipListMap<Long, IndexRecord> m = cache.remove(new CacheKey(stream, v));
            if (m != null) {
                cached.addAndGet(-m.size());
            }
        }
    }
}
