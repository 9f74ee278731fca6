package io.nereus.wal;

import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.wal.WalAppendException.Kind;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of a {@link WalWriter}, from the open batch to the commit: the open batch, sealed batches waiting for
 * BookKeeper ({@code ready}) or for their commit ({@code uncommitted}), the current slice, the in-flight count,
 * and the callers waiting for a barrier.
 *
 * <p>Confined to the writer's owner thread: every method runs there, called by the writer's tasks; BookKeeper
 * callbacks, the flush timer and commit completions hand their event to the owner through {@code owner}. No
 * lock is taken; the encode of a batch and its BookKeeper submission run on the owner, in sequence order.
 */
final class WalPipeline {
    /** Logs under the writer's name, which operators already configure. */
    private static final Logger LOG = LoggerFactory.getLogger(WalWriter.class);

    /** One call of {@link WalWriter#append}, validated, on its way to the open batch. */
    record Append(StreamId stream, long epoch, long firstOffset, List<WalEntry> entries, long bytes,
            CompletableFuture<StreamHead> done, BooleanSupplier live) {
    }

    private final BookKeeper bk;
    private final WalConfig config;
    private final String writerId;
    private final ScheduledExecutorService scheduler;
    private final Clock clock;
    private final Executor owner;
    private final Runnable terminate;
    private final WalCommitter committer;

    private Map<StreamId, PendingSection> open = new LinkedHashMap<>();
    private long openBytes;
    private long openNumber;
    private long nextSequence;
    /** Sealed batches not yet written to BookKeeper, in sequence order. */
    private final ArrayDeque<SealedBatch> ready = new ArrayDeque<>();
    /** Sealed batches not yet taken by a commit, in sequence order. */
    private final ArrayDeque<SealedBatch> uncommitted = new ArrayDeque<>();
    private int inFlight;
    private Slice slice;
    private boolean creatingSlice;
    private boolean committing;
    /** Every batch with a lower sequence number has finished its commit (successfully or not). */
    private long finishedBelow;
    private final ArrayDeque<Barrier> barriers = new ArrayDeque<>();
    private boolean closed;

    private record Barrier(long sequence, CompletableFuture<Void> done) {
    }

    /**
     * {@code owner} runs a task on the owner thread (throwing {@link RejectedExecutionException} once it ended);
     * {@code terminate} ends the owner thread, called once the pipeline is closed and idle.
     */
    WalPipeline(BookKeeper bk, WalCommitter committer, WalConfig config, String writerId,
            ScheduledExecutorService scheduler, Clock clock, Executor owner, Runnable terminate) {
        this.bk = bk;
        this.committer = committer;
        this.config = config;
        this.writerId = writerId;
        this.scheduler = scheduler;
        this.clock = clock;
        this.owner = owner;
        this.terminate = terminate;
    }

    void accept(Append a) {
        if (closed) {
            a.done().completeExceptionally(new WalAppendException(Kind.CLOSED, "WAL writer is closed", null));
            return;
        }
        PendingSection s = open.get(a.stream());
        if (s != null && (s.epoch != a.epoch() || s.nextOffset != a.firstOffset())) {
            seal();
            s = null;
        }
        if (openBytes + a.bytes() > config.maxBatchBytes()) {
            seal();
            s = null;
        }
        if (s == null) {
            s = new PendingSection(a.stream(), a.epoch(), a.firstOffset());
            open.put(a.stream(), s);
        }
        s.add(a.entries(), a.done(), a.live());
        if (openBytes == 0 && open.size() == 1 && s.entries.size() == a.entries().size()) {
            scheduleFlush(openNumber);
        }
        openBytes += a.bytes();
        if (openBytes >= config.flushBytes()) {
            seal();
        }
    }

    /** Seals the open batch; {@code done} completes once every batch sealed so far has finished its commit. */
    void barrier(CompletableFuture<Void> done) {
        seal();
        if (finishedBelow >= nextSequence) {
            done.complete(null);
        } else {
            barriers.add(new Barrier(nextSequence, done));
        }
    }

    /** {@code done} completes once every sealed batch not yet taken by a commit has finished its write. */
    void written(CompletableFuture<Void> done) {
        CompletableFuture<?>[] adds = uncommitted.stream().map(b -> b.added.handle((entryId, error) -> null))
                .toArray(CompletableFuture<?>[]::new);
        CompletableFuture.allOf(adds).whenComplete((ignored, error) -> done.complete(null));
    }

    /**
     * Stops accepting appends and fails the open ones; sealed batches still complete. The slice is retired once
     * no sealed batch waits to be written (at once when none does).
     */
    void close() {
        closed = true;
        List<PendingSection> dropped = new ArrayList<>(open.values());
        open = new LinkedHashMap<>();
        retireSliceIfClosedAndDrained();
        for (PendingSection s : dropped) {
            s.fail(new WalAppendException(Kind.CLOSED, "WAL writer closed", null));
        }
        terminateIfIdle();
    }

    private void scheduleFlush(long number) {
        try {
            scheduler.schedule(() -> onOwner(() -> flushOnDelay(number)), config.flushDelay().toNanos(),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            LOG.warn("WAL flush timer not scheduled, the scheduler is shut down: writer={}", writerId);
        }
    }

    private void flushOnDelay(long number) {
        if (number == openNumber && ready.isEmpty()) {
            seal();
        } else if (number == openNumber && !open.isEmpty()) {
            // batches are waiting for BookKeeper; keep filling this one and look again later
            scheduleFlush(number);
        }
    }

    private void seal() {
        if (open.isEmpty()) {
            return;
        }
        SealedBatch batch = new SealedBatch(nextSequence, List.copyOf(open.values()));
        nextSequence++;
        open = new LinkedHashMap<>();
        openBytes = 0;
        openNumber++;
        ready.add(batch);
        uncommitted.add(batch);
        pump();
    }

    /** Writes ready batches while fewer than the limit are in flight, rolling the slice over when due. */
    private void pump() {
        while (!ready.isEmpty() && inFlight < config.maxInFlightBatches()) {
            Slice s = slice;
            if (s != null && (s.broken || s.bytes >= config.sliceMaxBytes()
                    || !clock.instant().isBefore(s.created.plus(config.sliceMaxAge())))) {
                retireSlice(s);
                s = null;
            }
            if (s == null) {
                createSlice();
                return;
            }
            SealedBatch batch = ready.poll();
            byte[] data = batch.encode(s.ledger.getId());
            s.bytes += data.length;
            s.pending++;
            inFlight++;
            Slice target = s;
            target.ledger.asyncAddEntry(data,
                    (rc, lh, entryId, ctx) -> onOwner(() -> added(target, batch, rc, entryId)), null);
        }
        retireSliceIfClosedAndDrained();
    }

    private void retireSliceIfClosedAndDrained() {
        if (closed && ready.isEmpty() && slice != null) {
            retireSlice(slice);
        }
    }

    private void added(Slice s, SealedBatch batch, int rc, long entryId) {
        inFlight--;
        s.pending--;
        if (rc != BKException.Code.OK) {
            s.broken = true;
        }
        if (s.retired && s.pending == 0) {
            closeSlice(s);
        }
        pump();
        if (rc == BKException.Code.OK) {
            batch.written(entryId);
        } else {
            LOG.warn("WAL batch write failed: slice={} sequence={} rc={}", s.ledger.getId(), batch.sequence, rc);
            batch.writeFailed(BKException.create(rc));
        }
        commitNext();
        terminateIfIdle();
    }

    private void retireSlice(Slice s) {
        s.retired = true;
        slice = null;
        if (s.pending == 0) {
            closeSlice(s);
        }
    }

    private void closeSlice(Slice s) {
        s.ledger.asyncClose((rc, lh, ctx) -> {
            if (rc != BKException.Code.OK) {
                LOG.warn("closing a WAL slice failed: slice={} rc={}", lh.getId(), rc);
            }
        }, null);
    }

    private void createSlice() {
        if (creatingSlice) {
            return;
        }
        creatingSlice = true;
        Map<String, byte[]> custom = Map.of(
                WalWriter.LEDGER_METADATA_FORMAT, Short.toString(WalBatchCodec.VERSION).getBytes(StandardCharsets.UTF_8),
                WalWriter.LEDGER_METADATA_WRITER, writerId.getBytes(StandardCharsets.UTF_8));
        bk.asyncCreateLedger(config.ensembleSize(), config.writeQuorum(), config.ackQuorum(),
                BookKeeper.DigestType.CRC32C, config.password(),
                (rc, lh, ctx) -> onOwner(() -> sliceCreated(rc, lh)), null, custom);
    }

    private void sliceCreated(int rc, LedgerHandle lh) {
        List<SealedBatch> failed = new ArrayList<>();
        creatingSlice = false;
        if (rc == BKException.Code.OK) {
            LOG.info("WAL slice opened: slice={} writer={}", lh.getId(), writerId);
            if (closed && ready.isEmpty()) {
                lh.asyncClose((r, l, c) -> { }, null);
            } else {
                slice = new Slice(lh, clock.instant());
            }
        } else {
            LOG.warn("creating a WAL slice failed: rc={}", rc);
            failed.addAll(ready);
            ready.clear();
        }
        pump();
        for (SealedBatch b : failed) {
            b.writeFailed(BKException.create(rc));
        }
        commitNext();
        terminateIfIdle();
    }

    /**
     * Starts the next commit unless one is running: the oldest uncommitted batch, once written, together with
     * the acknowledged batches directly following it (within the coalescing limits). A batch whose write failed
     * fails its appends when its turn comes and ends any group before it.
     */
    private void commitNext() {
        while (!committing) {
            SealedBatch head = uncommitted.peek();
            if (head == null || !head.writeDone()) {
                return;
            }
            uncommitted.poll();
            if (head.writeError() != null) {
                head.failAll(Kind.WRITE_FAILED, "WAL batch write to BookKeeper failed", head.writeError());
                finished(head);
                continue;
            }
            List<SealedBatch> group = new ArrayList<>();
            group.add(head);
            int appends = head.sections.size();
            while (group.size() < config.maxCoalescedBatches()) {
                SealedBatch next = uncommitted.peek();
                if (next == null || !next.writeDone() || next.writeError() != null
                        || appends + next.sections.size() > config.maxCoalescedAppends()) {
                    break;
                }
                uncommitted.poll();
                group.add(next);
                appends += next.sections.size();
            }
            if (group.size() > 1 && LOG.isDebugEnabled()) {
                LOG.debug("coalescing WAL batch commits: firstSequence={} batches={}", head.sequence, group.size());
            }
            SealedBatch last = group.get(group.size() - 1);
            CompletableFuture<Void> commit = committer.commit(group);
            if (commit.isDone()) {
                finished(last);
                continue;
            }
            committing = true;
            commit.whenComplete((ignored, error) -> onOwner(() -> {
                committing = false;
                finished(last);
                commitNext();
                terminateIfIdle();
            }));
        }
    }

    /** {@code batch} and every batch before it have finished their commit. */
    private void finished(SealedBatch batch) {
        finishedBelow = batch.sequence + 1;
        while (!barriers.isEmpty() && barriers.peek().sequence() <= finishedBelow) {
            barriers.poll().done().complete(null);
        }
    }

    private void terminateIfIdle() {
        if (closed && uncommitted.isEmpty() && !committing && !creatingSlice && inFlight == 0) {
            terminate.run();
        }
    }

    /** Runs {@code task} on the owner thread; called from BookKeeper, timer and metadata threads. */
    private void onOwner(Runnable task) {
        try {
            owner.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.warn("WAL writer event after the writer ended: writer={}", writerId);
        }
    }

    /** The current or a retired slice; {@code pending}: its batches written but not yet acknowledged. */
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
