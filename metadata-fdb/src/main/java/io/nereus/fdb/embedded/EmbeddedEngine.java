package io.nereus.fdb.embedded;

import io.nereus.fdb.FdbErrors;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The single-node core behind {@link EmbeddedFdb}: version clock, MVCC store, resolver and commit pipeline.
 *
 * <p><b>Versions.</b> As in FoundationDB, versions advance about one million per second: a commit version is
 * the injected clock in microseconds, or the previous commit version plus one when that is larger. A read
 * version is the newest <em>visible</em> commit version: a commit becomes visible (and is acknowledged) only
 * once the durable log says it is durable (fsynced, or written with a sync interval), in version order.
 *
 * <p><b>Commit.</b> One critical section resolves a commit against the {@link ConflictHistory} (1020 when a
 * read range meets a write committed after the read version; 1007 when the read version left the MVCC
 * window), assigns its version, evaluates its effects against the newest values (so atomic operations see
 * every earlier commit, visible or not), applies them to the {@link VersionedStore} and hands them to the
 * durable log. Fsyncs happen outside the critical section, so commits arriving during one are grouped into
 * the next.
 *
 * <p><b>Conflict history.</b> A write conflict range of exactly one key the commit mutated is remembered in that
 * key's slot of the {@link VersionedStore} (a hash lookup to record and to check, no ordered structure); every
 * other write range goes to the {@link ConflictHistory}, a step function over the key space. The history only has
 * to answer for transactions that can still
 * commit, so it forgets versions at or below the oldest read version a live transaction holds (a
 * {@link ReadPin}, taken with the read version and released when the attempt ends), not only those older
 * than the MVCC window: with many short transactions it stays the size of the last few commits instead of
 * five seconds of them. The versioned store likewise keeps every version a live transaction holds, and of the
 * others only the last {@code unheldVersions} (a second by default, see {@link EmbeddedFdb}): a transaction can read
 * at its own read version for the whole window, while a key rewritten at every commit holds a second of values, not
 * five. A transaction given an explicit read version the store was already pruned past (nothing held it) fails with
 * 1007 {@code transaction_too_old}; one below only the history's cutoff is refused at commit with 1020
 * {@code not_committed}, the false conflict FoundationDB permits, and retried by {@code onError} at a fresh version.
 *
 * <p><b>Failure.</b> When the durable log fails, the outcome of the commits it held is unknown (1021) and
 * the engine refuses all further work with 1000 {@code operation_failed}; reopening the directory recovers
 * the durable state.
 */
final class EmbeddedEngine {
    /** FoundationDB's MAX_READ/WRITE_TRANSACTION_LIFE_VERSIONS: five seconds of versions. */
    static final long DEFAULT_WINDOW_VERSIONS = 5_000_000L;

    /**
     * Where committed effects go to become durable; absent for an in-memory engine. A commit appends its record in
     * the commit critical section (which orders the records) and writes it after leaving it, on its own thread.
     */
    interface Durability {
        /** Queues {@code record}; the future completes once it is durable. */
        CompletableFuture<Void> append(LogRecord record);

        /** Writes what is queued, unless another thread is writing (which writes it too). */
        void write();
    }

    /**
     * A transaction's commit: its reads' conflict ranges, its write conflict ranges (the keys of its single-key
     * mutations, {@code keyWrites}, and every other range, {@code rangeWrites}), whether every single-key mutation
     * kept its conflict range ({@link ConflictRanges#everyKeyWriteKept}), and its writes.
     */
    record CommitRequest(long readVersion, List<KeyRange> reads, List<byte[]> keyWrites, List<KeyRange> rangeWrites,
                         boolean everyKeyWriteKept, WriteMap writeMap, BooleanSupplier abandoned) {
    }

    private final Clock clock;
    private final long windowVersions;
    /** Of the versions no live transaction holds, how many the store keeps readable (at most the window). */
    private final long unheldVersions;
    private final VersionedStore store = new VersionedStore();
    private final ConflictHistory history = new ConflictHistory();
    private final WatchRegistry watches;
    private final ReentrantLock commitLock = new ReentrantLock();
    private final ArrayDeque<CommitFault> faults = new ArrayDeque<>();
    private final TreeMap<Long, Integer> pins = new TreeMap<>();
    /** Pins of read versions taken from {@link #pinReadVersion()}, oldest first (versions only grow); commit lock. */
    private final ArrayDeque<ReadPin> readPins = new ArrayDeque<>();
    /** Pins of read versions set explicitly, in any order; commit lock. */
    private final List<ReadPin> explicitPins = new ArrayList<>();
    /** The conflict history knows nothing at or below this version; commit lock. */
    private long historyCutoff;
    private final AtomicLong visibleVersion = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
    private volatile long prunedBelow;
    private volatile Throwable failure;
    private long lastCommitVersion;
    private Durability durability;

    /** {@code unheldVersions} is in {@code 0..windowVersions} ({@link EmbeddedFdb} bounds it by the window). */
    EmbeddedEngine(Clock clock, long windowVersions, long unheldVersions, Executor watchExecutor) {
        this.clock = clock;
        this.windowVersions = windowVersions;
        this.unheldVersions = unheldVersions;
        this.watches = new WatchRegistry(watchExecutor);
    }

    // ---------------------------------------------------------------- recovery

    void loadRecovered(byte[] key, byte[] value) {
        store.load(1, key, value);
    }

    void applyRecovered(LogRecord record) {
        apply(record.version(), record.effects(), 0, 0);
        lastCommitVersion = Math.max(lastCommitVersion, record.version());
    }

    /** Ends recovery: everything recovered up to {@code version} is visible; later commits go to {@code d}. */
    void startServing(long version, Durability d) {
        lastCommitVersion = Math.max(Math.max(lastCommitVersion, version), clockVersion());
        store.publish();
        visibleVersion.set(lastCommitVersion);
        durability = d;
    }

    // ---------------------------------------------------------------- versions and reads

    long clockVersion() {
        Instant now = clock.instant();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
    }

    /**
     * The version a new transaction reads at. Every acknowledged commit is included, and, as FoundationDB's
     * versions keep advancing while nothing commits, an idle engine moves its visible version up to the
     * clock (later commits are then numbered above it). While a commit awaits its fsync the read version
     * stays below it, so no transaction reads data that is not yet durable.
     */
    long readVersion() {
        checkHealthy();
        commitLock.lock();
        try {
            return readVersionLocked();
        } finally {
            commitLock.unlock();
        }
    }

    private long readVersionLocked() {
        if (inFlight.get() == 0) {
            long now = Math.max(visibleVersion.get(), clockVersion());
            visibleVersion.set(now);
            lastCommitVersion = Math.max(lastCommitVersion, now);
        }
        return visibleVersion.get();
    }

    /**
     * A read version for a transaction, as {@link #readVersion()}, pinned: the conflict history keeps every
     * write after it until the pin is released (or leaves the MVCC window).
     */
    ReadPin pinReadVersion() {
        checkHealthy();
        commitLock.lock();
        try {
            ReadPin pin = new ReadPin(readVersionLocked());
            readPins.addLast(pin);
            return pin;
        } finally {
            commitLock.unlock();
        }
    }

    /** Pins a read version a transaction was given explicitly ({@code setReadVersion}). */
    ReadPin pinExplicitReadVersion(long version) {
        commitLock.lock();
        try {
            ReadPin pin = new ReadPin(version);
            if (version >= prunedBelow) {
                explicitPins.add(pin); // below it the transaction can neither read nor commit (1007): nothing to hold
            }
            return pin;
        } finally {
            commitLock.unlock();
        }
    }

    /**
     * A live transaction's hold on its read version. Taken under the commit lock, so no commit can prune past it
     * between the version being read and the pin being seen; released by any thread, without the lock, once.
     */
    static final class ReadPin {
        final long version;
        private volatile boolean released;

        ReadPin(long version) {
            this.version = version;
        }

        void release() {
            released = true;
        }
    }

    long visibleVersion() {
        return visibleVersion.get();
    }

    /**
     * Fails with 1007 when reads at {@code version} are no longer possible, 1009 when not yet possible. Runs at every
     * read: the clock is read to the millisecond ({@link Clock#millis}, for the system clock a fraction of the cost of
     * {@link Clock#instant}, which was a sixth of a WAL writer's time at a thousand streams, three reads per stream
     * and commit), which may let a read through up to a millisecond after its version left the window.
     */
    void checkReadable(long version) {
        checkHealthy();
        long now = Math.max(Math.multiplyExact(clock.millis(), 1_000L), visibleVersion.get());
        if (version < prunedBelow || now - version > windowVersions) {
            throw new EmbeddedFdbException(FdbErrors.TRANSACTION_TOO_OLD);
        }
        if (version > visibleVersion.get()) {
            throw new EmbeddedFdbException(FdbErrors.FUTURE_VERSION);
        }
    }

    byte[] get(byte[] key, long version) {
        byte[] v = store.get(key, version);
        checkReadable(version);
        return v;
    }

    Iterator<Map.Entry<byte[], byte[]>> range(byte[] begin, byte[] end, long version, boolean reverse) {
        publishForRangeReads();
        return store.range(begin, end, version, reverse);
    }

    /**
     * Publishes the ordered index's keys to range readers when commits changed them since the last publication. The
     * writer changes the working tree only under the commit lock, so taking the lock finds it between changes. Commits
     * do not publish themselves: most are followed by no range read (appends read and write single keys), and
     * publishing after each made the next commit copy the paths to its keys again.
     */
    private void publishForRangeReads() {
        if (store.unpublished()) {
            commitLock.lock();
            try {
                store.publish();
            } finally {
                commitLock.unlock();
            }
        }
    }

    void checkHealthy() {
        Throwable f = failure;
        if (f != null) {
            throw new EmbeddedFdbException(FdbErrors.OPERATION_FAILED, "EmbeddedFdb is not serving: " + f.getMessage());
        }
    }

    // ---------------------------------------------------------------- commit

    void injectFaults(CommitFault fault, int count) {
        commitLock.lock();
        try {
            for (int i = 0; i < count; i++) {
                faults.addLast(fault);
            }
        } finally {
            commitLock.unlock();
        }
    }

    /**
     * Commits {@code request}; the future completes with the commit version once the commit is durable and
     * visible: on the calling thread in memory, and with a durable log that acknowledges written records (a sync
     * interval above zero) most often too, the caller writing its own record; otherwise on the log's syncer thread,
     * or on the thread of another commit that wrote this one's record with its own. Callers hop to their executor.
     */
    CompletableFuture<Long> commit(CommitRequest request) {
        long version;
        List<Effect> effects;
        CompletableFuture<Void> durable;
        CommitFault fault;
        commitLock.lock();
        try {
            checkHealthy();
            if (request.abandoned().getAsBoolean()) {
                throw new EmbeddedFdbException(FdbErrors.USED_DURING_COMMIT);
            }
            fault = faults.pollFirst();
            if (fault == CommitFault.NOT_COMMITTED) {
                throw new EmbeddedFdbException(FdbErrors.NOT_COMMITTED);
            } else if (fault == CommitFault.TRANSACTION_TOO_OLD) {
                throw new EmbeddedFdbException(FdbErrors.TRANSACTION_TOO_OLD);
            } else if (fault == CommitFault.UNKNOWN_RESULT_NOT_APPLIED) {
                throw new EmbeddedFdbException(FdbErrors.COMMIT_UNKNOWN_RESULT);
            }
            version = Math.max(lastCommitVersion + 1, clockVersion());
            long readVersion = request.readVersion() < 0 ? version : request.readVersion();
            if (version - readVersion > windowVersions || readVersion < prunedBelow) {
                throw new EmbeddedFdbException(FdbErrors.TRANSACTION_TOO_OLD);
            }
            if (readVersion < historyCutoff || conflicts(request.reads(), readVersion)) {
                throw new EmbeddedFdbException(FdbErrors.NOT_COMMITTED);
            }
            WriteMap writeMap = request.writeMap();
            effects = writeMap.effects(store::latest, versionstamp(version));
            if (request.everyKeyWriteKept()) {
                // the single-key entries are the keys of the key writes (but those a range clear took over, whose
                // range records them): record each as it is applied instead of finding its slot again
                List<KeyRange> notWritten = apply(version, effects, writeMap.firstKeyEffect(),
                        writeMap.endOfKeyEffects());
                recordWrites(request.rangeWrites(), notWritten, version);
            } else {
                apply(version, effects, 0, 0);
                List<KeyRange> keys = new ArrayList<>(request.keyWrites().size());
                for (byte[] k : request.keyWrites()) {
                    keys.add(KeyRange.single(k));
                }
                recordWrites(request.rangeWrites(), keys, version);
            }
            lastCommitVersion = version;
            prune(version);
            // range reads publish the keys written here before they read (publishForRangeReads)
            if (durability == null) {
                visibleVersion.set(version);
                durable = null;
            } else {
                inFlight.incrementAndGet();
                durable = durability.append(new LogRecord(version, effects));
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        } finally {
            commitLock.unlock();
        }
        if (durable == null) {
            return published(version, effects, fault);
        }
        durability.write();
        final long v = version;
        return durable.handle((ok, error) -> {
            if (error != null) {
                failure = new IllegalStateException("its durable log failed: " + error, error);
                inFlight.decrementAndGet();
                return CompletableFuture.<Long>failedFuture(new EmbeddedFdbException(FdbErrors.COMMIT_UNKNOWN_RESULT,
                        "Transaction may or may not have committed: the durable log failed: " + error));
            }
            visibleVersion.accumulateAndGet(v, Math::max);
            inFlight.decrementAndGet();
            return published(v, effects, fault);
        }).thenCompose(f -> f);
    }

    private CompletableFuture<Long> published(long version, List<Effect> effects, CommitFault fault) {
        watches.onCommit(effects, key -> store.get(key, version));
        if (fault == CommitFault.UNKNOWN_RESULT_APPLIED) {
            return CompletableFuture.failedFuture(new EmbeddedFdbException(FdbErrors.COMMIT_UNKNOWN_RESULT));
        }
        return CompletableFuture.completedFuture(version);
    }

    /**
     * Whether a commit after {@code readVersion} wrote into any of {@code reads}: the point writes the store's keys
     * remember, then the ranges in the conflict history.
     */
    private boolean conflicts(List<KeyRange> reads, long readVersion) {
        for (KeyRange r : reads) {
            if (r.isPoint() ? store.pointWrittenAfter(r.begin(), readVersion)
                    : !r.isEmpty() && store.rangeWrittenAfter(r.begin(), r.end(), readVersion)) {
                return true;
            }
        }
        return history.conflicts(reads, readVersion);
    }

    /**
     * Remembers the write conflict ranges of the commit at {@code version} that {@link #apply} did not: a point range
     * of a key the commit mutated in the key's slot of the store ({@link VersionedStore#recordPointWrite}, a hash
     * lookup), every other range in the conflict history.
     */
    private void recordWrites(List<KeyRange> writes, List<KeyRange> moreWrites, long version) {
        List<KeyRange> ranges = null;
        for (KeyRange w : moreWrites.isEmpty() ? writes : concat(writes, moreWrites)) {
            if (w.isPoint() && store.recordPointWrite(w.begin(), version)) {
                continue;
            }
            if (ranges == null) {
                ranges = new ArrayList<>();
            }
            ranges.add(w);
        }
        if (ranges != null) {
            history.record(ranges, version);
        }
    }

    private static List<KeyRange> concat(List<KeyRange> a, List<KeyRange> b) {
        List<KeyRange> all = new ArrayList<>(a.size() + b.size());
        all.addAll(a);
        all.addAll(b);
        return all;
    }

    /**
     * Applies {@code effects} at {@code version}. The effects in {@code [firstKey, endOfKeys)} are single-key
     * entries whose key is a write conflict range of the commit: each one applied to its key's slot is recorded
     * there as a point write; the ranges of those that changed nothing (a clear of a key without a value) are
     * returned, for the conflict history.
     */
    private List<KeyRange> apply(long version, List<Effect> effects, int firstKey, int endOfKeys) {
        List<KeyRange> notWritten = List.of();
        for (int i = 0; i < effects.size(); i++) {
            Effect e = effects.get(i);
            boolean key = i >= firstKey && i < endOfKeys;
            if (e.kind() == Effect.SET) {
                VersionedStore.Slot s = store.set(version, e.key(), e.value());
                if (key) {
                    s.conflictVersion = version;
                }
            } else if (!key) {
                store.clearRange(version, e.key(), e.value());
            } else {
                VersionedStore.Slot s = store.clearKey(version, e.key());
                if (s != null) {
                    s.conflictVersion = version;
                } else {
                    if (notWritten.isEmpty()) {
                        notWritten = new ArrayList<>();
                    }
                    notWritten.add(new KeyRange(e.key(), e.end()));
                }
            }
        }
        return notWritten;
    }

    private void prune(long version) {
        long windowCutoff = version - windowVersions;
        // Every later read version is at least the visible one; every live one is pinned.
        long visible = visibleVersion.get();
        long oldestPinned = oldestPinnedReadVersion(windowCutoff);
        // the store keeps what a live transaction reads, and the last unheldVersions for explicit read versions
        long cutoff = Math.max(windowCutoff, Math.min(visible - unheldVersions, oldestPinned));
        if (!pins.isEmpty()) {
            cutoff = Math.min(cutoff, pins.firstKey());
        }
        if (cutoff > prunedBelow) {
            prunedBelow = cutoff;
            store.prune(cutoff);
        }
        long needed = Math.min(visible, oldestPinned);
        long h = Math.max(windowCutoff, needed);
        if (h > historyCutoff) {
            historyCutoff = h;
            history.prune(h);
        }
    }

    /** The oldest read version still pinned inside the window, dropping released and expired pins; commit lock. */
    private long oldestPinnedReadVersion(long windowCutoff) {
        ReadPin head;
        while ((head = readPins.peekFirst()) != null && (head.released || head.version < windowCutoff)) {
            readPins.pollFirst();
        }
        long oldest = head == null ? Long.MAX_VALUE : head.version;
        if (!explicitPins.isEmpty()) {
            explicitPins.removeIf(p -> p.released || p.version < windowCutoff);
            for (ReadPin p : explicitPins) {
                oldest = Math.min(oldest, p.version);
            }
        }
        return oldest;
    }

    /** The 10-byte versionstamp of the commit at {@code version}: big-endian version, then batch order 0. */
    static byte[] versionstamp(long version) {
        return ByteBuffer.allocate(10).putLong(version).putShort((short) 0).array();
    }

    // ---------------------------------------------------------------- snapshots for compaction

    /**
     * A consistent view of the whole key space for the durable log's snapshot: at {@code version} when that
     * is still readable, else at the newest visible version (the log's records are whole-value overwrites,
     * so replaying records the snapshot already includes gives the same state).
     */
    StateSnapshot openSnapshot(long version) {
        long at;
        commitLock.lock();
        try {
            at = version >= prunedBelow ? version : visibleVersion.get();
            pins.merge(at, 1, Integer::sum);
        } finally {
            commitLock.unlock();
        }
        final long pinned = at;
        return new StateSnapshot() {
            private boolean closed;

            @Override
            public Iterator<Map.Entry<byte[], byte[]>> entries() {
                return range(Bytes.EMPTY, null, pinned, false);
            }

            @Override
            public void close() {
                commitLock.lock();
                try {
                    if (!closed) {
                        closed = true;
                        pins.computeIfPresent(pinned, (k, n) -> n == 1 ? null : n - 1);
                    }
                } finally {
                    commitLock.unlock();
                }
            }
        };
    }

    // ---------------------------------------------------------------- watches and stats

    WatchRegistry watches() {
        return watches;
    }

    EmbeddedFdb.EmbeddedStats stats() {
        commitLock.lock();
        try {
            store.publish(); // the key count is the published tree's
            return new EmbeddedFdb.EmbeddedStats(store.keyCount(), store.versionEntries(), history.boundaries(),
                    visibleVersion.get(), watches.outstanding());
        } finally {
            commitLock.unlock();
        }
    }

    /** Stops serving: every later operation fails with 1000 naming {@code reason}. */
    void fail(Throwable reason) {
        failure = reason;
    }
}
