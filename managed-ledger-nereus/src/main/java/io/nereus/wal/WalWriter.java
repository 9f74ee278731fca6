package io.nereus.wal;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.StreamCommitStore;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSliceStore;
import io.nereus.runtime.EngineRuntime;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.bookkeeper.client.BookKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The multi-stream write-ahead log of one storage instance: group-commits appends of all streams into WAL
 * batches, writes each batch as one BookKeeper entry of the current slice (a ledger, rolled over by size,
 * age or after a write failure), and commits acknowledged batches with
 * {@link io.nereus.metadata.StreamCommitStore#commit} transactions, strictly in batch order. An append's future completes only after that commit.
 *
 * <p>Cutting batches (group commit): an open batch is cut when its payload reaches {@link WalConfig#flushBytes},
 * at once when it gets its first entry while the WAL is idle, or while fewer than {@link WalConfig#flushBelowBatches}
 * batches are being written or committed and no commit runs (an idle WAL makes nobody wait; a few batches overlapping
 * while they wait for BookKeeper let an entry under light load wait for its own write and commit only, not for the
 * batch before it too), the moment that holds again if it filled meanwhile, and otherwise once {@link WalConfig#flushDelay} has passed since its first entry and no batch waits for
 * BookKeeper. So under light load an append is written at once, and under load a batch collects what arrives while
 * the batches before it are written and committed.
 *
 * <p>Commit coalescing: commits run one at a time. When a commit finishes and several later batches have been
 * acknowledged by BookKeeper meanwhile, the next commit takes the next batch together with the acknowledged
 * batches directly following it (consecutive, up to {@link WalConfig#maxCoalescedBatches} batches and
 * {@link WalConfig#maxCoalescedAppends} stream appends) into one transaction, a stream having one append per
 * batch it is in. A batch is never committed before an earlier one; a batch not yet acknowledged (or whose
 * write failed) ends the group.
 *
 * <p>Threads: appenders touch only the open batch ({@link OpenBatch}), under its own monitor and only for
 * short map and list updates (the pending queue, as in BookKeeper's pending-add queue); the appender that
 * fills a batch cuts it there and hands it to the owner thread. Everything after the open batch
 * ({@link WalPipeline}: sealed batches, slice, in-flight count, commit order, barriers) is owned by one thread,
 * {@code nereus-wal-writer-<writerId>} (an executor of the {@link EngineRuntime} the writer is given), which this
 * writer starts and which ends once the writer is closed and
 * every sealed batch has finished. On the owner, in sequence order: each section's CRC32C is computed once
 * (used in the encoded batch and again for the generation-0 record), each batch is encoded and handed to
 * BookKeeper, and commits are started; none of this holds a lock shared with appenders. The flush timer (on
 * the given scheduler), BookKeeper callbacks and finished commits hand their event to the owner. No lock is
 * held while a future is completed: committed, refused and unknown-outcome appends complete on the metadata
 * thread that finished the transaction; appends failed before their commit (write failed, abandoned) and
 * barriers complete on the owner thread; appends open at {@link #close} fail on the closing thread.
 *
 * <p>Failures, each a {@link NereusException} naming the stream (see {@link #append}): a failed BookKeeper write
 * fails every append of its batch (RETRIABLE_WRITE_FAILED); a refused stream is taken out of the commit (with its
 * appends of every coalesced batch) and the rest recommitted (the refused appends fail with the code of the
 * refusal: FENCED, NOT_WRITABLE, NOT_FOUND or RETRIABLE_COMMIT_FAILED); a failed commit fails the batch
 * (RETRIABLE_COMMIT_FAILED). Callers pass a liveness check with each append; a stream whose earlier append failed
 * answers false, and its later appends are dropped before their commit (RETRIABLE_ABANDONED) so that one stream's
 * failure never fails another stream's commit.
 *
 * <p>Slices ({@link WalSlices}), recorded in {@link WalSliceStore}: the writer takes a lease (a new incarnation)
 * before its first slice and renews it every third of {@link WalConfig#writerLease}; each slice is registered OPEN
 * under the lease after BookKeeper created its ledger and before any batch is written to it; every commit records
 * each stream's range in its slice (one write per stream and slice, in the commit's transaction); a retired slice is
 * sealed once BookKeeper has closed its ledger and all its batches have finished their commit. {@link #close}
 * seals the last slice, then releases the lease. The writer also runs {@link WalSliceRecovery} at start and every
 * {@link WalConfig#recoveryInterval}, sealing the slices of writers that are gone; it never touches the slices this
 * writer holds, nor those of a writer whose lease is renewed.
 */
public final class WalWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WalWriter.class);
    /** Custom ledger metadata naming a Nereus WAL slice and its writer. */
    public static final String LEDGER_METADATA_FORMAT = "nereus-wal-format";
    public static final String LEDGER_METADATA_WRITER = "nereus-wal-writer";
    /** Custom ledger metadata naming the writer's lease incarnation the slice was created under. */
    public static final String LEDGER_METADATA_INCARNATION = "nereus-wal-incarnation";

    private final WalConfig config;
    private final ScheduledExecutorService scheduler;
    private final OpenBatch openBatch;
    private final ExecutorService owner;
    /** Touched only by tasks on {@link #owner}, apart from its thread-safe {@code holds} and {@code incarnation}. */
    private final WalPipeline pipeline;
    private final WalSliceRecovery recovery;
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    private final ScheduledFuture<?> renewals;
    private final ScheduledFuture<?> recoveries;

    /** A writer whose owner is a thread of its own ({@link EngineRuntime#THREADS}); see the constructor below. */
    public WalWriter(BookKeeper bk, StreamCommitStore streams, WalSliceStore slices, WalConfig config, String writerId,
            ScheduledExecutorService scheduler, Clock clock, WalObserver observer) {
        this(bk, streams, slices, config, writerId, EngineRuntime.THREADS, scheduler, clock, observer);
    }

    /**
     * A writer appending as {@code writerId}; starts its owner thread (an executor of {@code runtime}), the lease
     * renewal and slice recovery (first run at once) on {@code scheduler}, which the caller owns; reports add and
     * commit latencies to {@code observer} ({@link WalObserver#NONE}: nowhere).
     */
    public WalWriter(BookKeeper bk, StreamCommitStore streams, WalSliceStore slices, WalConfig config, String writerId,
            EngineRuntime runtime, ScheduledExecutorService scheduler, Clock clock, WalObserver observer) {
        this(bk, streams, slices, config, writerId, runtime, scheduler, clock, observer, SliceMirrors.NONE);
    }

    /**
     * As {@link #WalWriter(BookKeeper, StreamCommitStore, WalSliceStore, WalConfig, String, EngineRuntime,
     * ScheduledExecutorService, Clock, WalObserver)}, mirroring its slices into {@code mirrors} (owned by the caller,
     * who closes it after this writer).
     */
    public WalWriter(BookKeeper bk, StreamCommitStore streams, WalSliceStore slices, WalConfig config, String writerId,
            EngineRuntime runtime, ScheduledExecutorService scheduler, Clock clock, WalObserver observer,
            SliceMirrors mirrors) {
        Objects.requireNonNull(bk, "bk");
        Objects.requireNonNull(mirrors, "mirrors");
        Objects.requireNonNull(observer, "observer");
        Objects.requireNonNull(streams, "streams");
        Objects.requireNonNull(slices, "slices");
        this.config = Objects.requireNonNull(config, "config");
        Objects.requireNonNull(writerId, "writerId");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        Objects.requireNonNull(clock, "clock");
        this.openBatch = new OpenBatch(config);
        this.owner = runtime.executor("nereus-wal-writer-" + writerId);
        this.pipeline = new WalPipeline(bk, new WalCommitter(streams, observer), slices, config, writerId, clock,
                openBatch, this::submit, () -> {
                    owner.shutdown();
                    terminated.complete(null);
                }, observer, mirrors);
        this.recovery = new WalSliceRecovery(bk, slices, config.password(), clock, pipeline);
        long renewMillis = Math.max(1, config.leaseRenewal().toMillis());
        this.renewals = scheduler.scheduleAtFixedRate(() -> {
            try {
                submit(pipeline::renewLease);
            } catch (RejectedExecutionException e) {
                // the writer has ended
            }
        }, renewMillis, renewMillis, TimeUnit.MILLISECONDS);
        this.recoveries = scheduler.scheduleWithFixedDelay(() -> recoverAbandonedSlices().whenComplete((r, t) -> {
            if (t != null) {
                LOG.warn("WAL slice recovery run failed", t);
            }
        }), 0, config.recoveryInterval().toNanos(), TimeUnit.NANOSECONDS);
        terminated.thenRun(() -> renewals.cancel(false));
    }

    /**
     * Takes the writer's lease and opens its first slice now, in the background, instead of at the first append
     * (which otherwise waits for both). Nothing happens when a slice is already open or being created; a failure is
     * logged, and the first append then tries again.
     */
    public void openFirstSlice() {
        try {
            submit(pipeline::openSlice);
        } catch (RejectedExecutionException e) {
            // the writer has ended
        }
    }

    /**
     * Runs slice recovery now (it also runs every {@link WalConfig#recoveryInterval}): seals the OPEN slices of
     * writers that are gone (see {@link WalSliceRecovery}).
     */
    public CompletableFuture<WalSliceRecovery.Report> recoverAbandonedSlices() {
        return recovery.runOnce();
    }

    /**
     * Appends {@code entries} of {@code stream} at {@code firstOffset}, to be committed with writer epoch
     * {@code epoch}. Appends of one stream must be submitted in offset order. {@code live} is asked just
     * before the commit; false drops the append.
     *
     * @return the stream's head after the commit that included the append; fails with
     *         {@link NereusException} naming the {@code stream}: RETRIABLE_WRITE_FAILED when the BookKeeper write
     *         failed, RETRIABLE_COMMIT_FAILED when the commit's outcome is unknown or it found the head elsewhere,
     *         RETRIABLE_ABANDONED when an earlier append of the stream failed, FENCED (with the epochs) or
     *         NOT_WRITABLE or NOT_FOUND when the commit refused the stream, CLOSED once the writer is closed. A
     *         refusal's {@code AppendOutcome} is in the context as {@code outcome}. The entries' payloads are
     *         lent (see {@link AppendEntry}): the WAL retains each one when it takes the append and releases it once
     *         the batch holding it has finished (committed, refused or failed) or the append is refused; the
     *         batch written to BookKeeper holds references of its own, which BookKeeper releases. (After
     *         {@link #halt} nothing is released, as nothing would be by a process that died.)
     */
    public CompletableFuture<StreamHead> append(StreamId stream, long epoch, long firstOffset, List<AppendEntry> entries,
            BooleanSupplier live) {
        CompletableFuture<StreamHead> done = new CompletableFuture<>();
        try {
            Objects.requireNonNull(stream, "stream");
            Objects.requireNonNull(live, "live");
            List<AppendEntry> copy = List.copyOf(entries);
            long bytes = 0;
            for (AppendEntry e : copy) {
                bytes += e.size();
            }
            if (copy.isEmpty() || bytes > config.maxBatchBytes()) {
                throw new IllegalArgumentException("an append needs 1 or more entries of at most "
                        + config.maxBatchBytes() + " bytes in all, got " + copy.size() + " entries of " + bytes);
            }
            if (firstOffset < 0) {
                throw new IllegalArgumentException("an append's first offset must be >= 0: " + firstOffset);
            }
            retainAll(copy); // the WAL's references, released once the batch has finished
            OpenBatch.Added added = openBatch.add(
                    new OpenBatch.Append(stream, epoch, firstOffset, copy, bytes, done, live));
            if (added.closed()) {
                copy.forEach(e -> e.payload().release());
                throw new NereusException(ErrorCode.CLOSED, Map.of("stream", stream));
            }
            if (added.timer() != OpenBatch.Added.NO_TIMER) {
                long number = added.timer();
                try {
                    submit(() -> {
                        if (pipeline.batchStarted(number)) {
                            scheduleFlush(number);
                        }
                    });
                } catch (RejectedExecutionException e) {
                    // the writer closed meanwhile; its owner took the open batch before it ended
                }
            }
            if (added.cut()) {
                try {
                    submit(pipeline::takeCuts);
                } catch (RejectedExecutionException e) {
                    // the writer closed meanwhile; its owner took the cut batch before it ended
                }
            }
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /** Retains every payload of {@code entries}, or none (when one fails, e.g. a payload already released). */
    private static void retainAll(List<AppendEntry> entries) {
        int retained = 0;
        try {
            for (AppendEntry e : entries) {
                e.payload().retain();
                retained++;
            }
        } catch (RuntimeException e) {
            for (int i = 0; i < retained; i++) {
                entries.get(i).payload().release();
            }
            throw e;
        }
    }

    /**
     * Seals the open batch and returns a future completing once every batch sealed so far has finished its
     * commit (successfully or not). A stream that saw a failure waits for it before re-reading its head.
     */
    public CompletableFuture<Void> barrier() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        long below = openBatch.cut();
        try {
            submit(() -> pipeline.barrier(below, done));
        } catch (RejectedExecutionException e) {
            done.complete(null); // the owner ended: every sealed batch has finished
        }
        return done;
    }

    /** What the group commit has done since the writer started; any thread. */
    public WalStats stats() {
        return pipeline.stats();
    }

    /** Whether this writer holds slice {@code sliceId}: created it and has not yet sealed or given it up. */
    public boolean holds(long sliceId) {
        return pipeline.holds(sliceId);
    }

    /**
     * Rolls the WAL over to a new slice now (the materializer's way to make recent data sealed): seals the open
     * batch; the future completes once every batch sealed so far has finished its commit and every slice of this
     * writer holding one is SEALED. A slice whose close or seal failed is left to slice recovery and the future
     * still completes (the caller sees the slice's state in the metadata). Never fails; after close it completes
     * once the writer has ended.
     */
    public CompletableFuture<Void> rollSlice() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        long below = openBatch.cut();
        try {
            submit(() -> pipeline.roll(below, done));
        } catch (RejectedExecutionException e) {
            done.complete(null);
        }
        return done;
    }

    /**
     * Future completing once every sealed batch not yet taken by a commit has finished its BookKeeper write
     * (acknowledged or failed), as seen by the owner thread. For tests that need batches acknowledged before a
     * held commit proceeds.
     */
    CompletableFuture<Void> written() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            submit(() -> pipeline.written(done));
        } catch (RejectedExecutionException e) {
            done.complete(null);
        }
        return done;
    }

    /**
     * Stops accepting appends and slice recovery; batches already sealed still complete. The last slice is closed
     * and sealed, then the lease released: see {@link #closeAsync}. Does not wait.
     */
    @Override
    public void close() {
        recoveries.cancel(false);
        for (PendingSection s : openBatch.close()) {
            s.releasePayloads();
            s.fail(new NereusException(ErrorCode.CLOSED, Map.of("stream", s.stream)));
        }
        try {
            submit(pipeline::close);
        } catch (RejectedExecutionException e) {
            // closed before and every sealed batch has finished
        }
    }

    /**
     * {@link #close}s the writer; the future completes once every sealed batch has finished, the slices are sealed
     * (a slice whose close or seal failed is left to slice recovery) and the lease is released. Never fails.
     */
    public CompletableFuture<Void> closeAsync() {
        close();
        return terminated.thenApply(ignored -> null);
    }

    /**
     * Stops the writer at once, as if its process died: no more BookKeeper or metadata work is started, nothing is
     * sealed, the lease is neither renewed nor released, and appends in flight may never complete. For fault tests.
     */
    void halt() {
        recoveries.cancel(false);
        renewals.cancel(false);
        owner.shutdownNow();
    }

    private void scheduleFlush(long number) {
        try {
            scheduler.schedule(() -> {
                try {
                    submit(() -> {
                        if (pipeline.flushOnDelay(number)) {
                            // batches are waiting for BookKeeper; keep filling this one and look again later
                            scheduleFlush(number);
                        }
                    });
                } catch (RejectedExecutionException e) {
                    // the writer has ended
                }
            }, config.flushDelay().toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            LOG.warn("WAL flush timer not scheduled, the scheduler is shut down");
        }
    }

    /** Runs {@code task} on the owner thread, after every task submitted before it. */
    private void submit(Runnable task) {
        owner.execute(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOG.error("WAL writer task failed", e);
            }
        });
    }
}
