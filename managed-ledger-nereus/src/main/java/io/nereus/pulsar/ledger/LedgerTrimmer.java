package io.nereus.pulsar.ledger;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.MetadataStore;
import io.nereus.pulsar.cursor.NereusManagedCursor;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.LongUnaryOperator;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a ledger's trim point past what every durable cursor has consumed, as far as the retention policy allows,
 * by Pulsar's rule ({@code ManagedLedgerImpl.internalTrimLedgers}): consumed data goes when it is expired (older
 * than the retention time) or over the retention quota (the data after it still holds at least the retention
 * size); each limit decides on its own and a negative limit never asks for anything to go, so a time with size
 * {@code -1} trims by time only, a size with time {@code -1} by size only, and both {@code -1} keep everything; a
 * limit of 0 lets all consumed data go. With no durable cursor everything counts as consumed. A truncation
 * ({@link #truncateNow}) lets all consumed data go whatever the retention, as Pulsar's does.
 *
 * <p>Like Pulsar, which deletes whole ledgers and never the one being written, data goes in segments: the trim
 * point only moves to a multiple of {@code managedLedgerMaxEntriesPerLedger}, so consumed data stays readable (by
 * readers starting at the earliest position, say) until a whole segment of it was consumed and is expired or over
 * the quota; the last entry is always kept. A segment is expired when its newest entry was published more than
 * the retention time ago (Pulsar takes the time its ledger was closed), found by a binary search over the segments'
 * newest entries, which takes publish times to grow with the offset; its size is what {@link LedgerSizes} knows of
 * it.
 *
 * <p>Runs are serialized and coalesced: a request while one runs queues at most one more run (a truncation if any
 * request for it was queued). The trim itself is conditional on the ledger's writer epoch; a ledger that another
 * broker fenced trims nothing and becomes fenced.
 */
final class LedgerTrimmer {
    private static final Logger LOG = LoggerFactory.getLogger(LedgerTrimmer.class);
    private static final long MB = 1024 * 1024;

    private final NereusManagedLedger ledger;
    private final MetadataStore metadata;
    private final Clock clock;
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
    private CompletableFuture<Void> queued;
    private boolean queuedTruncates;

    LedgerTrimmer(NereusManagedLedger ledger, MetadataStore metadata, Clock clock) {
        this.ledger = ledger;
        this.metadata = metadata;
        this.clock = clock;
    }

    /** Requests a trim; failures are logged (the next request retries). */
    void trimSoon() {
        trimNow().exceptionally(t -> {
            LOG.warn("Trim failed ledger={}", ledger.getName(), t);
            return null;
        });
    }

    /** Requests a trim and completes when a run that started after this call has finished. */
    CompletableFuture<Void> trimNow() {
        return request(false);
    }

    /**
     * Requests a trim of everything consumed, ignoring the retention policy (a truncation; the caller cleared the
     * cursors' backlog first), and completes when a run that started after this call has finished.
     */
    CompletableFuture<Void> truncateNow() {
        return request(true);
    }

    private synchronized CompletableFuture<Void> request(boolean truncate) {
        if (queued != null) {
            queuedTruncates |= truncate;
            return queued;
        }
        CompletableFuture<Void> run = new CompletableFuture<>();
        CompletableFuture<Void> previous = last;
        queued = run;
        queuedTruncates = truncate;
        last = run;
        previous.handle((v, t) -> null).thenCompose(ignored -> {
            boolean truncates;
            synchronized (this) {
                truncates = queuedTruncates;
                if (queued == run) {
                    queued = null;
                    queuedTruncates = false;
                }
            }
            return runOnce(truncates);
        }).whenComplete((v, t) -> {
            if (t != null) {
                run.completeExceptionally(t);
            } else {
                run.complete(null);
            }
        });
        return run;
    }

    private CompletableFuture<Void> runOnce(boolean truncate) {
        LedgerState s = ledger.state();
        if (s != LedgerState.OPEN && s != LedgerState.TERMINATED) {
            return CompletableFuture.completedFuture(null);
        }
        long end = ledger.committedEnd();
        long first = ledger.trimOffset();
        long consumed = end;
        for (NereusManagedCursor c : ledger.nereusCursors()) {
            if (c.isDurable()) {
                consumed = Math.min(consumed, c.persistedMarkDeleteEnd());
            }
        }
        ManagedLedgerConfig config = ledger.getConfig();
        long segment = Math.max(1, config.getMaxEntriesPerLedger());
        long candidate = floorToSegment(Math.min(consumed, end - 1), segment);
        if (candidate <= first) {
            return CompletableFuture.completedFuture(null);
        }
        if (truncate) {
            return trimTo(candidate);
        }
        long retentionMillis = config.getRetentionTimeMillis();
        long retentionMb = config.getRetentionSizeInMB();
        if (retentionMillis < 0 && retentionMb < 0) {
            return CompletableFuture.completedFuture(null);
        }
        long bySize = retentionMb < 0 ? first
                : sizeBound(first, candidate, segment, saturatedBytes(retentionMb), ledger::storedBytesFrom);
        if (bySize >= candidate || retentionMillis == 0) {
            return trimTo(candidate);
        }
        if (retentionMillis < 0) {
            return trimTo(bySize);
        }
        // what is over the quota goes anyway: the time decides above it
        return timeBound(bySize, candidate, segment, clock.millis() - retentionMillis).thenCompose(this::trimTo);
    }

    /**
     * The highest segment boundary in {@code (first, candidate]} whose segment is expired (its newest entry, just
     * before the boundary, was published before {@code cutoff}); {@code first} when there is none. Needs
     * {@code first < candidate} and {@code candidate} a boundary. A binary search over the segments (publish times
     * growing with the offset), one entry read per step, after a first read of the lowest segment's newest entry:
     * usually nothing expired since the last run, and that one read decides.
     */
    private CompletableFuture<Long> timeBound(long first, long candidate, long segment, long cutoff) {
        long lowest = first / segment + 1;
        long highest = candidate / segment;
        return expired(lowest * segment - 1, cutoff).thenCompose(expired -> expired
                ? newestExpired(lowest + 1, highest, lowest, segment, cutoff)
                : CompletableFuture.completedFuture(first));
    }

    private CompletableFuture<Long> newestExpired(long lo, long hi, long best, long segment, long cutoff) {
        if (lo > hi) {
            return CompletableFuture.completedFuture(best * segment);
        }
        long k = lo + (hi - lo) / 2;
        return expired(k * segment - 1, cutoff).thenCompose(expired -> expired
                ? newestExpired(k + 1, hi, k, segment, cutoff)
                : newestExpired(lo, k - 1, best, segment, cutoff));
    }

    private CompletableFuture<Boolean> expired(long offset, long cutoff) {
        return ledger.readOne(offset).thenApply(e -> {
            try {
                return PublishTimes.of(e) < cutoff;
            } finally {
                e.release();
            }
        });
    }

    /**
     * The highest segment boundary in {@code (first, candidate]} whose data from there on still holds at least
     * {@code retentionBytes} (every segment before it is over the quota, Pulsar's {@code totalSize - sizeToDelete >=
     * retentionSize}); {@code first} when there is none. {@code bytesFrom} gives the stored bytes from an offset to
     * the end and does not grow with the offset.
     */
    static long sizeBound(long first, long candidate, long segment, long retentionBytes, LongUnaryOperator bytesFrom) {
        long lo = first / segment + 1;
        long hi = candidate / segment;
        long best = first;
        while (lo <= hi) {
            long k = lo + (hi - lo) / 2;
            if (bytesFrom.applyAsLong(k * segment) >= retentionBytes) {
                best = k * segment;
                lo = k + 1;
            } else {
                hi = k - 1;
            }
        }
        return best;
    }

    static long floorToSegment(long offset, long segment) {
        return offset / segment * segment;
    }

    private static long saturatedBytes(long mb) {
        return mb > Long.MAX_VALUE / MB ? Long.MAX_VALUE : mb * MB;
    }

    private CompletableFuture<Void> trimTo(long target) {
        if (target <= ledger.trimOffset()) {
            return CompletableFuture.completedFuture(null);
        }
        // Readers stop below the target before the trim commits, so no reader is served an offset the
        // stream has trimmed (the ledger's reads trust its own first offset); a failed trim gives them back,
        // except a refusal because a newer writer holds the stream: that writer may have trimmed further, and
        // a refusal after the first of the trim's transactions leaves the head moved.
        long before = ledger.trimOffset();
        ledger.trimming(target);
        return metadata.streams().trim(ledger.streamId(), target, ledger.writerEpoch()).handle((head, t) -> {
            if (t != null) {
                if (Failures.unwrap(t) instanceof NereusException e && e.code() == ErrorCode.FENCED) {
                    ledger.fencedByNewerWriter();
                } else {
                    ledger.trimFailed(target, before);
                }
                throw new CompletionException(t);
            }
            ledger.trimmed(head.trimOffset());
            LOG.debug("Trimmed ledger={} stream={} trimOffset={}", ledger.getName(), ledger.streamId(),
                    head.trimOffset());
            return null;
        });
    }
}
