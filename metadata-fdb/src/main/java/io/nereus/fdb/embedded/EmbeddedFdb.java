package io.nereus.fdb.embedded;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.DatabaseOptions;
import com.apple.foundationdb.EventKeeper;
import com.apple.foundationdb.KeyRangeArrayResult;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Tenant;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.FdbErrors;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * EmbeddedFdb: a single-process FoundationDB, behind fdb-java's {@link Database} interface, so code written
 * for a FoundationDB cluster runs unchanged on it.
 *
 * <p><b>What it reproduces</b> (API version 730): read versions that advance about a million per second and
 * MVCC snapshots; serializable optimistic commits that fail with 1020 when a read conflict range meets a
 * write committed after the read version, with FoundationDB's precise conflict ranges (snapshot reads and
 * blind writes never conflict, limited range reads only conflict on what they returned, a transaction's own
 * set/cleared keys are not read conflicts); read-your-writes over sets, clears and atomic operations; lazy
 * range reads with limits, reverse order and every streaming mode; key selectors; all atomic mutations
 * including versionstamped keys and values; the size limits (2101, 2102, 2103), key space rules (2004),
 * range argument errors (2012, 2210), the five-second window (1007), transaction options (timeout 1031,
 * retry limit, maximum retry delay, size limit, next-write-no-write-conflict, snapshot read-your-writes,
 * system keys), watches, {@code onError} with FoundationDB's retry classes and backoff, and the
 * {@code run}/{@code runAsync}/{@code read}/{@code readAsync} retry loops. Errors are
 * {@link EmbeddedFdbException}s, whose retry predicates are pure Java. Every future completes on the
 * transaction's executor, never on the calling thread. {@code DirectoryLayer}, {@code Tuple} and
 * {@code Subspace} work on it.
 *
 * <p><b>Durability.</b> {@link #inMemory()} keeps everything in memory. {@link #open(Path)} keeps a durable
 * log in a directory: a commit completes only once its effects are fsynced (concurrent commits share one
 * fsync), reopening restores exactly the committed state, a torn final record is dropped, and any other
 * damage refuses to open with the file and offset named. With {@link Builder#syncInterval} above zero a commit
 * completes once its effects are written to the operating system (a crash of the process loses nothing; an OS
 * crash or power loss may lose the commits of the last interval, and reopening then drops the damaged end of the
 * log past the last fsync).
 *
 * <p><b>Versions no transaction reads.</b> FoundationDB's storage servers keep every version of the five-second
 * window, so a transaction given any read version of that window ({@code setReadVersion}) reads it. This engine keeps
 * every version a live transaction reads (its read version is held from its first read until the attempt ends), but
 * of the versions no live transaction holds only those of the last {@link Builder#unheldReadWindow} (one second by
 * default): a key written at every commit would otherwise hold five seconds of values in memory (at a thousand
 * streams, thousands of keys rewritten at each of hundreds of commits a second). A transaction given an older read
 * version that nothing held fails, at its first read or at commit, with 1007 {@code transaction_too_old}, the
 * retryable error FoundationDB gives a read version older than what its storage servers hold.
 *
 * <p><b>What it does not reproduce.</b> A single node never loses track of a commit, so 1021
 * {@code commit_unknown_result} and other cluster failures only happen through
 * {@link #injectCommitFaults(CommitFault, int)}. Tenants ({@code openTenant}), blob granules
 * ({@code purgeBlobGranules}, {@code blobbifyRange} and the rest) and mapped range reads throw
 * {@link UnsupportedOperationException}. The special key space ({@code \xff\xff}) holds nothing. Throttling,
 * priorities, locality and client status are not modelled. Versionstamps carry batch order 0: every commit
 * has a version of its own.
 */
public final class EmbeddedFdb implements Database {
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final EmbeddedEngine engine;
    private final Executor executor;
    private final ExecutorService ownedExecutor;
    private final ScheduledExecutorService scheduler;
    private final boolean ownsScheduler;
    private final LongSupplier nanoTime;
    private final DoubleSupplier jitter;
    private final DatabaseSettings settings = new DatabaseSettings();
    private final AutoCloseable storage;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** A new empty database kept in memory only. */
    public static EmbeddedFdb inMemory() {
        return builder().build();
    }

    /**
     * Opens (creating if needed) a durable database in {@code dir}.
     *
     * @throws java.io.UncheckedIOException when the directory cannot be used or its log is damaged; the
     *                                      message names the file and offset
     */
    public static EmbeddedFdb open(Path dir) {
        return builder().directory(dir).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Settings of an EmbeddedFdb; every one has a default. */
    public static final class Builder {
        private Path directory;
        private Duration mvccWindow = Duration.ofSeconds(5);
        private Duration unheldReadWindow = Duration.ofSeconds(1);
        private Clock clock = Clock.systemUTC();
        private Executor executor;
        private ScheduledExecutorService timer;
        private LongSupplier nanoTime = System::nanoTime;
        private DoubleSupplier jitter = () -> ThreadLocalRandom.current().nextDouble();
        private long compactionThresholdBytes = 64L << 20;
        private Duration syncInterval = Duration.ZERO;

        private Builder() {
        }

        /** Keep data durably in {@code dir}; without it, the database lives in memory. */
        public Builder directory(Path dir) {
            this.directory = Objects.requireNonNull(dir, "directory");
            return this;
        }

        /**
         * How long a read version stays usable (FoundationDB: five seconds, 5,000,000 versions). Tests may
         * shorten it.
         */
        public Builder mvccWindow(Duration window) {
            if (window.isNegative() || window.isZero()) {
                throw new IllegalArgumentException("mvccWindow must be positive, was " + window);
            }
            this.mvccWindow = window;
            return this;
        }

        /**
         * How long a version no live transaction holds stays readable by a transaction given it explicitly
         * ({@code setReadVersion}); one second by default, and never more than the {@link #mvccWindow}, which bounds
         * it. A live transaction reads its own read version for the whole window whatever this is. Set it to the
         * window for FoundationDB's behaviour, at the cost of keeping every key's values of the whole window.
         */
        public Builder unheldReadWindow(Duration window) {
            if (window.isNegative()) {
                throw new IllegalArgumentException("unheldReadWindow must be >= 0, was " + window);
            }
            this.unheldReadWindow = window;
            return this;
        }

        /** The clock versions follow (microseconds); tests inject one they control. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** The default executor of transactions; without it, the database owns a pool of daemon threads. */
        public Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /**
         * The timer of retry backoffs and transaction timeouts, which the caller owns (closing the database does not
         * shut it down), and the time, in nanoseconds of an arbitrary origin, that timeouts are measured in; without
         * it, the database owns a daemon timer thread and measures with {@link System#nanoTime}. A deterministic
         * simulation gives a timer on its own time.
         */
        public Builder timer(ScheduledExecutorService timer, LongSupplier nanoTime) {
            this.timer = Objects.requireNonNull(timer, "timer");
            this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
            return this;
        }

        /**
         * The random numbers in [0, 1) that jitter retry backoffs (as FoundationDB's client does); by default
         * {@link ThreadLocalRandom}'s. A deterministic simulation gives a seeded source.
         */
        public Builder jitter(DoubleSupplier jitter) {
            this.jitter = Objects.requireNonNull(jitter, "jitter");
            return this;
        }

        /** Log bytes after which a durable database writes a snapshot and drops the log it covers. */
        public Builder compactionThresholdBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("compactionThresholdBytes must be positive, was " + bytes);
            }
            this.compactionThresholdBytes = bytes;
            return this;
        }

        /**
         * How a durable database makes commits durable. Zero (the default): a commit is acknowledged only once it is
         * fsynced, with every commit that arrived meanwhile (group commit). Above zero: a commit is acknowledged
         * once written to the operating system, so it survives a crash of the process but an OS crash or power
         * loss may lose the commits of the last {@code interval}; the log is fsynced at least that often. Match it
         * to the durability of the data the metadata describes.
         */
        public Builder syncInterval(Duration interval) {
            if (interval.isNegative()) {
                throw new IllegalArgumentException("syncInterval must be >= 0, was " + interval);
            }
            this.syncInterval = interval;
            return this;
        }

        public EmbeddedFdb build() {
            return new EmbeddedFdb(this);
        }
    }

    private EmbeddedFdb(Builder b) {
        int id = INSTANCES.incrementAndGet();
        if (b.executor != null) {
            this.executor = b.executor;
            this.ownedExecutor = null;
        } else {
            this.ownedExecutor = new ForkJoinPool(Math.max(2, Runtime.getRuntime().availableProcessors()),
                    pool -> {
                        ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
                        t.setName("embedded-fdb-" + id + "-" + t.getPoolIndex());
                        t.setDaemon(true);
                        return t;
                    }, null, true);
            this.executor = ownedExecutor;
        }
        if (b.timer != null) {
            this.scheduler = b.timer;
            this.ownsScheduler = false;
        } else {
            ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1,
                    daemon("embedded-fdb-" + id + "-timer"));
            timer.setRemoveOnCancelPolicy(true);
            this.scheduler = timer;
            this.ownsScheduler = true;
        }
        this.nanoTime = b.nanoTime;
        this.jitter = b.jitter;
        long windowVersions = b.mvccWindow.toNanos() / 1_000;
        long unheldVersions = Math.min(windowVersions, b.unheldReadWindow.toNanos() / 1_000);
        this.engine = new EmbeddedEngine(b.clock, windowVersions, unheldVersions, executor);
        AutoCloseable opened = null;
        try {
            opened = b.directory == null ? startInMemory() : DurableStorage.open(b.directory,
                    new DurableLogOptions(b.compactionThresholdBytes, b.syncInterval), engine);
        } catch (RuntimeException e) {
            shutdownThreads();
            throw e;
        }
        this.storage = opened;
    }

    private AutoCloseable startInMemory() {
        engine.startServing(0, null);
        return () -> { };
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix.endsWith("-") ? prefix + n.incrementAndGet() : prefix);
            t.setDaemon(true);
            return t;
        };
    }

    // ------------------------------------------------------------------ EmbeddedFdb specifics

    /**
     * Makes the next {@code count} commits that have writes fail with {@code fault} (read-only commits are
     * never affected), so tests can prove their transaction bodies are idempotent and their retry loops sound.
     */
    public void injectCommitFaults(CommitFault fault, int count) {
        Objects.requireNonNull(fault, "fault");
        if (count < 0) {
            throw new IllegalArgumentException("count must not be negative, was " + count);
        }
        engine.injectFaults(fault, count);
    }

    /**
     * Sets the durable log's {@link DurableLog.TestHook} (null: none), so that package tests can fail its writes and
     * fsyncs as a full or failing disk would. A database in memory has no log: refused.
     */
    void setDurableLogTestHook(DurableLog.TestHook hook) {
        if (!(storage instanceof DurableLog log)) {
            throw new IllegalStateException("an in-memory EmbeddedFdb has no durable log");
        }
        log.testHook = hook;
    }

    /** Figures about the engine's memory use, for tests and monitoring. */
    public EmbeddedStats stats() {
        return engine.stats();
    }

    /**
     * Point-in-time figures: keys with a live or recent value, version entries held for MVCC (with those of a key
     * that fell out of the window since the key was last pruned, up to about a window's more), boundaries in the
     * resolver's conflict history, the newest visible commit version, and outstanding watches.
     */
    public record EmbeddedStats(long liveKeys, long versionEntries, long conflictBoundaries, long committedVersion,
                                long outstandingWatches) {
    }

    DatabaseSettings settings() {
        return settings;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    /** Now, in the nanoseconds transaction timeouts are measured in. */
    long nanoTime() {
        return nanoTime.getAsLong();
    }

    /** A random number in [0, 1) for a retry's backoff. */
    double jitter() {
        return jitter.getAsDouble();
    }

    // ------------------------------------------------------------------ Database

    @Override
    public Transaction createTransaction(Executor e) {
        checkOpen();
        return new EmbeddedTransaction(this, engine, Objects.requireNonNull(e, "executor"), settings.newTransaction(),
                new EmbeddedTransaction.Carried(nanoTime(), 0, RetryPolicy.INITIAL_BACKOFF_MS));
    }

    @Override
    public Transaction createTransaction(Executor e, EventKeeper eventKeeper) {
        return createTransaction(e);
    }

    @Override
    public DatabaseOptions options() {
        return new DatabaseOptions(settings::apply);
    }

    @Override
    public <T> T run(Function<? super Transaction, T> retryable, Executor e) {
        Transaction t = createTransaction(e);
        try {
            while (true) {
                try {
                    T result = retryable.apply(t);
                    t.commit().join();
                    return result;
                } catch (RuntimeException err) {
                    t = t.onError(err).join();
                }
            }
        } finally {
            t.close();
        }
    }

    @Override
    public <T> T read(Function<? super ReadTransaction, T> retryable, Executor e) {
        return run(retryable, e);
    }

    @Override
    public <T> CompletableFuture<T> runAsync(Function<? super Transaction, ? extends CompletableFuture<T>> retryable,
                                             Executor e) {
        AtomicReference<Transaction> tr = new AtomicReference<>(createTransaction(e));
        CompletableFuture<T> result = new CompletableFuture<>();
        attempt(retryable, e, tr, result);
        return result.whenComplete((v, t) -> tr.get().close());
    }

    /** One pass of the retry loop of fdb-java's {@code FDBDatabase.runAsync}. */
    private <T> void attempt(Function<? super Transaction, ? extends CompletableFuture<T>> retryable, Executor e,
                             AtomicReference<Transaction> tr, CompletableFuture<T> result) {
        CompletableFuture<T> body;
        try {
            body = retryable.apply(tr.get());
        } catch (RuntimeException err) {
            body = CompletableFuture.failedFuture(err);
        }
        body.thenComposeAsync(value -> tr.get().commit().thenApply(ignored -> value), e)
                .whenCompleteAsync((value, error) -> {
                    if (error == null) {
                        result.complete(value);
                        return;
                    }
                    Throwable cause = error instanceof CompletionException && error.getCause() != null
                            ? error.getCause() : error;
                    if (!(cause instanceof RuntimeException)) {
                        result.completeExceptionally(cause);
                        return;
                    }
                    tr.get().onError(cause).whenCompleteAsync((next, retryError) -> {
                        if (retryError != null) {
                            result.completeExceptionally(retryError instanceof CompletionException
                                    && retryError.getCause() != null ? retryError.getCause() : retryError);
                        } else {
                            tr.set(next);
                            attempt(retryable, e, tr, result);
                        }
                    }, e);
                }, e);
    }

    @Override
    public <T> CompletableFuture<T> readAsync(Function<? super ReadTransaction, ? extends CompletableFuture<T>> retryable,
                                              Executor e) {
        return runAsync(retryable, e);
    }

    @Override
    public Executor getExecutor() {
        return executor;
    }

    @Override
    public double getMainThreadBusyness() {
        return 0.0;
    }

    @Override
    public CompletableFuture<byte[]> getClientStatus(Executor e) {
        String status = "{\"Healthy\":true,\"ClusterID\":\"embedded\",\"Connections\":[]}";
        return CompletableFuture.supplyAsync(() -> status.getBytes(StandardCharsets.UTF_8), e);
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("Cannot access closed object");
        }
    }

    /** Closes the database: durable data is flushed, watches fail with 1101, owned threads stop. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            storage.close();
        } catch (Exception e) {
            throw new IllegalStateException("EmbeddedFdb failed to close its storage", e);
        } finally {
            engine.fail(new IllegalStateException("the database was closed"));
            engine.watches().failAll(new EmbeddedFdbException(FdbErrors.OPERATION_CANCELLED));
            shutdownThreads();
        }
    }

    private void shutdownThreads() {
        if (ownsScheduler) {
            scheduler.shutdownNow();
        }
        if (ownedExecutor != null) {
            ownedExecutor.shutdown();
        }
    }

    // ------------------------------------------------------------------ not provided

    private static UnsupportedOperationException noTenants() {
        return new UnsupportedOperationException("EmbeddedFdb does not support tenants");
    }

    private static UnsupportedOperationException noBlobGranules() {
        return new UnsupportedOperationException("EmbeddedFdb does not support blob granules");
    }

    @Override
    public Tenant openTenant(Tuple tenantName) {
        throw noTenants();
    }

    @Override
    public Tenant openTenant(byte[] tenantName, Executor e) {
        throw noTenants();
    }

    @Override
    public Tenant openTenant(Tuple tenantName, Executor e) {
        throw noTenants();
    }

    @Override
    public Tenant openTenant(byte[] tenantName, Executor e, EventKeeper eventKeeper) {
        throw noTenants();
    }

    @Override
    public Tenant openTenant(Tuple tenantName, Executor e, EventKeeper eventKeeper) {
        throw noTenants();
    }

    @Override
    public CompletableFuture<byte[]> purgeBlobGranules(byte[] begin, byte[] end, long version, boolean force, Executor e) {
        throw noBlobGranules();
    }

    @Override
    public CompletableFuture<Void> waitPurgeGranulesComplete(byte[] purgeKey, Executor e) {
        throw noBlobGranules();
    }

    @Override
    public CompletableFuture<Boolean> blobbifyRange(byte[] begin, byte[] end, Executor e) {
        throw noBlobGranules();
    }

    @Override
    public CompletableFuture<Boolean> blobbifyRangeBlocking(byte[] begin, byte[] end, Executor e) {
        throw noBlobGranules();
    }

    @Override
    public CompletableFuture<Boolean> unblobbifyRange(byte[] begin, byte[] end, Executor e) {
        throw noBlobGranules();
    }

    @Override
    public CompletableFuture<KeyRangeArrayResult> listBlobbifiedRanges(byte[] begin, byte[] end, int limit, Executor e) {
        throw noBlobGranules();
    }

    @Override
    public CompletableFuture<Long> verifyBlobRange(byte[] begin, byte[] end, long version, Executor e) {
        throw noBlobGranules();
    }

    @Override
    public CompletableFuture<Boolean> flushBlobRange(byte[] begin, byte[] end, boolean compact, long version, Executor e) {
        throw noBlobGranules();
    }
}
