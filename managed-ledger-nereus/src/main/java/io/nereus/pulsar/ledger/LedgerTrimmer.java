package io.nereus.pulsar.ledger;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.MetadataStore;
import io.nereus.pulsar.cursor.NereusManagedCursor;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a ledger's trim point past what every durable cursor has consumed, as far as the retention policy allows
 * (Pulsar's semantics: consumed data goes once it is older than the retention time or beyond the retention size;
 * a negative limit keeps it forever; with no durable cursor everything counts as consumed). Like Pulsar, which
 * deletes whole ledgers and never the one being written, data goes in segments: the trim point only moves to a
 * multiple of {@code managedLedgerMaxEntriesPerLedger}, so consumed data stays readable (by readers starting at
 * the earliest position, say) until a whole segment of it was consumed; the last entry is always kept. Runs are
 * serialized and coalesced: a request while one runs queues at most one more run.
 */
final class LedgerTrimmer {
    private static final Logger LOG = LoggerFactory.getLogger(LedgerTrimmer.class);

    private final NereusManagedLedger ledger;
    private final MetadataStore metadata;
    private final Clock clock;
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null);
    private CompletableFuture<Void> queued;

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
    synchronized CompletableFuture<Void> trimNow() {
        if (queued != null) {
            return queued;
        }
        CompletableFuture<Void> run = new CompletableFuture<>();
        CompletableFuture<Void> previous = last;
        queued = run;
        last = run;
        previous.handle((v, t) -> null).thenCompose(ignored -> {
            synchronized (this) {
                if (queued == run) {
                    queued = null;
                }
            }
            return runOnce();
        }).whenComplete((v, t) -> {
            if (t != null) {
                run.completeExceptionally(t);
            } else {
                run.complete(null);
            }
        });
        return run;
    }

    private CompletableFuture<Void> runOnce() {
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
        long segment = Math.max(1, ledger.getConfig().getMaxEntriesPerLedger());
        long candidate = Math.min(consumed, end - 1) / segment * segment;
        if (candidate <= first) {
            return CompletableFuture.completedFuture(null);
        }
        ManagedLedgerConfig config = ledger.getConfig();
        long retentionMillis = config.getRetentionTimeMillis();
        long retentionMb = config.getRetentionSizeInMB();
        if (retentionMillis < 0 || retentionMb < 0) {
            return CompletableFuture.completedFuture(null);
        }
        long bySize = candidate;
        if (retentionMb > 0) {
            double avg = Math.max(1.0, ledger.averageEntryBytes());
            long keepEntries = (long) Math.ceil(retentionMb * 1024.0 * 1024.0 / avg);
            bySize = Math.min(candidate, Math.max(first, end - keepEntries));
        }
        CompletableFuture<Long> byTime;
        if (retentionMillis == 0 || bySize >= candidate) {
            byTime = CompletableFuture.completedFuture(candidate);
        } else {
            long cutoff = clock.millis() - retentionMillis;
            byTime = EntrySearch.newestMatching(ledger, first, candidate, e -> {
                try {
                    return PublishTimes.of(e) < cutoff;
                } finally {
                    e.release();
                }
            })
                    .thenApply(found -> found.isPresent() ? found.getAsLong() + 1 : first);
        }
        long sizeBound = bySize;
        return byTime.thenCompose(timeBound -> {
            long target = Math.min(candidate, Math.max(sizeBound, timeBound));
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
        });
    }
}
