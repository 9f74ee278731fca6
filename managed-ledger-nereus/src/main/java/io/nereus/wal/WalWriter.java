package io.nereus.wal;

import io.nereus.metadata.AppendOutcome;
import io.nereus.metadata.CommitResult;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.StreamAppend;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalTarget;
import io.nereus.wal.WalAppendException.Kind;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The multi-stream write-ahead log of one storage instance: group-commits appends of all streams into WAL
 * batches, writes each batch as one BookKeeper entry of the current slice (a ledger, rolled over by size,
 * age or after a write failure), and commits acknowledged batches with
 * {@link io.nereus.metadata.StreamCommitStore#commit} transactions, strictly in batch order. An append's
 * future completes only after that commit.
 *
 * <p>Commit coalescing: commits run one at a time. When a commit finishes and several later batches have been
 * acknowledged by BookKeeper meanwhile, the next commit takes the next batch together with the acknowledged
 * batches directly following it (consecutive, up to {@link WalConfig#maxCoalescedBatches} batches and
 * {@link WalConfig#maxCoalescedAppends} stream appends) into one transaction, a stream having one append per
 * batch it is in. A batch is never committed before an earlier one; a batch not yet acknowledged (or whose
 * write failed) ends the group.
 *
 * <p>Threads: the open batch, the ready queue and the slice are guarded by this object's monitor; no future
 * is completed while holding it. BookKeeper callbacks only record results; commits run on the metadata
 * executor, one at a time, chained in sequence order.
 *
 * <p>Failures: a failed BookKeeper write fails every append of its batch ({@link Kind#WRITE_FAILED}); a
 * refused stream is taken out of the commit (with its appends of every coalesced batch) and the rest recommitted ({@link Kind#COMMIT_REJECTED}); a failed
 * commit fails the batch ({@link Kind#COMMIT_UNKNOWN}). Callers pass a liveness check with each append; a
 * stream whose earlier append failed answers false, and its later appends are dropped before their commit
 * ({@link Kind#ABANDONED}) so that one stream's failure never fails another stream's commit.
 */
public final class WalWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WalWriter.class);
    /** Custom ledger metadata naming a Nereus WAL slice and its writer. */
    public static final String LEDGER_METADATA_FORMAT = "nereus-wal-format";
    public static final String LEDGER_METADATA_WRITER = "nereus-wal-writer";

    private final BookKeeper bk;
    private final MetadataStore metadata;
    private final WalConfig config;
    private final String writerId;
    private final ScheduledExecutorService scheduler;
    private final Clock clock;

    // guarded by this
    private Map<StreamId, PendingSection> open = new LinkedHashMap<>();
    private long openBytes;
    private long openNumber;
    private long nextSequence;
    private final ArrayDeque<Batch> ready = new ArrayDeque<>();
    private int inFlight;
    private Slice slice;
    private boolean creatingSlice;
    private CompletableFuture<Void> commitTail = CompletableFuture.completedFuture(null);
    /** Sealed batches not yet taken by a commit, in sequence order. */
    private final ArrayDeque<Batch> uncommitted = new ArrayDeque<>();
    private boolean closed;

    public WalWriter(BookKeeper bk, MetadataStore metadata, WalConfig config, String writerId,
            ScheduledExecutorService scheduler, Clock clock) {
        this.bk = Objects.requireNonNull(bk, "bk");
        this.metadata = Objects.requireNonNull(metadata, "metadata");
        this.config = Objects.requireNonNull(config, "config");
        this.writerId = Objects.requireNonNull(writerId, "writerId");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Appends {@code entries} of {@code stream} at {@code firstOffset}, to be committed with writer epoch
     * {@code epoch}. Appends of one stream must be submitted in offset order. {@code live} is asked just
     * before the commit; false drops the append.
     *
     * @return the stream's head after the commit that included the append; fails with
     *         {@link WalAppendException}
     */
    public CompletableFuture<StreamHead> append(StreamId stream, long epoch, long firstOffset, List<WalEntry> entries,
            BooleanSupplier live) {
        CompletableFuture<StreamHead> done = new CompletableFuture<>();
        List<Runnable> after = new ArrayList<>();
        try {
            long bytes = 0;
            for (WalEntry e : entries) {
                bytes += e.payload().length;
            }
            if (entries.isEmpty() || bytes > config.maxBatchBytes()) {
                throw new IllegalArgumentException("an append needs 1 or more entries of at most "
                        + config.maxBatchBytes() + " bytes in all, got " + entries.size() + " entries of " + bytes);
            }
            synchronized (this) {
                if (closed) {
                    throw new WalAppendException(Kind.CLOSED, "WAL writer is closed", null);
                }
                PendingSection s = open.get(stream);
                if (s != null && (s.epoch != epoch || s.nextOffset != firstOffset)) {
                    sealLocked(after);
                    s = null;
                }
                if (openBytes + bytes > config.maxBatchBytes()) {
                    sealLocked(after);
                    s = null;
                }
                if (s == null) {
                    s = new PendingSection(stream, epoch, firstOffset);
                    open.put(stream, s);
                }
                s.add(entries, done, live);
                if (openBytes == 0 && open.size() == 1 && s.entries.size() == entries.size()) {
                    long number = openNumber;
                    scheduler.schedule(() -> flushOnDelay(number), config.flushDelay().toNanos(), TimeUnit.NANOSECONDS);
                }
                openBytes += bytes;
                if (openBytes >= config.flushBytes()) {
                    sealLocked(after);
                }
            }
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        after.forEach(Runnable::run);
        return done;
    }

    /**
     * Seals the open batch and returns a future completing once every batch sealed so far has finished its
     * commit (successfully or not). A stream that saw a failure waits for it before re-reading its head.
     */
    public CompletableFuture<Void> barrier() {
        List<Runnable> after = new ArrayList<>();
        CompletableFuture<Void> tail;
        synchronized (this) {
            sealLocked(after);
            tail = commitTail;
        }
        after.forEach(Runnable::run);
        return tail;
    }

    private void flushOnDelay(long number) {
        List<Runnable> after = new ArrayList<>();
        synchronized (this) {
            if (number == openNumber && ready.isEmpty()) {
                sealLocked(after);
            } else if (number == openNumber && !open.isEmpty()) {
                // batches are waiting for BookKeeper; keep filling this one and look again later
                scheduler.schedule(() -> flushOnDelay(number), config.flushDelay().toNanos(), TimeUnit.NANOSECONDS);
            }
        }
        after.forEach(Runnable::run);
    }

    private void sealLocked(List<Runnable> after) {
        if (open.isEmpty()) {
            return;
        }
        Batch batch = new Batch(nextSequence++, List.copyOf(open.values()));
        open = new LinkedHashMap<>();
        openBytes = 0;
        openNumber++;
        ready.add(batch);
        uncommitted.add(batch);
        commitTail = commitTail.thenCompose(ignored -> batch.added.handle((entryId, error) -> error)
                .thenCompose(error -> commitStep(batch, error))
                .exceptionally(t -> {
                    LOG.error("WAL batch commit step failed: sequence={}", batch.sequence, t);
                    batch.failAll(Kind.COMMIT_UNKNOWN, "commit step of the WAL batch failed", t);
                    return null;
                }));
        pumpLocked(after);
    }

    private void pumpLocked(List<Runnable> after) {
        while (!ready.isEmpty() && inFlight < config.maxInFlightBatches()) {
            Slice s = slice;
            if (s != null && (s.broken || s.bytes >= config.sliceMaxBytes()
                    || !clock.instant().isBefore(s.created.plus(config.sliceMaxAge())))) {
                retireSliceLocked(s, after);
                s = null;
            }
            if (s == null) {
                createSliceLocked();
                return;
            }
            Batch batch = ready.poll();
            byte[] data = WalBatchCodec.encode(batch.toWalBatch(s.ledger.getId()));
            batch.sliceId = s.ledger.getId();
            s.bytes += data.length;
            s.pending++;
            inFlight++;
            Slice target = s;
            after.add(() -> target.ledger.asyncAddEntry(data, (rc, lh, entryId, ctx) -> added(target, batch, rc, entryId),
                    null));
        }
    }

    private void added(Slice s, Batch batch, int rc, long entryId) {
        List<Runnable> after = new ArrayList<>();
        synchronized (this) {
            inFlight--;
            s.pending--;
            if (rc != BKException.Code.OK) {
                s.broken = true;
            }
            if (s.retired && s.pending == 0) {
                after.add(() -> closeSlice(s));
            }
            pumpLocked(after);
        }
        if (rc == BKException.Code.OK) {
            batch.added.complete(entryId);
        } else {
            LOG.warn("WAL batch write failed: slice={} sequence={} rc={}", s.ledger.getId(), batch.sequence, rc);
            batch.added.completeExceptionally(BKException.create(rc));
        }
        after.forEach(Runnable::run);
    }

    private void retireSliceLocked(Slice s, List<Runnable> after) {
        s.retired = true;
        slice = null;
        if (s.pending == 0) {
            after.add(() -> closeSlice(s));
        }
    }

    private void closeSlice(Slice s) {
        s.ledger.asyncClose((rc, lh, ctx) -> {
            if (rc != BKException.Code.OK) {
                LOG.warn("closing a WAL slice failed: slice={} rc={}", lh.getId(), rc);
            }
        }, null);
    }

    private void createSliceLocked() {
        if (creatingSlice) {
            return;
        }
        creatingSlice = true;
        Map<String, byte[]> custom = Map.of(
                LEDGER_METADATA_FORMAT, Short.toString(WalBatchCodec.VERSION).getBytes(StandardCharsets.UTF_8),
                LEDGER_METADATA_WRITER, writerId.getBytes(StandardCharsets.UTF_8));
        bk.asyncCreateLedger(config.ensembleSize(), config.writeQuorum(), config.ackQuorum(),
                BookKeeper.DigestType.CRC32C, config.password(), (rc, lh, ctx) -> sliceCreated(rc, lh), null, custom);
    }

    private void sliceCreated(int rc, LedgerHandle lh) {
        List<Runnable> after = new ArrayList<>();
        List<Batch> failed = new ArrayList<>();
        synchronized (this) {
            creatingSlice = false;
            if (rc == BKException.Code.OK) {
                LOG.info("WAL slice opened: slice={} writer={}", lh.getId(), writerId);
                if (closed) {
                    after.add(() -> lh.asyncClose((r, l, c) -> { }, null));
                } else {
                    slice = new Slice(lh, clock.instant());
                }
            } else {
                LOG.warn("creating a WAL slice failed: rc={}", rc);
                failed.addAll(ready);
                ready.clear();
            }
            pumpLocked(after);
        }
        for (Batch b : failed) {
            b.added.completeExceptionally(BKException.create(rc));
        }
        after.forEach(Runnable::run);
    }

    /**
     * {@code batch}'s turn to commit (every earlier batch has finished its commit): commits it together with
     * the acknowledged batches directly following it, or does nothing when an earlier commit already took it.
     */
    private CompletableFuture<Void> commitStep(Batch batch, Throwable writeError) {
        List<Batch> group = new ArrayList<>();
        synchronized (this) {
            if (batch.taken) {
                return CompletableFuture.completedFuture(null);
            }
            uncommitted.remove(batch);
            batch.taken = true;
            group.add(batch);
            int appends = batch.sections.size();
            while (writeError == null && group.size() < config.maxCoalescedBatches()) {
                Batch next = uncommitted.peek();
                if (next == null || !next.added.isDone() || next.added.isCompletedExceptionally()
                        || appends + next.sections.size() > config.maxCoalescedAppends()) {
                    break;
                }
                uncommitted.poll();
                next.taken = true;
                group.add(next);
                appends += next.sections.size();
            }
        }
        if (writeError != null) {
            batch.failAll(Kind.WRITE_FAILED, "WAL batch write to BookKeeper failed", writeError);
            return CompletableFuture.completedFuture(null);
        }
        if (group.size() > 1 && LOG.isDebugEnabled()) {
            LOG.debug("coalescing WAL batch commits: firstSequence={} batches={}", batch.sequence, group.size());
        }
        return commitGroup(group).exceptionally(t -> {
            LOG.error("coalesced WAL batch commit step failed: firstSequence={}", batch.sequence, t);
            group.forEach(b -> b.failAll(Kind.COMMIT_UNKNOWN, "commit step of the WAL batch failed", t));
            return null;
        });
    }

    /** Commits the acknowledged batches of {@code group}, in order, in one transaction (refusals aside). */
    private CompletableFuture<Void> commitGroup(List<Batch> group) {
        List<PendingSection> live = new ArrayList<>();
        List<StreamAppend> appends = new ArrayList<>();
        Set<StreamId> dropped = new HashSet<>();
        for (Batch batch : group) {
            long entryId = batch.added.join();
            for (int i = 0; i < batch.sections.size(); i++) {
                PendingSection s = batch.sections.get(i);
                // a stream's later appends cannot commit without its earlier ones: they would not chain
                if (dropped.contains(s.stream) || !s.live()) {
                    dropped.add(s.stream);
                    s.fail(new WalAppendException(Kind.ABANDONED, "an earlier append of " + s.stream + " failed",
                            null));
                    continue;
                }
                WalSection ws = s.toWalSection();
                live.add(s);
                appends.add(new StreamAppend(s.stream, s.epoch, ws.range(), new WalTarget(batch.sliceId, entryId, i),
                        ws.checksum(), s.entries.size(), ws.payloadBytes()));
            }
        }
        return commitLoop(live, appends);
    }

    /**
     * Future completing once every sealed batch not yet taken by a commit has finished its BookKeeper write
     * (acknowledged or failed). For tests that need batches acknowledged before a held commit proceeds.
     */
    CompletableFuture<Void> written() {
        List<CompletableFuture<Void>> adds = new ArrayList<>();
        synchronized (this) {
            for (Batch b : uncommitted) {
                adds.add(b.added.handle((entryId, error) -> null));
            }
        }
        return CompletableFuture.allOf(adds.toArray(new CompletableFuture<?>[0]));
    }

    private CompletableFuture<Void> commitLoop(List<PendingSection> sections, List<StreamAppend> appends) {
        if (appends.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return metadata.streams().commit(appends).handle((result, error) -> {
            if (error != null) {
                LOG.warn("WAL batch commit failed, outcome unknown: appends={}", appends.size(), error);
                for (PendingSection s : sections) {
                    s.fail(new WalAppendException(Kind.COMMIT_UNKNOWN, "commit of the WAL batch failed", error));
                }
                return CompletableFuture.<Void>completedFuture(null);
            }
            if (result instanceof CommitResult.Committed c) {
                for (int i = 0; i < sections.size(); i++) {
                    sections.get(i).complete(c.heads().get(i));
                }
                return CompletableFuture.<Void>completedFuture(null);
            }
            StreamId refused;
            AppendOutcome outcome;
            if (result instanceof CommitResult.Rejected r) {
                refused = r.append().stream();
                outcome = r.outcome();
            } else {
                refused = ((CommitResult.UnknownStream) result).stream();
                outcome = null;
            }
            List<PendingSection> rest = new ArrayList<>();
            List<StreamAppend> restAppends = new ArrayList<>();
            for (int i = 0; i < sections.size(); i++) {
                if (sections.get(i).stream.equals(refused)) {
                    sections.get(i).fail(new WalAppendException(Kind.COMMIT_REJECTED, outcome,
                            "commit refused the append of " + refused + ": " + outcome, null));
                } else {
                    rest.add(sections.get(i));
                    restAppends.add(appends.get(i));
                }
            }
            return commitLoop(rest, restAppends);
        }).thenCompose(f -> f);
    }

    /** Stops accepting appends; batches already sealed still complete. Slices are closed. */
    @Override
    public void close() {
        List<Runnable> after = new ArrayList<>();
        List<PendingSection> dropped;
        synchronized (this) {
            closed = true;
            dropped = new ArrayList<>(open.values());
            open = new LinkedHashMap<>();
            if (slice != null) {
                retireSliceLocked(slice, after);
            }
        }
        for (PendingSection s : dropped) {
            s.fail(new WalAppendException(Kind.CLOSED, "WAL writer closed", null));
        }
        after.forEach(Runnable::run);
    }

    /** One stream's appends in the open or a sealed batch. */
    private static final class PendingSection {
        final StreamId stream;
        final long epoch;
        final long firstOffset;
        long nextOffset;
        final List<WalEntry> entries = new ArrayList<>();
        final List<CompletableFuture<StreamHead>> waiters = new ArrayList<>();
        final List<BooleanSupplier> liveness = new ArrayList<>();

        PendingSection(StreamId stream, long epoch, long firstOffset) {
            this.stream = stream;
            this.epoch = epoch;
            this.firstOffset = firstOffset;
            this.nextOffset = firstOffset;
        }

        void add(List<WalEntry> more, CompletableFuture<StreamHead> waiter, BooleanSupplier live) {
            for (WalEntry e : more) {
                entries.add(e);
                nextOffset = Math.addExact(nextOffset, e.recordCount());
            }
            waiters.add(waiter);
            liveness.add(live);
        }

        boolean live() {
            for (BooleanSupplier l : liveness) {
                if (!l.getAsBoolean()) {
                    return false;
                }
            }
            return true;
        }

        WalSection toWalSection() {
            return WalSection.of(stream, firstOffset, entries);
        }

        void complete(StreamHead head) {
            waiters.forEach(w -> w.complete(head));
        }

        void fail(Throwable t) {
            waiters.forEach(w -> w.completeExceptionally(t));
        }
    }

    private static final class Batch {
        final long sequence;
        final List<PendingSection> sections;
        final CompletableFuture<Long> added = new CompletableFuture<>();
        volatile long sliceId;
        /** Taken by a commit (its own or a coalesced one); guarded by the writer. */
        boolean taken;

        Batch(long sequence, List<PendingSection> sections) {
            this.sequence = sequence;
            this.sections = sections;
        }

        WalBatch toWalBatch(long slice) {
            return new WalBatch(slice, sequence, sections.stream().map(PendingSection::toWalSection).toList());
        }

        void failAll(Kind kind, String message, Throwable cause) {
            sections.forEach(s -> s.fail(new WalAppendException(kind, message, cause)));
        }
    }

    private static final class Slice {
        final LedgerHandle ledger;
        final Instant created;
        long bytes;
        int pending;
        boolean broken;
        boolean retired;

        Slice(LedgerHandle ledger, Instant created) {
            this.ledger = ledger;
            this.created = created;
        }
    }
}
