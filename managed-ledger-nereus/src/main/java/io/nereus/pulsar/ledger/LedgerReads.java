package io.nereus.pulsar.ledger;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.pulsar.PulsarEntries;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import io.nereus.stream.ReadResult;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;

/**
 * The reads of one managed ledger over its stream: batches for cursors, single entries, and the backwards search
 * for the last dispatchable position. Results complete where the stream read completes (a tail-cache hit: at
 * once, on the caller's thread); whoever hands them to Pulsar delivers them on the ledger's executor, so a read
 * costs that one hop. Failures are mapped to {@link ManagedLedgerException} here, once. Stateless beyond the
 * ledger's published fields: safe from any thread.
 *
 * <p>The entries handed to Pulsar wrap the stream's payload buffers (retained slices of the tail cache's, the WAL
 * reader's or the object blocks' buffers: no copy, {@link PulsarEntries}); the caller owns them and releases each.
 */
final class LedgerReads {
    private final NereusManagedLedger ledger;
    private final NereusStream stream;
    private final NereusLedgerStats stats;

    LedgerReads(NereusManagedLedger ledger, NereusStream stream, NereusLedgerStats stats) {
        this.ledger = ledger;
        this.stream = stream;
        this.stats = stats;
    }

    /** Committed entries from {@code from}: at most {@code maxEntries}, beyond the first at most {@code maxBytes}. */
    CompletableFuture<List<Entry>> read(long from, int maxEntries, long maxBytes) {
        LedgerState s = ledger.state();
        if (s == LedgerState.DELETED) {
            return CompletableFuture.failedFuture(new ManagedLedgerException.ManagedLedgerNotFoundException(
                    "managed ledger " + ledger.name() + " was deleted"));
        }
        long end = ledger.committedEnd();
        if (from >= end) {
            return CompletableFuture.completedFuture(List.of());
        }
        int entries = Math.max(1, (int) Math.min(maxEntries, end - from));
        long byteLimit = Math.max(0, maxBytes);
        // As the stream's writer the ledger knows its readable range (it committed everything below its committed
        // end and is the only one that trims): no metadata read. A fenced ledger asks the head.
        CompletableFuture<ReadResult> read = s == LedgerState.OPEN || s == LedgerState.TERMINATED
                ? stream.read(ReadView.COMMITTED, from, entries, byteLimit, BoundaryMode.EXACT_START,
                        new OffsetRange(Math.min(ledger.trimOffset(), end), end))
                : stream.read(ReadView.COMMITTED, from, entries, byteLimit, BoundaryMode.EXACT_START);
        long ledgerId = ledger.ledgerId();
        return read.handle((r, t) -> {
            if (t != null) {
                stats.recordReadEntriesError();
                throw new CompletionException(PulsarErrors.map(t));
            }
            List<StreamEntry> got = r.entries();
            int n = 0;
            long bytes = 0;
            while (n < got.size() && got.get(n).range().start() < end) {
                bytes += got.get(n).size();
                n++;
            }
            StreamEntry.releaseAll(got.subList(n, got.size())); // not visible to this ledger yet
            List<Entry> out = PulsarEntries.takeAll(ledgerId, got.subList(0, n));
            stats.addReadEntriesSample(out.size(), bytes);
            return out;
        });
    }

    /** The entry at {@code offset}; fails NonRecoverableLedgerException when it reads back empty. */
    CompletableFuture<Entry> readOne(long offset) {
        return read(offset, 1, Long.MAX_VALUE).thenApply(l -> {
            if (l.isEmpty()) {
                throw new CompletionException(new ManagedLedgerException.NonRecoverableLedgerException(
                        "entry " + offset + " of " + ledger.name() + " could not be read"));
            }
            for (int i = 1; i < l.size(); i++) {
                l.get(i).release();
            }
            return l.get(0);
        });
    }

    /**
     * The newest position at or before {@code start} whose entry satisfies {@code predicate}, reading backwards one
     * entry at a time; a position outside the stored entries is returned as is (Pulsar's contract). Entries read at
     * once are tested in a loop, so a long backwards walk over cached entries does not recurse.
     */
    CompletableFuture<Position> newestAtOrBefore(Predicate<Entry> predicate, Position start) {
        Position at = start;
        while (true) {
            if (!ledger.isValidPosition(at)) {
                return CompletableFuture.completedFuture(at);
            }
            Position here = at;
            CompletableFuture<Entry> read = readOne(here.getEntryId());
            boolean inline = read.isDone();
            CompletableFuture<Boolean> matched = read.thenApply(e -> {
                try {
                    return predicate.test(e);
                } finally {
                    e.release();
                }
            });
            if (!inline) {
                return matched.thenCompose(m -> m ? CompletableFuture.completedFuture(here)
                        : newestAtOrBefore(predicate, ledger.getPreviousPosition(here)));
            }
            if (matched.isCompletedExceptionally()) {
                return matched.thenApply(m -> here);
            }
            if (matched.getNow(false)) {
                return CompletableFuture.completedFuture(here);
            }
            at = ledger.getPreviousPosition(here);
        }
    }
}
