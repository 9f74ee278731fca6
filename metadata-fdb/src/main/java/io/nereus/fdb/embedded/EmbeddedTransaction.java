package io.nereus.fdb.embedded;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyArrayResult;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.TransactionOptions;
import com.apple.foundationdb.async.AsyncIterable;
import io.nereus.fdb.FdbErrors;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One EmbeddedFdb transaction: a read version taken lazily, reads merged with its own writes, the conflict
 * ranges FoundationDB would record, and a commit through the engine's resolver.
 *
 * <p>This class is the {@link Transaction} facade: it checks that the transaction is open and usable, takes
 * the monitor, and delegates. The work is done by
 * <ul>
 *   <li>{@link TransactionReads}: the read version and the read-your-writes view (get, getKey, range batches,
 *       size estimates, the value a watch starts from);</li>
 *   <li>{@link TransactionWrites}: set, clear and atomic mutations, with their checks;</li>
 *   <li>{@link ConflictRanges}: the read and write conflict ranges and the approximate size;</li>
 *   <li>{@link TransactionLifecycle}: the state (active, committing, committed, failed), cancel, timeout,
 *       close, the versionstamp promise;</li>
 *   <li>{@link TransactionCommit}: the asynchronous commit once it is prepared here;</li>
 *   <li>{@link RetryPolicy}: which errors {@link #onError} retries and after what delay;</li>
 *   <li>{@link TransactionSettings}: the options; {@link TransactionWatches}: the uncommitted watches;
 *       {@link TransactionFutures}: completing every future on the executor; {@link SnapshotView}: the
 *       snapshot view; {@link RangeRead}: lazy range reads.</li>
 * </ul>
 *
 * <p>Threading: any thread may call it. State lives under this object's monitor, which only this class takes
 * (and {@link TransactionCommit}, to record the outcome); the collaborators are guarded by it and take no lock
 * of their own, except {@link TransactionWatches}. Every returned future is completed on the transaction's
 * executor, never on the calling thread. Operations on a closed transaction throw
 * {@link IllegalStateException}, as fdb-java's do.
 *
 * <p>Lifecycle: active until {@link #commit()}; a failed commit leaves it failed until {@link #onError}
 * hands back a fresh transaction (this one is then closed) that keeps the retry count, backoff, creation
 * time and the persistent options (timeout, retry limit, maximum retry delay).
 */
final class EmbeddedTransaction extends EmbeddedReadTransaction implements Transaction {

    /** What survives {@code onError}. */
    record Carried(long createdNanos, int retries, long backoffMillis) {
    }

    private final EmbeddedFdb db;
    private final EmbeddedEngine engine;
    private final TransactionSettings settings;
    private final Carried carried;
    private final TransactionFutures futures;
    private final WriteMap writeMap = new WriteMap();
    private final ConflictRanges conflicts;
    private final TransactionReads reads;
    private final TransactionWrites writes;
    private final TransactionWatches watches;
    private final TransactionLifecycle lifecycle;
    private final TransactionCommit commit;
    private final SnapshotView snapshotView = new SnapshotView(this);

    EmbeddedTransaction(EmbeddedFdb db, EmbeddedEngine engine, Executor executor, TransactionSettings settings,
                        Carried carried) {
        this.db = db;
        this.engine = engine;
        this.settings = settings;
        this.carried = carried;
        this.futures = new TransactionFutures(executor);
        this.watches = new TransactionWatches(engine, executor);
        this.conflicts = new ConflictRanges(writeMap, settings);
        this.reads = new TransactionReads(engine, settings, writeMap, conflicts);
        this.writes = new TransactionWrites(settings, writeMap, conflicts, watches);
        this.lifecycle = new TransactionLifecycle(db.scheduler(), watches, reads::end);
        this.commit = new TransactionCommit(this, engine, futures, lifecycle, watches);
        scheduleTimeout();
    }

    // ------------------------------------------------------------------ guards

    private void checkOpen() {
        lifecycle.checkOpen();
    }

    /** For writes and conflict ranges: open and usable, else throws. Caller holds the monitor. */
    private void beginWrite() {
        checkOpen();
        lifecycle.throwIfUnusable();
    }

    /** Runs {@code body} under the monitor, once the transaction is known usable; delivered on the executor. */
    private <T> CompletableFuture<T> usable(Supplier<T> body) {
        return futures.issue(() -> {
            synchronized (this) {
                lifecycle.throwIfUnusable();
                return body.get();
            }
        });
    }

    // ------------------------------------------------------------------ reads

    CompletableFuture<byte[]> readValue(byte[] key, boolean snapshot) {
        checkOpen();
        return usable(() -> reads.value(key, snapshot));
    }

    CompletableFuture<byte[]> readKey(KeySelector selector, boolean snapshot) {
        checkOpen();
        return usable(() -> reads.key(selector, snapshot));
    }

    AsyncIterable<KeyValue> readRange(KeySelector begin, KeySelector end, int limit, boolean reverse,
                                      StreamingMode mode, boolean snapshot) {
        checkOpen();
        return new RangeRead(this, begin, end, limit, reverse, mode, snapshot);
    }

    /** Reads the next batch of at most {@code maxRows} rows of {@code c}, on the executor. */
    CompletableFuture<RangeRead.Batch> readBatch(RangeRead.Cursor c, int maxRows) {
        checkOpen();
        return usable(() -> reads.batch(c, maxRows));
    }

    @Override
    public CompletableFuture<byte[]> get(byte[] key) {
        return readValue(key, false);
    }

    @Override
    public CompletableFuture<byte[]> getKey(KeySelector selector) {
        return readKey(selector, false);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit, boolean reverse,
                                            StreamingMode mode) {
        return readRange(begin, end, limit, reverse, mode, false);
    }

    @Override
    public boolean isSnapshot() {
        return false;
    }

    @Override
    public ReadTransaction snapshot() {
        return snapshotView;
    }

    @Override
    public synchronized CompletableFuture<Long> getReadVersion() {
        checkOpen();
        return usable(reads::readVersion);
    }

    @Override
    public synchronized void setReadVersion(long version) {
        checkOpen();
        reads.setReadVersion(version);
    }

    /** Committed bytes only; unlike the reads, it answers even once cancelled, timed out or committing. */
    @Override
    public CompletableFuture<Long> getEstimatedRangeSizeBytes(byte[] begin, byte[] end) {
        checkOpen();
        return futures.issue(() -> {
            synchronized (this) {
                return reads.estimatedRangeSize(begin, end);
            }
        });
    }

    @Override
    public CompletableFuture<KeyArrayResult> getRangeSplitPoints(byte[] begin, byte[] end, long chunkSize) {
        checkOpen();
        return futures.issue(() -> {
            synchronized (this) {
                return reads.splitPoints(begin, end, chunkSize);
            }
        });
    }

    // ------------------------------------------------------------------ conflict ranges

    @Override
    public synchronized boolean addReadConflictRangeIfNotSnapshot(byte[] begin, byte[] end) {
        addReadConflictRange(begin, end);
        return true;
    }

    @Override
    public synchronized boolean addReadConflictKeyIfNotSnapshot(byte[] key) {
        addReadConflictKey(key);
        return true;
    }

    @Override
    public synchronized void addReadConflictRange(byte[] begin, byte[] end) {
        beginWrite();
        KeyRules.checkConflictRange(begin, end, settings);
        conflicts.addRead(new KeyRange(begin, end));
    }

    @Override
    public synchronized void addReadConflictKey(byte[] key) {
        addReadConflictRange(key, Bytes.keyAfter(key));
    }

    @Override
    public synchronized void addWriteConflictRange(byte[] begin, byte[] end) {
        beginWrite();
        KeyRules.checkConflictRange(begin, end, settings);
        conflicts.addExplicitWrite(begin, end);
    }

    @Override
    public synchronized void addWriteConflictKey(byte[] key) {
        addWriteConflictRange(key, Bytes.keyAfter(key));
    }

    // ------------------------------------------------------------------ options

    @Override
    public TransactionOptions options() {
        return new TransactionOptions((code, parameter) -> {
            boolean timeoutChanged;
            synchronized (this) {
                checkOpen();
                timeoutChanged = settings.apply(code, parameter);
            }
            if (timeoutChanged) {
                scheduleTimeout();
            }
        });
    }

    @Override
    public Executor getExecutor() {
        return futures.executor();
    }

    // ------------------------------------------------------------------ writes

    @Override
    public synchronized void set(byte[] key, byte[] value) {
        beginWrite();
        writes.set(key, value);
    }

    @Override
    public synchronized void clear(byte[] key) {
        beginWrite();
        writes.clear(key);
    }

    @Override
    public synchronized void clear(byte[] begin, byte[] end) {
        beginWrite();
        writes.clear(begin, end);
    }

    @Override
    public void clear(Range range) {
        clear(range.begin, range.end);
    }

    @Override
    public void clearRangeStartsWith(byte[] prefix) {
        clear(Range.startsWith(prefix));
    }

    @Override
    public synchronized void mutate(MutationType type, byte[] key, byte[] param) {
        beginWrite();
        writes.mutate(type, key, param);
    }

    // ------------------------------------------------------------------ commit

    @Override
    public CompletableFuture<Void> commit() {
        checkOpen();
        final EmbeddedEngine.CommitRequest request;
        final long sizeLimit;
        final long size;
        synchronized (this) {
            FDBException e = lifecycle.unusable();
            if (e != null) {
                return futures.failed(e);
            }
            lifecycle.beginCommit();
            if (writeMap.isEmpty() && !conflicts.hasWrites()) {
                request = null;
            } else {
                request = new EmbeddedEngine.CommitRequest(reads.readVersionIfTaken(), conflicts.reads(),
                        conflicts.keyWrites(), conflicts.writes(), conflicts.everyKeyWriteKept(), writeMap,
                        lifecycle::abandoned);
            }
            sizeLimit = settings.sizeLimit;
            size = conflicts.approximateSize();
        }
        return commit.start(request, size, sizeLimit);
    }

    @Override
    public synchronized Long getCommittedVersion() {
        checkOpen();
        return lifecycle.committedVersion();
    }

    @Override
    public synchronized CompletableFuture<byte[]> getVersionstamp() {
        checkOpen();
        FDBException unusable = lifecycle.unusable();
        if (unusable != null) {
            return futures.failed(unusable);
        }
        CompletableFuture<byte[]> versionstamp;
        try {
            versionstamp = lifecycle.versionstamp();
        } catch (FDBException invalid) {
            return futures.failed(invalid);
        }
        CompletableFuture<byte[]> f = new CompletableFuture<>();
        versionstamp.whenCompleteAsync((v, t) -> {
            if (t != null) {
                f.completeExceptionally(t);
            } else {
                f.complete(v.clone());
            }
        }, futures.executor());
        return f;
    }

    @Override
    public synchronized CompletableFuture<Long> getApproximateSize() {
        checkOpen();
        return futures.deliver(conflicts.approximateSize(), null);
    }

    // ------------------------------------------------------------------ retry, cancel, timeout, close

    @Override
    public CompletableFuture<Transaction> onError(Throwable e) {
        Throwable error = TransactionCommit.unwrap(e);
        if (!(error instanceof FDBException fe)) {
            return futures.failed(error);
        }
        final EmbeddedTransaction next;
        final long delayMillis;
        synchronized (this) {
            checkOpen();
            if (lifecycle.isCancelled()) {
                return futures.failed(new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED));
            }
            Optional<RetryPolicy.Retry> retry = RetryPolicy.decide(fe.getCode(), carried.retries(),
                    carried.backoffMillis(), settings, db::jitter);
            if (retry.isEmpty()) {
                return futures.failed(error);
            }
            delayMillis = retry.get().delayMillis();
            next = new EmbeddedTransaction(db, engine, futures.executor(), settings.persistent(db.settings()),
                    new Carried(carried.createdNanos(), carried.retries() + 1, retry.get().nextBackoffMillis()));
            lifecycle.closeForRetry();
        }
        CompletableFuture<Transaction> f = new CompletableFuture<>();
        db.scheduler().schedule(() -> futures.runOrInline(() -> f.complete(next)), delayMillis, TimeUnit.MILLISECONDS);
        return f;
    }

    @Override
    public synchronized void cancel() {
        checkOpen();
        lifecycle.cancel();
    }

    private void scheduleTimeout() {
        synchronized (this) {
            lifecycle.scheduleTimeout(settings.timeoutMillis, carried.createdNanos(), db.nanoTime(), this::timeOut);
        }
    }

    private synchronized void timeOut() {
        lifecycle.timeOut();
    }

    @Override
    public CompletableFuture<Void> watch(byte[] key) {
        checkOpen();
        synchronized (this) {
            if (settings.readYourWritesDisabled) {
                return futures.failed(new EmbeddedFdbException(FdbErrors.WATCHES_DISABLED));
            }
            FDBException e = lifecycle.unusable();
            if (e != null) {
                return futures.failed(e);
            }
            try {
                KeyRules.checkReadKey(key, settings);
                if (!engine.watches().reserve(db.settings().maxWatches())) {
                    return futures.failed(new EmbeddedFdbException(FdbErrors.TOO_MANY_WATCHES));
                }
                byte[] seen;
                try {
                    seen = reads.watchedValue(key);
                } catch (RuntimeException readFailed) {
                    engine.watches().release();
                    throw readFailed;
                }
                return watches.add(key, seen);
            } catch (RuntimeException ex) {
                return futures.failed(ex);
            }
        }
    }

    @Override
    public Database getDatabase() {
        return db;
    }

    @Override
    public <T> T run(Function<? super Transaction, T> retryable) {
        return retryable.apply(this);
    }

    @Override
    public <T> CompletableFuture<T> runAsync(Function<? super Transaction, ? extends CompletableFuture<T>> retryable) {
        try {
            return retryable.apply(this);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public synchronized void close() {
        lifecycle.close();
    }
}
