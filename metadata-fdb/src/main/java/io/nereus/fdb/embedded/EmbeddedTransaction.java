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
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One EmbeddedFdb transaction: a read version taken lazily, reads merged with its own writes, the conflict
 * ranges FoundationDB would record, and a commit through the engine's resolver.
 *
 * <p>Threading: any thread may call it. State lives under this object's monitor; every returned future
 * is completed on the transaction's executor, never on the calling thread. Operations on a closed
 * transaction throw {@link IllegalStateException}, as fdb-java's do.
 *
 * <p>Lifecycle: active until {@link #commit()}; a failed commit leaves it failed until {@link #onError}
 * hands back a fresh transaction (this one is then closed) that keeps the retry count, backoff, creation
 * time and the persistent options (timeout, retry limit, maximum retry delay).
 */
final class EmbeddedTransaction extends EmbeddedReadTransaction implements Transaction {
    static final long INITIAL_BACKOFF_MS = 10;

    private enum State { ACTIVE, COMMITTING, COMMITTED, FAILED }

    /** What survives {@code onError}. */
    record Carried(long createdNanos, int retries, long backoffMillis) {
    }

    private final EmbeddedFdb db;
    private final EmbeddedEngine engine;
    private final Executor executor;
    private final TransactionSettings settings;
    private final Carried carried;
    private final SnapshotView snapshotView = new SnapshotView();

    private long readVersion = -1;
    private WriteMap writes = new WriteMap();
    private List<KeyRange> readConflicts = new ArrayList<>();
    private List<KeyRange> writeConflicts = new ArrayList<>();
    private long approximateSize;
    private State state = State.ACTIVE;
    private volatile boolean cancelled;
    private volatile boolean timedOut;
    private boolean closed;
    private long committedVersion = -1;
    private CompletableFuture<byte[]> versionstamp;
    private final TransactionWatches watches;
    private ScheduledFuture<?> timeoutTask;

    EmbeddedTransaction(EmbeddedFdb db, EmbeddedEngine engine, Executor executor, TransactionSettings settings,
                        Carried carried) {
        this.db = db;
        this.engine = engine;
        this.executor = executor;
        this.settings = settings;
        this.carried = carried;
        this.watches = new TransactionWatches(engine, executor);
        scheduleTimeout();
    }

    // ------------------------------------------------------------------ plumbing

    /**
     * Performs {@code body} now, on the calling thread, and delivers its outcome through a future completed
     * on the executor. Reads are therefore ordered with the writes around them exactly as issued: a read
     * sees the writes issued before it and none issued after, as FoundationDB's read-your-writes layer does.
     */
    private <T> CompletableFuture<T> issue(Supplier<T> body) {
        T value = null;
        Throwable error = null;
        try {
            value = body.get();
        } catch (RuntimeException e) {
            error = e;
        }
        return deliver(value, error);
    }

    private <T> CompletableFuture<T> deliver(T value, Throwable error) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                if (error != null) {
                    f.completeExceptionally(error);
                } else {
                    f.complete(value);
                }
            });
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(new EmbeddedFdbException(FdbErrors.OPERATION_FAILED,
                    "The transaction's executor rejected the operation: " + e.getMessage()));
        }
        return f;
    }

    private <T> CompletableFuture<T> failed(Throwable t) {
        return deliver(null, t);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("Cannot access closed object");
        }
    }

    /** The error an operation issued now must fail with, if any. Caller holds the monitor. */
    private FDBException unusable() {
        if (timedOut) {
            return new EmbeddedFdbException(FdbErrors.TRANSACTION_TIMED_OUT);
        }
        if (cancelled) {
            return new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED);
        }
        if (state == State.COMMITTING || state == State.COMMITTED) {
            return new EmbeddedFdbException(FdbErrors.USED_DURING_COMMIT);
        }
        return null;
    }

    private long ensureReadVersion() {
        if (readVersion < 0) {
            readVersion = engine.readVersion();
        }
        return readVersion;
    }

    private boolean readYourWrites(boolean snapshot) {
        return !settings.readYourWritesDisabled && (!snapshot || settings.snapshotReadYourWrites > 0);
    }

    private void beginWrite() {
        checkOpen();
        FDBException e = unusable();
        if (e != null) {
            throw e;
        }
    }

    private void addWriteConflict(KeyRange range) {
        if (settings.nextWriteNoWriteConflict) {
            settings.nextWriteNoWriteConflict = false;
            return;
        }
        writeConflicts.add(range);
        approximateSize += range.byteSize();
    }

    private void addReadConflict(KeyRange range) {
        for (KeyRange r : writes.subtractWritten(range)) {
            readConflicts.add(r);
            approximateSize += r.byteSize();
        }
    }

    // ------------------------------------------------------------------ reads

    CompletableFuture<byte[]> readValue(byte[] key, boolean snapshot) {
        checkOpen();
        return issue(() -> {
            synchronized (this) {
                FDBException e = unusable();
                if (e != null) {
                    throw e;
                }
                KeyRules.checkReadKey(key, settings);
                long rv = ensureReadVersion();
                WriteMap.Entry pending = null;
                if (readYourWrites(snapshot)) {
                    if (writes.touchesUnreadable(key, Bytes.keyAfter(key))) {
                        throw new EmbeddedFdbException(FdbErrors.ACCESSED_UNREADABLE);
                    }
                    pending = writes.lookup(key);
                }
                if (!snapshot) {
                    addReadConflict(KeyRange.single(key));
                }
                if (pending != null && pending.baseKnown()) {
                    engine.checkReadable(rv);
                    return pending.base();
                }
                byte[] committed = engine.get(key, rv);
                return pending == null ? committed : pending.valueOver(committed);
            }
        });
    }

    /** The transaction's view of {@code [begin, end)}. Caller holds the monitor. */
    private Iterator<Map.Entry<byte[], byte[]>> view(byte[] begin, byte[] end, boolean reverse, boolean snapshot) {
        long rv = ensureReadVersion();
        Iterator<Map.Entry<byte[], byte[]>> committed = engine.range(begin, end, rv, reverse);
        if (!readYourWrites(snapshot)) {
            return committed;
        }
        if (writes.touchesUnreadable(begin, end)) {
            throw new EmbeddedFdbException(FdbErrors.ACCESSED_UNREADABLE);
        }
        return writes.overlay(committed, begin, end, reverse);
    }

    /**
     * Resolves {@code selector} against this transaction's view: the last key below (or at, with orEqual)
     * the reference key, moved by the offset; off the beginning is the empty key, off the end the first key
     * past the readable key space. Records the span it inspected as a read conflict unless snapshot.
     */
    private byte[] resolve(KeySelector selector, boolean snapshot) {
        byte[] ref = selector.getKey();
        byte[] maxKey = KeyRules.maxReadKey(settings);
        if (Bytes.compare(ref, maxKey) > 0) {
            throw new EmbeddedFdbException(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
        }
        int offset = selector.getOffset();
        byte[] result;
        KeyRange inspected;
        if (offset > 0) {
            byte[] from = selector.orEqual() ? Bytes.keyAfter(ref) : ref;
            byte[] found = Bytes.compare(from, maxKey) < 0 ? nth(view(from, maxKey, false, snapshot), offset) : null;
            result = found != null ? found : maxKey;
            inspected = new KeyRange(from, found != null ? Bytes.keyAfter(found) : maxKey);
        } else {
            byte[] to = Bytes.min(selector.orEqual() ? Bytes.keyAfter(ref) : ref, maxKey);
            byte[] found = nth(view(Bytes.EMPTY, to, true, snapshot), 1 - offset);
            result = found != null ? found : Bytes.EMPTY;
            inspected = new KeyRange(result, to);
        }
        if (!snapshot) {
            addReadConflict(inspected);
        }
        return result;
    }

    private static byte[] nth(Iterator<Map.Entry<byte[], byte[]>> it, int n) {
        for (int i = 1; it.hasNext(); i++) {
            byte[] k = it.next().getKey();
            if (i == n) {
                return k;
            }
        }
        return null;
    }

    CompletableFuture<byte[]> readKey(KeySelector selector, boolean snapshot) {
        checkOpen();
        return issue(() -> {
            synchronized (this) {
                FDBException e = unusable();
                if (e != null) {
                    throw e;
                }
                long rv = ensureReadVersion();
                byte[] r = resolve(selector, snapshot);
                engine.checkReadable(rv);
                return r;
            }
        });
    }

    AsyncIterable<KeyValue> readRange(KeySelector begin, KeySelector end, int limit, boolean reverse,
                                      StreamingMode mode, boolean snapshot) {
        checkOpen();
        return new RangeRead(this, begin, end, limit, reverse, mode, snapshot);
    }

    /** Reads the next batch of at most {@code maxRows} rows of {@code c}, on the executor. */
    CompletableFuture<RangeRead.Batch> readBatch(RangeRead.Cursor c, int maxRows) {
        checkOpen();
        return issue(() -> {
            synchronized (this) {
                FDBException e = unusable();
                if (e != null) {
                    throw e;
                }
                if (!c.resolved) {
                    resolveCursor(c);
                }
                int n = c.limited() ? Math.min(maxRows, c.rowsRemaining) : maxRows;
                if (Bytes.compare(c.begin, c.end) >= 0 || n <= 0) {
                    return new RangeRead.Batch(List.of(), true);
                }
                Iterator<Map.Entry<byte[], byte[]>> it = view(c.begin, c.end, c.reverse, c.snapshot);
                List<KeyValue> rows = new ArrayList<>(Math.min(n, 256));
                while (rows.size() < n && it.hasNext()) {
                    Map.Entry<byte[], byte[]> kv = it.next();
                    rows.add(new KeyValue(kv.getKey(), kv.getValue()));
                }
                boolean exhausted = !it.hasNext();
                KeyRange decided;
                if (exhausted) {
                    decided = new KeyRange(c.begin, c.end);
                    c.begin = c.end;
                } else {
                    byte[] last = rows.get(rows.size() - 1).getKey();
                    if (c.reverse) {
                        decided = new KeyRange(last, c.end);
                        c.end = last;
                    } else {
                        decided = new KeyRange(c.begin, Bytes.keyAfter(last));
                        c.begin = Bytes.keyAfter(last);
                    }
                }
                if (!c.snapshot) {
                    addReadConflict(decided);
                }
                if (c.limited()) {
                    c.rowsRemaining -= rows.size();
                }
                engine.checkReadable(readVersion);
                boolean done = exhausted || (c.limited() && c.rowsRemaining <= 0) || rows.isEmpty();
                return new RangeRead.Batch(rows, done);
            }
        });
    }

    private void resolveCursor(RangeRead.Cursor c) {
        int limit = c.rowsRemaining;
        if (limit < 0 && limit != -1) {
            throw new EmbeddedFdbException(FdbErrors.RANGE_LIMITS_INVALID);
        }
        if (c.mode == StreamingMode.EXACT && limit <= 0) {
            throw new EmbeddedFdbException(FdbErrors.EXACT_MODE_WITHOUT_LIMITS);
        }
        c.limited = limit > 0;
        byte[] maxKey = KeyRules.maxReadKey(settings);
        if (Bytes.compare(c.beginSelector.getKey(), maxKey) > 0 || Bytes.compare(c.endSelector.getKey(), maxKey) > 0) {
            throw new EmbeddedFdbException(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
        }
        c.begin = isFirstGreaterOrEqual(c.beginSelector) ? c.beginSelector.getKey() : resolve(c.beginSelector, c.snapshot);
        c.end = isFirstGreaterOrEqual(c.endSelector) ? c.endSelector.getKey() : resolve(c.endSelector, c.snapshot);
        c.resolved = true;
    }

    private static boolean isFirstGreaterOrEqual(KeySelector s) {
        return !s.orEqual() && s.getOffset() == 1;
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
        return issue(() -> {
            synchronized (this) {
                FDBException e = unusable();
                if (e != null) {
                    throw e;
                }
                return ensureReadVersion();
            }
        });
    }

    @Override
    public synchronized void setReadVersion(long version) {
        checkOpen();
        if (readVersion >= 0) {
            throw new EmbeddedFdbException(FdbErrors.CLIENT_INVALID_OPERATION,
                    "The read version must be set before the transaction's first read");
        }
        if (version <= 0) {
            throw new EmbeddedFdbException(FdbErrors.CLIENT_INVALID_OPERATION, "Read version must be positive");
        }
        readVersion = version;
    }

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
        addReadConflict(new KeyRange(begin, end));
    }

    @Override
    public synchronized void addReadConflictKey(byte[] key) {
        addReadConflictRange(key, Bytes.keyAfter(key));
    }

    @Override
    public synchronized void addWriteConflictRange(byte[] begin, byte[] end) {
        beginWrite();
        KeyRules.checkConflictRange(begin, end, settings);
        writeConflicts.add(new KeyRange(begin, end));
        approximateSize += begin.length + end.length;
    }

    @Override
    public synchronized void addWriteConflictKey(byte[] key) {
        addWriteConflictRange(key, Bytes.keyAfter(key));
    }

    @Override
    public CompletableFuture<Long> getEstimatedRangeSizeBytes(byte[] begin, byte[] end) {
        checkOpen();
        return issue(() -> {
            synchronized (this) {
                long rv = ensureReadVersion();
                long size = 0;
                for (Iterator<Map.Entry<byte[], byte[]>> it = engine.range(begin, end, rv, false); it.hasNext(); ) {
                    Map.Entry<byte[], byte[]> kv = it.next();
                    size += kv.getKey().length + kv.getValue().length;
                }
                return size;
            }
        });
    }

    @Override
    public CompletableFuture<KeyArrayResult> getRangeSplitPoints(byte[] begin, byte[] end, long chunkSize) {
        checkOpen();
        return issue(() -> {
            synchronized (this) {
                long rv = ensureReadVersion();
                ByteArrayOutputStream keys = new ByteArrayOutputStream();
                List<Integer> lengths = new ArrayList<>();
                keys.writeBytes(begin);
                lengths.add(begin.length);
                long accumulated = 0;
                for (Iterator<Map.Entry<byte[], byte[]>> it = engine.range(begin, end, rv, false); it.hasNext(); ) {
                    Map.Entry<byte[], byte[]> kv = it.next();
                    if (accumulated >= chunkSize && Bytes.compare(kv.getKey(), begin) > 0) {
                        keys.writeBytes(kv.getKey());
                        lengths.add(kv.getKey().length);
                        accumulated = 0;
                    }
                    accumulated += kv.getKey().length + kv.getValue().length;
                }
                keys.writeBytes(end);
                lengths.add(end.length);
                return new KeyArrayResult(keys.toByteArray(), lengths.stream().mapToInt(Integer::intValue).toArray());
            }
        });
    }

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
        return executor;
    }

    // ------------------------------------------------------------------ writes

    @Override
    public synchronized void set(byte[] key, byte[] value) {
        beginWrite();
        KeyRules.checkWriteKey(key, false, settings);
        if (value.length > KeyRules.VALUE_SIZE_LIMIT) {
            throw new EmbeddedFdbException(FdbErrors.VALUE_TOO_LARGE);
        }
        writes.set(key, value);
        addWriteConflict(KeyRange.single(key));
        approximateSize += key.length + value.length;
        ownWrite(key, Bytes.keyAfter(key));
    }

    @Override
    public synchronized void clear(byte[] key) {
        beginWrite();
        KeyRules.checkWriteKey(key, false, settings);
        writes.clear(key);
        addWriteConflict(KeyRange.single(key));
        approximateSize += key.length;
        ownWrite(key, Bytes.keyAfter(key));
    }

    @Override
    public synchronized void clear(byte[] begin, byte[] end) {
        beginWrite();
        if (Bytes.compare(begin, end) > 0) {
            throw new EmbeddedFdbException(FdbErrors.INVERTED_RANGE);
        }
        KeyRules.checkWriteKey(begin, false, settings);
        KeyRules.checkWriteKey(end, true, settings);
        writes.clearRange(begin, end);
        addWriteConflict(new KeyRange(begin, end));
        approximateSize += begin.length + end.length;
        ownWrite(begin, end);
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
        switch (type.code()) {
            case 14 -> { // SET_VERSIONSTAMPED_KEY
                int offset = KeyRules.versionstampOffset(key);
                byte[] template = Arrays.copyOf(key, key.length - 4);
                KeyRules.checkWriteKey(template, false, settings);
                KeyRules.checkValue(param);
                byte[] low = template.clone();
                Arrays.fill(low, offset, offset + 10, (byte) 0);
                byte[] high = template.clone();
                Arrays.fill(high, offset, offset + 10, (byte) 0xff);
                KeyRange possible = new KeyRange(low, Bytes.keyAfter(high));
                writes.setVersionstampedKey(template, offset, param, possible);
                addWriteConflict(possible);
                approximateSize += template.length + param.length;
                ownWrite(possible.begin(), possible.end());
            }
            case 15 -> { // SET_VERSIONSTAMPED_VALUE
                KeyRules.checkWriteKey(key, false, settings);
                int offset = KeyRules.versionstampOffset(param);
                byte[] template = Arrays.copyOf(param, param.length - 4);
                KeyRules.checkValue(template);
                writes.setVersionstampedValue(key, template, offset);
                addWriteConflict(KeyRange.single(key));
                approximateSize += key.length + template.length;
                ownWrite(key, Bytes.keyAfter(key));
            }
            case 2, 6, 7, 8, 9, 12, 13, 16, 17, 20 -> {
                KeyRules.checkWriteKey(key, false, settings);
                KeyRules.checkValue(param);
                writes.mutate(type, key, param);
                addWriteConflict(KeyRange.single(key));
                approximateSize += key.length + param.length;
                ownWrite(key, Bytes.keyAfter(key));
            }
            default -> throw new EmbeddedFdbException(FdbErrors.INVALID_MUTATION_TYPE);
        }
    }

    /** A write of this transaction to {@code [begin, end)} fires its own watches there (RYW watches). */
    private void ownWrite(byte[] begin, byte[] end) {
        watches.ownWrite(begin, end, writes::lookup);
    }

    // ------------------------------------------------------------------ commit

    @Override
    public CompletableFuture<Void> commit() {
        checkOpen();
        final EmbeddedEngine.CommitRequest request;
        final long sizeLimit;
        final long size;
        synchronized (this) {
            FDBException e = unusable();
            if (e != null) {
                return failed(e);
            }
            state = State.COMMITTING;
            if (writes.isEmpty() && writeConflicts.isEmpty()) {
                request = null;
            } else {
                request = new EmbeddedEngine.CommitRequest(readVersion, readConflicts, writeConflicts, writes,
                        () -> cancelled || timedOut);
            }
            sizeLimit = settings.sizeLimit;
            size = approximateSize;
        }
        if (request == null) {
            return issue(() -> {
                committed(-1);
                return null;
            });
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        Runnable start = () -> {
            if (size > sizeLimit) {
                commitFailed(new EmbeddedFdbException(FdbErrors.TRANSACTION_TOO_LARGE), result);
                return;
            }
            engine.commit(request).whenComplete((version, error) -> {
                Runnable finish = () -> {
                    if (error != null) {
                        commitFailed(unwrap(error), result);
                    } else {
                        committed(version);
                        result.complete(null);
                    }
                };
                try {
                    executor.execute(finish);
                } catch (RejectedExecutionException rejected) {
                    finish.run();
                }
            });
        };
        try {
            executor.execute(start);
        } catch (RejectedExecutionException rejected) {
            commitFailed(new EmbeddedFdbException(FdbErrors.OPERATION_FAILED,
                    "The transaction's executor rejected the commit"), result);
        }
        return result;
    }

    private void committed(long version) {
        synchronized (this) {
            state = State.COMMITTED;
            committedVersion = version;
            if (versionstamp != null) {
                if (version < 0) {
                    versionstamp.completeExceptionally(new EmbeddedFdbException(FdbErrors.NO_COMMIT_VERSION));
                } else {
                    versionstamp.complete(EmbeddedEngine.versionstamp(version));
                }
            }
        }
        watches.handOver(version);
    }

    private void commitFailed(Throwable error, CompletableFuture<Void> result) {
        synchronized (this) {
            state = State.FAILED;
            if (versionstamp != null) {
                versionstamp.completeExceptionally(new EmbeddedFdbException(FdbErrors.TRANSACTION_INVALID_VERSION));
            }
        }
        watches.failAll(error);
        result.completeExceptionally(error);
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Override
    public synchronized Long getCommittedVersion() {
        checkOpen();
        return committedVersion;
    }

    @Override
    public synchronized CompletableFuture<byte[]> getVersionstamp() {
        checkOpen();
        FDBException unusable = unusable();
        if (unusable != null) {
            return failed(unusable);
        }
        if (state != State.ACTIVE) {
            return failed(new EmbeddedFdbException(FdbErrors.TRANSACTION_INVALID_VERSION));
        }
        if (versionstamp == null) {
            versionstamp = new CompletableFuture<>();
        }
        CompletableFuture<byte[]> f = new CompletableFuture<>();
        versionstamp.whenCompleteAsync((v, t) -> {
            if (t != null) {
                f.completeExceptionally(t);
            } else {
                f.complete(v.clone());
            }
        }, executor);
        return f;
    }

    @Override
    public synchronized CompletableFuture<Long> getApproximateSize() {
        checkOpen();
        return deliver(approximateSize, null);
    }

    // ------------------------------------------------------------------ retry, cancel, timeout, close

    @Override
    public CompletableFuture<Transaction> onError(Throwable e) {
        Throwable error = unwrap(e);
        if (!(error instanceof FDBException fe)) {
            return failed(error);
        }
        int code = fe.getCode();
        boolean backoff = switch (code) {
            case FdbErrors.NOT_COMMITTED, FdbErrors.COMMIT_UNKNOWN_RESULT, FdbErrors.DATABASE_LOCKED,
                 FdbErrors.COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED, FdbErrors.GRV_PROXY_MEMORY_LIMIT_EXCEEDED,
                 FdbErrors.PROCESS_BEHIND, FdbErrors.BATCH_TRANSACTION_THROTTLED, FdbErrors.TAG_THROTTLED,
                 FdbErrors.BLOB_GRANULE_REQUEST_FAILED, FdbErrors.PROXY_TAG_THROTTLED -> true;
            default -> false;
        };
        boolean shortDelay = code == FdbErrors.TRANSACTION_TOO_OLD || code == FdbErrors.FUTURE_VERSION;
        final EmbeddedTransaction next;
        final long delayMillis;
        synchronized (this) {
            checkOpen();
            if (cancelled) {
                return failed(new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED));
            }
            if ((!backoff && !shortDelay) || (settings.retryLimit >= 0 && carried.retries >= settings.retryLimit)) {
                return failed(error);
            }
            long nextBackoff = carried.backoffMillis;
            if (backoff) {
                delayMillis = Math.round(ThreadLocalRandom.current().nextDouble() * carried.backoffMillis);
                nextBackoff = Math.min(carried.backoffMillis * 2, Math.max(settings.maxRetryDelayMillis, 0));
            } else {
                delayMillis = Math.min(INITIAL_BACKOFF_MS, settings.maxRetryDelayMillis);
            }
            next = new EmbeddedTransaction(db, engine, executor, settings.persistent(db.settings()),
                    new Carried(carried.createdNanos, carried.retries + 1, Math.max(nextBackoff, 0)));
            releaseResources(new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED));
            closed = true;
        }
        CompletableFuture<Transaction> f = new CompletableFuture<>();
        db.scheduler().schedule(() -> {
            try {
                executor.execute(() -> f.complete(next));
            } catch (RejectedExecutionException rejected) {
                f.complete(next);
            }
        }, delayMillis, TimeUnit.MILLISECONDS);
        return f;
    }

    /** Drops what this transaction holds: its timer, pending watches and versionstamp. Caller holds the monitor. */
    private void releaseResources(FDBException reason) {
        if (timeoutTask != null) {
            timeoutTask.cancel(false);
        }
        if (versionstamp != null && !versionstamp.isDone()) {
            versionstamp.completeExceptionally(reason);
        }
        watches.failAll(reason);
    }

    @Override
    public synchronized void cancel() {
        checkOpen();
        if (state == State.COMMITTED) {
            return;
        }
        cancelled = true;
        releaseResources(new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED));
    }

    private void scheduleTimeout() {
        synchronized (this) {
            if (timeoutTask != null) {
                timeoutTask.cancel(false);
                timeoutTask = null;
            }
            if (settings.timeoutMillis <= 0) {
                return;
            }
            long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - carried.createdNanos);
            long remaining = Math.max(0, settings.timeoutMillis - elapsed);
            timeoutTask = db.scheduler().schedule(this::timeOut, remaining, TimeUnit.MILLISECONDS);
        }
    }

    private synchronized void timeOut() {
        if (closed || state == State.COMMITTED || state == State.FAILED) {
            return;
        }
        timedOut = true;
        releaseResources(new EmbeddedFdbException(FdbErrors.TRANSACTION_TIMED_OUT));
    }

    @Override
    public CompletableFuture<Void> watch(byte[] key) {
        checkOpen();
        synchronized (this) {
            if (settings.readYourWritesDisabled) {
                return failed(new EmbeddedFdbException(FdbErrors.WATCHES_DISABLED));
            }
            FDBException e = unusable();
            if (e != null) {
                return failed(e);
            }
            try {
                KeyRules.checkReadKey(key, settings);
                if (!engine.watches().reserve(db.settings().maxWatches())) {
                    return failed(new EmbeddedFdbException(FdbErrors.TOO_MANY_WATCHES));
                }
                byte[] seen;
                try {
                    WriteMap.Entry pending = writes.lookup(key);
                    long rv = ensureReadVersion();
                    seen = pending != null && pending.baseKnown() ? pending.base()
                            : pending != null ? pending.valueOver(engine.get(key, rv)) : engine.get(key, rv);
                } catch (RuntimeException readFailed) {
                    engine.watches().release();
                    throw readFailed;
                }
                return watches.add(key, seen);
            } catch (RuntimeException ex) {
                return failed(ex);
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
        if (closed) {
            return;
        }
        if (state != State.COMMITTED) {
            releaseResources(new EmbeddedFdbException(FdbErrors.TRANSACTION_CANCELLED));
        } else if (timeoutTask != null) {
            timeoutTask.cancel(false);
        }
        closed = true;
    }

    // ------------------------------------------------------------------ snapshot view

    /** The snapshot view: the same transaction, reading without read conflicts. */
    private final class SnapshotView extends EmbeddedReadTransaction {
        @Override
        public boolean isSnapshot() {
            return true;
        }

        @Override
        public ReadTransaction snapshot() {
            return this;
        }

        @Override
        public CompletableFuture<Long> getReadVersion() {
            return EmbeddedTransaction.this.getReadVersion();
        }

        @Override
        public void setReadVersion(long version) {
            EmbeddedTransaction.this.setReadVersion(version);
        }

        @Override
        public boolean addReadConflictRangeIfNotSnapshot(byte[] begin, byte[] end) {
            return false;
        }

        @Override
        public boolean addReadConflictKeyIfNotSnapshot(byte[] key) {
            return false;
        }

        @Override
        public CompletableFuture<byte[]> get(byte[] key) {
            return readValue(key, true);
        }

        @Override
        public CompletableFuture<byte[]> getKey(KeySelector selector) {
            return readKey(selector, true);
        }

        @Override
        public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit, boolean reverse,
                                                StreamingMode mode) {
            return readRange(begin, end, limit, reverse, mode, true);
        }

        @Override
        public CompletableFuture<Long> getEstimatedRangeSizeBytes(byte[] begin, byte[] end) {
            return EmbeddedTransaction.this.getEstimatedRangeSizeBytes(begin, end);
        }

        @Override
        public CompletableFuture<KeyArrayResult> getRangeSplitPoints(byte[] begin, byte[] end, long chunkSize) {
            return EmbeddedTransaction.this.getRangeSplitPoints(begin, end, chunkSize);
        }

        @Override
        public TransactionOptions options() {
            return EmbeddedTransaction.this.options();
        }

        @Override
        public Executor getExecutor() {
            return executor;
        }
    }
}
