package io.nereus.pulsar.cursor;

import io.nereus.pulsar.PulsarErrors;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.ScanOutcome;

/**
 * The reads a cursor makes over its host, none of which move the cursor: reads of several entries that skip acknowledged
 * entries, single-entry reads, the newest-matching binary search, scans and replays. Entries dropped here are
 * released here; entries returned belong to the caller. Stateless apart from the host and the acknowledgement
 * view, so safe from any thread.
 */
final class CursorReads {
    /** The cursor's acknowledgements as the reads need them; implementations are thread-safe. */
    interface Acks {
        boolean isDeleted(long offset);

        long nextUndeleted(long offset);

        /** The first offset at or after {@code offset} starting an individually deleted range; MAX_VALUE if none. */
        long nextDeletedStart(long offset);
    }

    /** Entries read and the offset a cursor continues from. */
    record EntriesRead(List<Entry> entries, long nextOffset) {
    }

    private final CursorHost host;
    private final Acks acks;
    private final Clock clock;

    CursorReads(CursorHost host, Acks acks, Clock clock) {
        this.host = host;
        this.acks = acks;
        this.clock = clock;
    }

    /**
     * Reads up to {@code maxEntries} unacknowledged entries in {@code [from, endExclusive)} and, beyond the
     * first, about {@code maxBytes} bytes (negative: no byte limit), skipping acknowledged ones. When a read
     * fails after entries were collected, those are returned (as Pulsar does).
     */
    CompletableFuture<EntriesRead> readUnacked(long from, long endExclusive, int maxEntries, long maxBytes) {
        return readUnacked(from, endExclusive, maxEntries, maxBytes, null);
    }

    /**
     * As {@link #readUnacked(long, long, int, long)}, also dropping (and releasing) entries whose position
     * {@code skip} matches; dropped entries do not count towards {@code maxEntries}.
     */
    CompletableFuture<EntriesRead> readUnacked(long from, long endExclusive, int maxEntries, long maxBytes,
            Predicate<Position> skip) {
        return readLoop(new UnackedRead(acks.nextUndeleted(from), endExclusive, maxEntries, maxBytes, skip));
    }

    /**
     * Reads run after run until {@code read} is finished. A host read that is already complete (a tail-cache
     * hit) is taken in this loop, so a read over many acknowledged holes neither recurses nor hops threads; only
     * a host read still in flight continues from its completion.
     */
    private CompletableFuture<EntriesRead> readLoop(UnackedRead read) {
        while (true) {
            EntriesRead finished = read.finished();
            if (finished != null) {
                return CompletableFuture.completedFuture(finished);
            }
            CompletableFuture<List<Entry>> run = host.read(read.from, read.count(), read.byteBudget());
            boolean inline = run.isDone();
            CompletableFuture<EntriesRead> step = run.handle(read::accept);
            if (!inline) {
                return step.thenCompose(b -> b != null ? CompletableFuture.completedFuture(b) : readLoop(read));
            }
            if (step.isCompletedExceptionally() || step.getNow(null) != null) {
                return step;
            }
        }
    }

    /**
     * One {@link #readUnacked} in progress: the entries collected so far and where the next run starts. Used by
     * one read at a time (runs are sequential).
     */
    private final class UnackedRead {
        private final List<Entry> got = new ArrayList<>();
        private final long end;
        private final int maxEntries;
        private final long maxBytes;
        private final Predicate<Position> skip;
        private long bytes;
        private long from;
        private long limit;

        UnackedRead(long from, long end, int maxEntries, long maxBytes, Predicate<Position> skip) {
            this.from = from;
            this.end = end;
            this.maxEntries = maxEntries;
            this.maxBytes = maxBytes;
            this.skip = skip;
        }

        /** What was read when nothing more is to be read, else null (the limit is taken anew each run). */
        EntriesRead finished() {
            limit = Math.min(end, host.committedEnd());
            boolean bytesLeft = maxBytes < 0 || got.isEmpty() || bytes < maxBytes;
            return got.size() >= maxEntries || from >= limit || !bytesLeft ? new EntriesRead(got, from) : null;
        }

        /** Entries of the next run: up to the next deleted range, so acknowledged entries are not fetched. */
        int count() {
            long runEnd = Math.min(limit, acks.nextDeletedStart(from));
            return (int) Math.min(maxEntries - got.size(), Math.max(1, runEnd - from));
        }

        long byteBudget() {
            return maxBytes < 0 ? Long.MAX_VALUE : Math.max(0, maxBytes - bytes);
        }

        /**
         * Takes one run's result: what was read when the read ends here, null when the next run follows. A failure
         * after entries were collected returns those (as Pulsar does); the host's failure is already mapped.
         */
        EntriesRead accept(List<Entry> entries, Throwable error) {
            if (error != null) {
                if (!got.isEmpty()) {
                    return new EntriesRead(got, from);
                }
                throw error instanceof CompletionException c ? c : new CompletionException(error);
            }
            if (entries.isEmpty()) {
                return new EntriesRead(got, from);
            }
            long last = from;
            for (Entry e : entries) {
                long offset = e.getEntryId();
                last = Math.max(last, offset);
                if (offset >= limit || acks.isDeleted(offset) || (skip != null && skip.test(e.getPosition()))) {
                    e.release();
                } else {
                    got.add(e);
                    bytes += e.getLength();
                }
            }
            from = acks.nextUndeleted(last + 1);
            return null;
        }
    }

    /** The entry at {@code offset}; fails when it is not readable. */
    CompletableFuture<Entry> readOne(long offset) {
        if (offset < 0 || offset >= host.committedEnd()) {
            return CompletableFuture.failedFuture(new ManagedLedgerException.InvalidCursorPositionException(
                    "no entry at offset " + offset + " of " + host.name() + " (committed end "
                            + host.committedEnd() + ")"));
        }
        return host.read(offset, 1, Long.MAX_VALUE).thenApply(entries -> {
            if (entries.isEmpty()) {
                throw new IllegalStateException("entry " + offset + " of " + host.name() + " read back empty");
            }
            for (int i = 1; i < entries.size(); i++) {
                entries.get(i).release();
            }
            return entries.get(0);
        });
    }

    /**
     * The newest offset in {@code [first, last]} whose entry matches {@code condition}, assuming matches form
     * a prefix (publish time / expiry order), found by binary search over single-entry reads; empty when the
     * first entry does not match (Pulsar returns null then, so TTL never expires a non-matching entry).
     */
    CompletableFuture<Long> findNewest(long first, long last, Predicate<Entry> condition) {
        if (last < first) {
            return CompletableFuture.completedFuture(null);
        }
        return test(first, condition).thenCompose(firstMatches -> {
            if (!firstMatches) {
                return CompletableFuture.completedFuture(null);
            }
            if (first == last) {
                return CompletableFuture.completedFuture(first);
            }
            return test(last, condition).thenCompose(lastMatches -> lastMatches
                    ? CompletableFuture.completedFuture(last)
                    : bisect(first, last, condition));
        });
    }

    /** {@code lo} matches, {@code hi} does not. */
    private CompletableFuture<Long> bisect(long lo, long hi, Predicate<Entry> condition) {
        if (hi - lo <= 1) {
            return CompletableFuture.completedFuture(lo);
        }
        long mid = lo + (hi - lo) / 2;
        return test(mid, condition).thenCompose(m -> m ? bisect(mid, hi, condition) : bisect(lo, mid, condition));
    }

    /** As in Pulsar's own search, the condition owns the entry it is given and releases it. */
    private CompletableFuture<Boolean> test(long offset, Predicate<Entry> condition) {
        return readOne(offset).thenApply(condition::test);
    }

    /**
     * Tests unacknowledged entries from {@code from} in batches of {@code batchSize} until one fails the
     * condition (USER_INTERRUPTED), {@code maxEntries} were tested or {@code timeoutMs} passed (ABORTED), or
     * the committed end is reached (COMPLETED).
     */
    CompletableFuture<ScanOutcome> scan(long from, Predicate<Entry> condition, int batchSize, long maxEntries,
            long timeoutMs) {
        if (batchSize <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("scan batch size must be > 0: "
                    + batchSize));
        }
        long deadline = clock.millis() + Math.max(0, timeoutMs);
        return scanLoop(from, condition, batchSize, maxEntries, deadline);
    }

    /** As {@link #readLoop}: entries already read are tested in this loop, without recursion. */
    private CompletableFuture<ScanOutcome> scanLoop(long from, Predicate<Entry> condition, int batchSize,
            long remaining, long deadline) {
        Scan scan = new Scan(from, condition, remaining);
        while (true) {
            if (scan.remaining <= 0 || clock.millis() > deadline) {
                return CompletableFuture.completedFuture(ScanOutcome.ABORTED);
            }
            long start = acks.nextUndeleted(scan.from);
            if (start >= host.committedEnd()) {
                return CompletableFuture.completedFuture(ScanOutcome.COMPLETED);
            }
            CompletableFuture<EntriesRead> read = readUnacked(start, Long.MAX_VALUE, batchSize, -1);
            boolean inline = read.isDone();
            CompletableFuture<ScanOutcome> step = read.thenApply(r -> scan.test(start, r));
            if (!inline) {
                return step.thenCompose(o -> o != null ? CompletableFuture.completedFuture(o)
                        : scanLoop(scan.from, condition, batchSize, scan.remaining, deadline));
            }
            if (step.isCompletedExceptionally() || step.getNow(null) != null) {
                return step;
            }
        }
    }

    /** One {@link #scan} in progress: where it continues and how many entries it may still test. */
    private static final class Scan {
        private final Predicate<Entry> condition;
        private long from;
        private long remaining;

        Scan(long from, Predicate<Entry> condition, long remaining) {
            this.from = from;
            this.condition = condition;
            this.remaining = remaining;
        }

        /** Tests the entries read from {@code start}: the outcome when the scan stops here, else null. */
        ScanOutcome test(long start, EntriesRead read) {
            ScanOutcome stop = null;
            try {
                for (Entry e : read.entries()) {
                    if (stop != null) {
                        break;
                    }
                    if (remaining-- <= 0) {
                        stop = ScanOutcome.ABORTED;
                    } else if (!condition.test(e)) {
                        stop = ScanOutcome.USER_INTERRUPTED;
                    }
                }
            } finally {
                read.entries().forEach(Entry::release);
            }
            if (stop != null) {
                return stop;
            }
            if (read.entries().isEmpty() || read.nextOffset() <= start) {
                return ScanOutcome.COMPLETED;
            }
            from = read.nextOffset();
            return null;
        }
    }

    /**
     * Reads the entries at {@code offsets} (each one entry); all or nothing: on a failure the entries read are
     * released. Sorted by position when {@code sort}.
     */
    CompletableFuture<List<Entry>> readEach(List<Long> offsets, boolean sort) {
        List<CompletableFuture<Entry>> reads = new ArrayList<>(offsets.size());
        for (long o : offsets) {
            reads.add(readOne(o));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).handle((ignored, error) -> {
            List<Entry> out = new ArrayList<>(reads.size());
            for (CompletableFuture<Entry> r : reads) {
                if (!r.isCompletedExceptionally()) {
                    out.add(r.getNow(null)); // all reads are complete here
                }
            }
            if (error != null) {
                out.forEach(Entry::release);
                throw new java.util.concurrent.CompletionException(PulsarErrors.map(error));
            }
            if (sort) {
                out.sort(Comparator.comparing(Entry::getPosition));
            }
            return out;
        });
    }

    /** The positions of {@code positions} the acknowledgements cover (replays skip them). */
    Set<Position> acknowledged(Set<? extends Position> positions) {
        Set<Position> done = new HashSet<>();
        for (Position p : positions) {
            if (p.getLedgerId() < host.ledgerId()
                    || (p.getLedgerId() == host.ledgerId() && acks.isDeleted(p.getEntryId()))) {
                done.add(p);
            }
        }
        return done;
    }
}
