package io.nereus.wal;

import io.nereus.error.ErrorCode;
import io.nereus.metadata.WalSliceStore;
import io.netty.buffer.ByteBuf;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.CompletionException;
import org.apache.bookkeeper.client.BookKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state of a {@link WalWriter} after the open batch: cut batches waiting for BookKeeper ({@code ready}) or
 * for their commit ({@code uncommitted}), the slices ({@link WalSlices}: created, registered, written, sealed) and
 * the writer's lease, the in-flight count, and the callers waiting for a barrier.
 *
 * <p>Confined to the writer's owner thread: every method runs there, called by the writer's tasks. It takes the
 * batches appenders cut from the {@link OpenBatch} in sequence order, computes each section's CRC32C once
 * ({@link SealedBatch}), encodes each batch and hands it to BookKeeper in sequence order, and starts the commits.
 * BookKeeper callbacks and commit completions hand their event back to the owner through {@code owner}. No lock
 * is held here except the open batch's, briefly, to take cut batches or to cut on the flush delay.
 */
final class WalPipeline implements WalSlices.Listener, WalSliceRecovery.LocalWriter {
    /** Logs under the writer's name, which operators already configure. */
    private static final Logger LOG = LoggerFactory.getLogger(WalWriter.class);

    private final WalConfig config;
    private final String writerId;
    private final OpenBatch openBatch;
    private final Executor owner;
    private final Runnable terminate;
    private final WalCommitter committer;
    private final WriterLease lease;
    private final WalSlices slices;

    /** Sealed batches not yet written to BookKeeper, in sequence order. */
    private final ArrayDeque<SealedBatch> ready = new ArrayDeque<>();
    /** Sealed batches not yet taken by a commit, in sequence order. */
    private final ArrayDeque<SealedBatch> uncommitted = new ArrayDeque<>();
    private int inFlight;
    private boolean committing;
    /** Sealed batches whose commit has not finished (waiting to be written, being written, waiting or committing). */
    private int unfinished;
    /** Counters read by {@link #stats()} from any thread; written by the owner only. */
    private volatile long batchesWritten;
    private volatile long bytesWritten;
    private volatile long entriesWritten;
    private volatile long commitGroups;
    private final WalObserver observer;
    /** Every batch with a lower sequence number has finished its commit (successfully or not). */
    private long finishedBelow;
    private final ArrayDeque<Barrier> barriers = new ArrayDeque<>();
    private boolean closed;
    private boolean releasingLease;

    private record Barrier(long sequence, CompletableFuture<Void> done) {
    }

    /**
     * {@code owner} runs a task on the owner thread (throwing {@link RejectedExecutionException} once it ended);
     * {@code terminate} ends the owner thread, called once the pipeline is closed and idle: every slice sealed (or
     * left to recovery) and the lease released.
     */
    WalPipeline(BookKeeper bk, WalCommitter committer, WalSliceStore sliceStore, WalConfig config, String writerId,
            Clock clock, OpenBatch openBatch, Executor owner, Runnable terminate, WalObserver observer,
            SliceMirrors mirrors) {
        this.committer = committer;
        this.observer = observer;
        this.config = config;
        this.writerId = writerId;
        this.openBatch = openBatch;
        this.owner = owner;
        this.terminate = terminate;
        this.lease = new WriterLease(sliceStore, writerId, config.writerLease(), this::onOwner);
        this.slices = new WalSlices(bk, sliceStore, lease, config, writerId, clock, this::onOwner, this, mirrors);
    }

    /** The writer's counters so far; any thread. */
    WalStats stats() {
        return new WalStats(batchesWritten, bytesWritten, entriesWritten, commitGroups, committer.transactions(),
                committer.committedAppends());
    }

    /** Whether this writer holds slice {@code sliceId} (see {@link WalSlices#holds}); any thread. */
    @Override
    public boolean holds(long sliceId) {
        return slices.holds(sliceId);
    }

    /** The incarnation of the lease held now, 0 when none; any thread. */
    @Override
    public long incarnation() {
        return lease.current();
    }

    /**
     * Renews the writer's lease (every third of its length), also while closing, until it is released; and rolls an
     * idle slice over once it is due (past its age), so a slice whose streams stopped writing is still sealed,
     * and its data materialized, within about its age plus a third of the lease.
     */
    void renewLease() {
        lease.renew();
        WalSlices.Slice s = slices.current();
        if (!closed && s != null && ready.isEmpty() && slices.due(s)) {
            slices.retire(s);
        }
    }

    /**
     * Creates the first slice ahead of the first append (unless one exists or is being created, or the writer is
     * closed), so that the first append pays one BookKeeper add and one commit, not also the lease, the ledger's
     * creation and its registration.
     */
    void openSlice() {
        if (!closed && slices.current() == null) {
            slices.create();
        }
    }

    /** Takes the batches cut from the open batch, in sequence order, and writes what the in-flight limit allows. */
    void takeCuts() {
        List<OpenBatch.Cut> cuts = openBatch.takeCuts();
        for (OpenBatch.Cut c : cuts) {
            SealedBatch batch = new SealedBatch(c.sequence(), c.sections());
            unfinished++;
            ready.add(batch);
            uncommitted.add(batch);
        }
        if (!cuts.isEmpty()) {
            pump();
        }
    }

    /**
     * The flush delay of open batch {@code number} passed: cuts it unless batches wait for BookKeeper. Returns
     * true when the timer should look again later (batches are waiting and the batch is still open).
     */
    boolean flushOnDelay(long number) {
        takeCuts();
        OpenBatch.Flush f = openBatch.flush(number, ready.isEmpty());
        if (f == OpenBatch.Flush.CUT) {
            takeCuts();
        }
        return f == OpenBatch.Flush.LOOK_AGAIN;
    }

    /**
     * Open batch {@code number} got its first entry: when there is {@link #roomToFlush room}, it is cut at once (a
     * drained pipeline: nobody would fill the batch while it waits; fewer than {@link WalConfig#flushBelowBatches}
     * batches unfinished and no commit running: batches overlap while they wait for BookKeeper, so under light load
     * an entry waits for its own write and commit, not also for the batch before it). Returns whether its flush delay must be scheduled (it was not cut).
     */
    boolean batchStarted(long number) {
        takeCuts();
        if (closed || !config.flushWhenIdle() || !roomToFlush()) {
            return true;
        }
        if (openBatch.flush(number, true) == OpenBatch.Flush.CUT) {
            takeCuts();
        }
        return false;
    }

    /**
     * The WAL is idle, or fewer than {@link WalConfig#flushBelowBatches} batches wait for BookKeeper or for a commit
     * and no commit is running: batches overlap while they wait for BookKeeper, whose write is most of a light load's
     * latency, and not while the metadata commits are what the WAL waits for (under load; there a batch cut early
     * would only add a BookKeeper entry and a commit). This is the group commit's trigger: the open batch filled
     * while the pipeline was busy is cut the moment this holds again.
     */
    private boolean roomToFlush() {
        return unfinished == 0 || (unfinished < config.flushBelowBatches() && !committing);
    }

    private void cutIfRoom() {
        if (!closed && config.flushWhenIdle() && roomToFlush()) {
            openBatch.cut();
            takeCuts();
        }
    }

    /** {@code done} completes once every batch below sequence {@code below} has finished its commit. */
    void barrier(long below, CompletableFuture<Void> done) {
        takeCuts();
        if (finishedBelow >= below) {
            done.complete(null);
        } else {
            barriers.add(new Barrier(below, done));
        }
    }

    /**
     * Rolls the slice over now: {@code done} completes once every batch below sequence {@code below} has finished
     * its commit and every slice holding one is sealed (or left to slice recovery).
     */
    void roll(long below, CompletableFuture<Void> done) {
        CompletableFuture<Void> committed = new CompletableFuture<>();
        barrier(below, committed);
        committed.whenComplete((ignored, error) -> onOwner(() -> slices.rollAndSettle(done)));
    }

    /** {@code done} completes once every sealed batch not yet taken by a commit has finished its write. */
    void written(CompletableFuture<Void> done) {
        takeCuts();
        CompletableFuture<?>[] adds = uncommitted.stream().map(b -> b.added.handle((entryId, error) -> null))
                .toArray(CompletableFuture<?>[]::new);
        CompletableFuture.allOf(adds).whenComplete((ignored, error) -> done.complete(null));
    }

    /**
     * The writer closed (its open batch is already closed and failed): sealed batches still complete. The slice
     * is retired once no sealed batch waits to be written (at once when none does).
     */
    void close() {
        closed = true;
        takeCuts();
        retireSliceIfClosedAndDrained();
        terminateIfIdle();
    }

    /** Writes ready batches while fewer than the limit are in flight, rolling the slice over when due. */
    private void pump() {
        while (!ready.isEmpty() && inFlight < config.maxInFlightBatches()) {
            WalSlices.Slice s = slices.current();
            if (s != null && slices.due(s)) {
                slices.retire(s);
                s = null;
            }
            if (s == null) {
                slices.create();
                return;
            }
            SealedBatch batch = ready.poll();
            ByteBuf data;
            try {
                data = batch.encode(s.id());
            } catch (RuntimeException e) {
                // e.g. no memory for the header: the batch fails like a failed write, and nothing waits on it
                LOG.warn("WAL batch encoding failed: slice={} sequence={}", s.id(), batch.sequence, e);
                batch.writeFailed(e);
                commitNext();
                continue;
            }
            int bytes = data.readableBytes();
            slices.bind(s, bytes);
            // copied before BookKeeper takes the buffer: the entry id it must get, -1 when not mirrored
            long mirrored = s.mirror == null ? -1 : s.mirror.append(data);
            inFlight++;
            WalSlices.Slice target = s;
            // a measurement, not logic: the add's latency for the observer
            long issued = System.nanoTime();
            target.ledger.appendAsync(data).whenComplete((entryId, error) -> onOwner(
                    () -> added(target, batch, bytes, System.nanoTime() - issued, entryId, error, mirrored)));
        }
        retireSliceIfClosedAndDrained();
    }

    private void retireSliceIfClosedAndDrained() {
        if (closed && ready.isEmpty() && slices.current() != null) {
            slices.retire(slices.current());
        }
    }

    private void added(WalSlices.Slice s, SealedBatch batch, int bytes, long nanos, Long entryId, Throwable error,
            long mirrored) {
        inFlight--;
        slices.added(s, error != null);
        if (error == null && mirrored >= 0) {
            s.mirror.acked(mirrored, entryId);
        }
        pump();
        if (error == null) {
            batchesWritten++;
            bytesWritten += bytes;
            entriesWritten += batch.entryCount();
            observer.batchWritten(bytes, nanos);
            batch.written(entryId);
        } else {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause()
                    : error;
            LOG.warn("WAL batch write failed: slice={} sequence={} rc={}", s.id(), batch.sequence,
                    WalLedgers.code(cause));
            batch.writeFailed(cause);
        }
        commitNext();
        cutIfRoom();
        terminateIfIdle();
    }

    @Override
    public void sliceReady() {
        pump();
        commitNext();
        terminateIfIdle();
    }

    @Override
    public void sliceFailed(Throwable error) {
        List<SealedBatch> failed = new ArrayList<>(ready);
        ready.clear();
        pump();
        for (SealedBatch b : failed) {
            b.writeFailed(error);
        }
        commitNext();
        terminateIfIdle();
    }

    @Override
    public void sliceSettled() {
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
                head.failAll(ErrorCode.RETRIABLE_WRITE_FAILED, head.writeError());
                finished(List.of(head));
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
            commitGroups++;
            CompletableFuture<Void> commit = committer.commit(group);
            if (commit.isDone()) {
                finished(group);
                continue;
            }
            committing = true;
            commit.whenComplete((ignored, error) -> onOwner(() -> {
                committing = false;
                finished(group);
                commitNext();
                cutIfRoom();
                terminateIfIdle();
            }));
        }
    }

    /** The batches of {@code group} (consecutive) and every batch before them have finished their commit. */
    private void finished(List<SealedBatch> group) {
        for (SealedBatch b : group) {
            unfinished--;
            b.releasePayloads();
            slices.finished(b.sliceId());
        }
        finishedBelow = group.get(group.size() - 1).sequence + 1;
        while (!barriers.isEmpty() && barriers.peek().sequence() <= finishedBelow) {
            barriers.poll().done().complete(null);
        }
    }

    /** Once closed and idle: releases the lease, then ends the owner thread. */
    private void terminateIfIdle() {
        if (!closed || releasingLease || !uncommitted.isEmpty() || committing || inFlight > 0 || !slices.idle()) {
            return;
        }
        releasingLease = true;
        lease.release().whenComplete((ignored, error) -> terminate.run());
    }

    /** Runs {@code task} on the owner thread; called from BookKeeper, timer and metadata threads. */
    private void onOwner(Runnable task) {
        try {
            owner.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.warn("WAL writer event after the writer ended: writer={}", writerId);
        }
    }

}
