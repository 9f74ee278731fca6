package io.nereus.pulsar;

import com.google.common.collect.Range;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.CursorStateCodec;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.WriteOutcome;
import java.time.Clock;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.AsyncCallbacks;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedCursorMXBean;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.ScanOutcome;
import org.apache.bookkeeper.mledger.impl.AckSetStateUtil;
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Pulsar {@link ManagedCursor} over a Nereus stream: a subscription's acknowledgements and read position.
 *
 * <p>This class is the facade; the work is done by small collaborators: {@link AckTracker} (mark-delete end,
 * individually deleted ranges, batch-index ack sets), {@link CursorPersistence} (coalesced, rate-limited saves
 * of durable cursors to FoundationDB, conditional on the writer epoch) and {@link CursorReads} (reads that skip
 * acknowledged entries, the newest-matching search, scans, replays). The one waiting read is parked on
 * {@link CursorHost#whenCommittedBeyond}, never polled.
 *
 * <p>Positions are {@code (host.ledgerId(), offset)}; the mark-delete position is {@code markDeleteEnd() - 1}.
 * In-memory state is guarded by this object's monitor and never held across I/O. Every callback to Pulsar
 * runs on {@link CursorHost#executor()}; the synchronous variants block only their caller (tests, tools).
 *
 * <p>Lifecycle: open → closed, by {@link #closeAsync()} (flushes the newest state), {@link #deleteState()} or
 * {@link #ledgerClosed} (stops persisting). A closed cursor fails operations with
 * {@link ManagedLedgerException.CursorAlreadyClosedException}.
 */
public final class NereusManagedCursor implements ManagedCursor {
    private static final Logger LOG = LoggerFactory.getLogger(NereusManagedCursor.class);
    private static final long NO_MAX_SIZE_LIMIT = -1;
    /** Pulsar's compaction subscription, whose mark-delete properties survive a reset. */
    private static final String COMPACTION_CURSOR = "__compaction";

    private final CursorHost host;
    private final String name;
    private final boolean durable;
    private final boolean readCompacted;
    private final Clock clock;
    private final CursorStatsBean stats;
    private final CursorPersistence persistence;
    private final CursorReads reads;
    private final AckTracker acks;

    private long readOffset;
    /** Bumped by every explicit move of the read position, so a read that raced it does not move it back. */
    private long readEpoch;
    private Map<String, Long> properties;
    private Map<String, String> cursorProperties;
    private WaitingRead waiting;
    private boolean closed;
    private CompletableFuture<Void> closeFuture;
    private volatile boolean active;
    private volatile boolean alwaysInactive;
    private volatile long lastActive;
    private volatile double nonDurableThrottle;
    private Position statsLastReadPosition;
    private final AtomicInteger pendingReadOps = new AtomicInteger();
    private final LongAdder entriesRead = new LongAdder();
    private final LongAdder entriesReadBytes = new LongAdder();

    private NereusManagedCursor(CursorHost host, String name, boolean durable, boolean readCompacted,
            CursorState state, long readOffset) {
        this.host = host;
        this.name = name;
        this.durable = durable;
        this.readCompacted = readCompacted;
        this.clock = Clock.systemUTC();
        this.stats = new CursorStatsBean(name, host.name());
        this.acks = AckTracker.of(state);
        this.readOffset = readOffset;
        this.properties = state.properties();
        this.cursorProperties = state.cursorProperties();
        this.lastActive = clock.millis();
        this.reads = new CursorReads(host, new CursorReads.Acks() {
            @Override
            public boolean isDeleted(long offset) {
                synchronized (NereusManagedCursor.this) {
                    return acks.isDeleted(offset);
                }
            }

            @Override
            public long nextUndeleted(long offset) {
                synchronized (NereusManagedCursor.this) {
                    return acks.nextUndeleted(offset);
                }
            }
        }, clock);
        double rate = host.config().getThrottleMarkDelete();
        this.nonDurableThrottle = rate;
        this.persistence = durable
                ? new CursorPersistence(
                        s -> host.cursorStore().saveCursor(host.streamId(), name, host.writerEpoch(), s),
                        state, rate, this::persisted, stats, CursorPersistence.Scheduler.on(host.executor()),
                        System::nanoTime)
                : null;
    }

    // ---------------------------------------------------------------- entry points of the managed ledger

    /**
     * Opens the durable cursor {@code name}: an existing cursor keeps its stored state (the arguments are then
     * ignored, as in Pulsar); a new one starts at the first offset (Earliest) or the committed end (Latest)
     * with the given properties and is saved before the future completes. Completes on the host's executor.
     */
    static CompletableFuture<NereusManagedCursor> openDurable(CursorHost host, String name,
            CommandSubscribe.InitialPosition initial, Map<String, Long> properties,
            Map<String, String> cursorProperties) {
        if (name == null || name.isEmpty()) {
            return CompletableFuture.failedFuture(new ManagedLedgerException("cursor name must not be empty"));
        }
        return host.cursorStore().loadCursor(host.streamId(), name).thenCompose(stored -> {
            if (stored.isPresent()) {
                CursorState s = stored.get();
                NereusManagedCursor c = new NereusManagedCursor(host, name, true, false, s,
                        Math.max(s.markDeleteEnd(), host.firstOffset()));
                return CompletableFuture.completedFuture(c);
            }
            long start = initial == CommandSubscribe.InitialPosition.Latest ? host.committedEnd() : host.firstOffset();
            CursorState s = new CursorState(start, List.of(), new TreeMap<>(),
                    properties == null ? Map.of() : properties,
                    cursorProperties == null ? Map.of() : cursorProperties);
            NereusManagedCursor c = new NereusManagedCursor(host, name, true, false, s, start);
            return c.persistence.save(s).thenApply(v -> c);
        }).handleAsync((c, t) -> {
            if (t != null) {
                throw new java.util.concurrent.CompletionException(PulsarErrors.map(t));
            }
            return c;
        }, host.executor());
    }

    /**
     * A cursor whose state lives only in memory (readers, {@code duplicateNonDurableCursor}), with Pulsar's
     * NonDurableCursorImpl positioning: {@code start} is the mark-delete position; a null start or one beyond
     * the last entry starts at the end (Latest) or the first entry (Earliest); the earliest marker
     * (ledger id -1) starts at the first entry.
     */
    static NereusManagedCursor nonDurable(CursorHost host, String name, Position start,
            CommandSubscribe.InitialPosition initial, boolean readCompacted) {
        long first = host.firstOffset();
        long end = host.committedEnd();
        long mdEnd;
        Position last = host.position(end - 1);
        if (start == null || start.compareTo(last) > 0) {
            mdEnd = initial == CommandSubscribe.InitialPosition.Earliest ? first : end;
        } else if (start.getLedgerId() == PositionFactory.EARLIEST.getLedgerId()) {
            mdEnd = first;
        } else if (start.getLedgerId() < host.ledgerId()) {
            mdEnd = first;
        } else {
            long next = start.getEntryId() + 1;
            mdEnd = readCompacted ? Math.max(0, Math.min(next, end)) : Math.max(first, Math.min(next, end));
        }
        return new NereusManagedCursor(host, name, false, readCompacted, CursorState.at(mdEnd), mdEnd);
    }

    /** The first offset not acknowledged by the mark-delete, in memory. */
    public synchronized long markDeleteEnd() {
        return acks.markDeleteEnd();
    }

    /** The mark-delete end last saved durably (what the ledger may trim below); in memory for non-durable. */
    public long persistedMarkDeleteEnd() {
        return durable ? persistence.persisted().markDeleteEnd() : markDeleteEnd();
    }

    /** Closes the cursor: fails the parked read, flushes the newest state (durable), tells the host. */
    public CompletableFuture<Void> closeAsync() {
        WaitingRead w;
        synchronized (this) {
            if (closeFuture != null) {
                return closeFuture;
            }
            closed = true;
            w = takeWaiting();
            closeFuture = new CompletableFuture<>();
        }
        failWaiting(w, new ManagedLedgerException.CursorAlreadyClosedException("Cursor was already closed"));
        CompletableFuture<Void> flushed = durable ? persistence.flush() : CompletableFuture.completedFuture(null);
        CompletableFuture<Void> result = closeFuture;
        flushed.whenComplete((v, t) -> {
            active = false;
            host.cursorClosed(this);
            if (t != null) {
                LOG.warn("cursor {} of {} closed without saving its newest state", name, host.name(), t);
                result.completeExceptionally(PulsarErrors.map(t));
            } else {
                result.complete(null);
            }
        });
        return result;
    }

    /**
     * For {@code ManagedLedger.asyncDeleteCursor}: closes the cursor without flushing, waits for a save in
     * flight, then removes its durable state (conditional on the writer epoch).
     */
    public CompletableFuture<Void> deleteState() {
        WaitingRead w;
        synchronized (this) {
            closed = true;
            w = takeWaiting();
            if (closeFuture == null) {
                closeFuture = CompletableFuture.completedFuture(null);
            }
        }
        failWaiting(w, new ManagedLedgerException.CursorAlreadyClosedException("Cursor was deleted"));
        host.cursorClosed(this);
        if (!durable) {
            return CompletableFuture.completedFuture(null);
        }
        persistence.stop(new ManagedLedgerException.CursorAlreadyClosedException("cursor " + name + " was deleted"));
        return persistence.idle()
                .thenCompose(v -> host.cursorStore().deleteCursor(host.streamId(), name, host.writerEpoch()))
                .thenAccept(outcome -> {
                    if (outcome instanceof WriteOutcome.Fenced f) {
                        throw new java.util.concurrent.CompletionException(
                                new ManagedLedgerException.ManagedLedgerFencedException("cursor " + name
                                        + " not deleted: writer epoch is " + f.headEpoch() + ", this broker has "
                                        + f.requestEpoch()));
                    }
                });
    }

    /** The ledger was closed, deleted or fenced: fail the parked read with {@code why}, stop persisting. */
    public void ledgerClosed(ManagedLedgerException why) {
        WaitingRead w;
        synchronized (this) {
            closed = true;
            w = takeWaiting();
            if (closeFuture == null) {
                closeFuture = CompletableFuture.completedFuture(null);
            }
        }
        failWaiting(w, why);
        if (durable) {
            persistence.stop(why);
        }
    }

    /** Makes this (non-durable) cursor acknowledge exactly what {@code source} acknowledges. */
    synchronized void copyAcksFrom(NereusManagedCursor source) {
        AckTracker copy;
        synchronized (source) {
            copy = AckTracker.of(source.acks.toState(Map.of(), Map.of()));
        }
        acks.copyFrom(copy);
        readOffset = Math.max(readOffset, acks.markDeleteEnd());
    }

    // ---------------------------------------------------------------- identity, lifecycle, activity

    @Override
    public String getName() {
        return name;
    }

    @Override
    public boolean isDurable() {
        return durable;
    }

    @Override
    public synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public ManagedLedger getManagedLedger() {
        return host.ledger();
    }

    @Override
    public void close() throws InterruptedException, ManagedLedgerException {
        await(closeAsync());
    }

    @Override
    public void asyncClose(AsyncCallbacks.CloseCallback callback, Object ctx) {
        deliver(closeAsync(), v -> callback.closeComplete(ctx), e -> callback.closeFailed(e, ctx));
    }

    @Override
    public long getLastActive() {
        return lastActive;
    }

    @Override
    public void updateLastActive() {
        lastActive = clock.millis();
    }

    @Override
    public void setActive() {
        if (!alwaysInactive) {
            active = true;
        }
    }

    @Override
    public void setInactive() {
        active = false;
    }

    @Override
    public void setAlwaysInactive() {
        alwaysInactive = true;
        active = false;
    }

    @Override
    public boolean isActive() {
        return active;
    }

    // ---------------------------------------------------------------- properties

    @Override
    public synchronized Map<String, Long> getProperties() {
        return properties;
    }

    @Override
    public synchronized Map<String, String> getCursorProperties() {
        return cursorProperties;
    }

    @Override
    public boolean putProperty(String key, Long value) {
        if (key == null || value == null) {
            return false;
        }
        CursorState s;
        synchronized (this) {
            Map<String, Long> m = new HashMap<>(properties);
            m.put(key, value);
            properties = Map.copyOf(m);
            s = snapshot();
        }
        persistLater(s);
        return true;
    }

    @Override
    public boolean removeProperty(String key) {
        CursorState s;
        synchronized (this) {
            if (key == null || !properties.containsKey(key)) {
                return false;
            }
            Map<String, Long> m = new HashMap<>(properties);
            m.remove(key);
            properties = Map.copyOf(m);
            s = snapshot();
        }
        persistLater(s);
        return true;
    }

    @Override
    public CompletableFuture<Void> putCursorProperty(String key, String value) {
        if (key == null || value == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "cursor property key and value must not be null: " + key + "=" + value));
        }
        return updateCursorProperties(m -> m.put(key, value));
    }

    @Override
    public CompletableFuture<Void> setCursorProperties(Map<String, String> newProperties) {
        if (newProperties == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("cursor properties must not be null"));
        }
        Map<String, String> copy = new HashMap<>(newProperties);
        return updateCursorProperties(m -> {
            m.clear();
            m.putAll(copy);
        });
    }

    @Override
    public CompletableFuture<Void> removeCursorProperty(String key) {
        return updateCursorProperties(m -> m.remove(key));
    }

    private CompletableFuture<Void> updateCursorProperties(Consumer<Map<String, String>> change) {
        CursorState s;
        synchronized (this) {
            if (closed) {
                return closedFailure();
            }
            Map<String, String> m = new HashMap<>(cursorProperties);
            change.accept(m);
            cursorProperties = Map.copyOf(m);
            s = snapshot();
        }
        return persistNow(s);
    }

    // ---------------------------------------------------------------- reads

    @Override
    public List<Entry> readEntries(int numberOfEntriesToRead) throws InterruptedException, ManagedLedgerException {
        return await(read(numberOfEntriesToRead, NO_MAX_SIZE_LIMIT, null, null));
    }

    @Override
    public void asyncReadEntries(int numberOfEntriesToRead, AsyncCallbacks.ReadEntriesCallback callback, Object ctx,
            Position maxPosition) {
        asyncReadEntries(numberOfEntriesToRead, NO_MAX_SIZE_LIMIT, callback, ctx, maxPosition);
    }

    @Override
    public void asyncReadEntries(int numberOfEntriesToRead, long maxSizeBytes,
            AsyncCallbacks.ReadEntriesCallback callback, Object ctx, Position maxPosition) {
        asyncReadEntriesWithSkip(numberOfEntriesToRead, maxSizeBytes, callback, ctx, maxPosition, null);
    }

    @Override
    public void asyncReadEntriesWithSkip(int numberOfEntriesToRead, long maxSizeBytes,
            AsyncCallbacks.ReadEntriesCallback callback, Object ctx, Position maxPosition,
            Predicate<Position> skipCondition) {
        deliverRead(read(numberOfEntriesToRead, maxSizeBytes, maxPosition, skipCondition), callback, ctx);
    }

    @Override
    public List<Entry> readEntriesOrWait(int maxEntries) throws InterruptedException, ManagedLedgerException {
        return readEntriesOrWait(maxEntries, NO_MAX_SIZE_LIMIT);
    }

    @Override
    public List<Entry> readEntriesOrWait(int maxEntries, long maxSizeBytes)
            throws InterruptedException, ManagedLedgerException {
        CompletableFuture<List<Entry>> f = readOrWait(maxEntries, maxSizeBytes, null, null);
        try {
            return f.get();
        } catch (ExecutionException e) {
            throw PulsarErrors.map(e.getCause());
        }
    }

    @Override
    public void asyncReadEntriesOrWait(int maxEntries, AsyncCallbacks.ReadEntriesCallback callback, Object ctx,
            Position maxPosition) {
        asyncReadEntriesOrWait(maxEntries, NO_MAX_SIZE_LIMIT, callback, ctx, maxPosition);
    }

    @Override
    public void asyncReadEntriesOrWait(int maxEntries, long maxSizeBytes, AsyncCallbacks.ReadEntriesCallback callback,
            Object ctx, Position maxPosition) {
        asyncReadEntriesWithSkipOrWait(maxEntries, maxSizeBytes, callback, ctx, maxPosition, null);
    }

    @Override
    public void asyncReadEntriesWithSkipOrWait(int maxEntries, AsyncCallbacks.ReadEntriesCallback callback,
            Object ctx, Position maxPosition, Predicate<Position> skipCondition) {
        asyncReadEntriesWithSkipOrWait(maxEntries, NO_MAX_SIZE_LIMIT, callback, ctx, maxPosition, skipCondition);
    }

    @Override
    public void asyncReadEntriesWithSkipOrWait(int maxEntries, long maxSizeBytes,
            AsyncCallbacks.ReadEntriesCallback callback, Object ctx, Position maxPosition,
            Predicate<Position> skipCondition) {
        deliverRead(readOrWait(maxEntries, maxSizeBytes, maxPosition, skipCondition), callback, ctx);
    }

    @Override
    public boolean cancelPendingReadRequest() {
        WaitingRead w;
        synchronized (this) {
            w = takeWaiting();
        }
        if (w == null) {
            return false;
        }
        w.trigger.cancel(false);
        return true;
    }

    /** True while a read is parked waiting for entries. */
    public synchronized boolean hasPendingReadRequest() {
        return waiting != null;
    }

    /**
     * Reads from the read position, skipping acknowledged entries (and those {@code skip} matches), and moves
     * the read position past what it read unless the position was moved meanwhile.
     */
    private CompletableFuture<List<Entry>> read(int maxEntries, long maxSizeBytes, Position maxPosition,
            Predicate<Position> skip) {
        if (maxEntries <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "number of entries to read must be > 0: " + maxEntries));
        }
        long from;
        long epoch;
        int count;
        synchronized (this) {
            if (closed) {
                return closedFailure();
            }
            from = effectiveReadOffset();
            epoch = readEpoch;
            count = applyMaxSizeCap(maxEntries, maxSizeBytes);
        }
        long end = endExclusive(maxPosition);
        pendingReadOps.incrementAndGet();
        return reads.readUnacked(from, end, count, maxSizeBytes, skip).thenApply(batch -> {
            long bytes = 0;
            for (Entry e : batch.entries()) {
                bytes += e.getLength();
            }
            updateReadStats(batch.entries().size(), bytes);
            synchronized (this) {
                if (epoch == readEpoch && batch.nextOffset() > readOffset) {
                    readOffset = batch.nextOffset();
                }
            }
            return batch.entries();
        }).whenComplete((v, t) -> pendingReadOps.decrementAndGet());
    }

    /**
     * Reads now when an entry is available at the read position (and not beyond {@code maxPosition});
     * otherwise parks one read until the host commits beyond it. At the end of a terminated ledger fails with
     * {@link ManagedLedgerException.NoMoreEntriesToReadException}.
     */
    private CompletableFuture<List<Entry>> readOrWait(int maxEntries, long maxSizeBytes, Position maxPosition,
            Predicate<Position> skip) {
        if (maxEntries <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "number of entries to read must be > 0: " + maxEntries));
        }
        WaitingRead w;
        synchronized (this) {
            if (closed) {
                return closedFailure();
            }
            long from = effectiveReadOffset();
            long end = host.committedEnd();
            boolean available = from < end;
            if (available && endExclusive(maxPosition) > from) {
                w = null;
            } else if (host.isTerminated() && !available) {
                return CompletableFuture.failedFuture(new ManagedLedgerException.NoMoreEntriesToReadException(
                        "ledger " + host.name() + " is terminated and cursor " + name + " is at its end"));
            } else if (waiting != null) {
                return CompletableFuture.failedFuture(new ManagedLedgerException.ConcurrentWaitCallbackException());
            } else {
                long waitBeyond = available ? end : from; // above maxPosition: wait for the next append
                w = new WaitingRead(maxEntries, maxSizeBytes, maxPosition, skip, waitBeyond);
                waiting = w;
            }
        }
        if (w == null) {
            return read(maxEntries, maxSizeBytes, maxPosition, skip);
        }
        w.trigger = host.whenCommittedBeyond(w.waitBeyond);
        w.trigger.whenCompleteAsync((v, t) -> wake(w, t), host.executor());
        return w.result;
    }

    private void wake(WaitingRead w, Throwable error) {
        boolean progressed;
        synchronized (this) {
            if (waiting != w) {
                return; // cancelled, or failed by close
            }
            waiting = null;
            progressed = host.committedEnd() > w.waitBeyond || host.isTerminated();
        }
        if (error != null && !PulsarErrors.isCancellation(error)) {
            w.result.completeExceptionally(PulsarErrors.map(error));
        } else if (!progressed) {
            w.result.completeExceptionally(new ManagedLedgerException.ManagedLedgerAlreadyClosedException(
                    "ledger " + host.name() + " closed while cursor " + name + " was waiting for entries"));
        } else {
            readOrWait(w.maxEntries, w.maxSizeBytes, w.maxPosition, w.skip).whenComplete((entries, t) -> {
                if (t != null) {
                    w.result.completeExceptionally(t);
                } else {
                    w.result.complete(entries);
                }
            });
        }
    }

    private WaitingRead takeWaiting() {
        WaitingRead w = waiting;
        waiting = null;
        return w;
    }

    private static void failWaiting(WaitingRead w, ManagedLedgerException why) {
        if (w != null) {
            if (w.trigger != null) {
                w.trigger.cancel(false);
            }
            w.result.completeExceptionally(why);
        }
    }

    /** The one parked read: what it asked for and the host future that wakes it. */
    private static final class WaitingRead {
        final int maxEntries;
        final long maxSizeBytes;
        final Position maxPosition;
        final Predicate<Position> skip;
        final long waitBeyond;
        final CompletableFuture<List<Entry>> result = new CompletableFuture<>();
        volatile CompletableFuture<Void> trigger;

        WaitingRead(int maxEntries, long maxSizeBytes, Position maxPosition, Predicate<Position> skip,
                long waitBeyond) {
            this.maxEntries = maxEntries;
            this.maxSizeBytes = maxSizeBytes;
            this.maxPosition = maxPosition;
            this.skip = skip;
            this.waitBeyond = waitBeyond;
        }
    }

    @Override
    public synchronized boolean hasMoreEntries() {
        return effectiveReadOffset() < host.committedEnd();
    }

    @Override
    public synchronized long getNumberOfEntries() {
        long from = effectiveReadOffset();
        long end = host.committedEnd();
        return from >= end ? 0 : end - from - acks.countIndividuallyDeleted(from, end);
    }

    @Override
    public synchronized long getNumberOfEntriesInBacklog(boolean isPrecise) {
        long md = acks.markDeleteEnd();
        long from = Math.max(md, host.firstOffset());
        long end = host.committedEnd();
        if (from >= end) {
            return 0;
        }
        // every individually deleted range lies in [md, end); only a trim above the mark-delete cuts some off
        long deleted = acks.individuallyDeletedCount() - (from > md ? acks.countIndividuallyDeleted(md, from) : 0);
        return Math.max(0, end - from - deleted);
    }

    @Override
    public Entry getNthEntry(int n, IndividualDeletedEntries deletedEntries)
            throws InterruptedException, ManagedLedgerException {
        return await(nthEntry(n, deletedEntries));
    }

    @Override
    public void asyncGetNthEntry(int n, IndividualDeletedEntries deletedEntries,
            AsyncCallbacks.ReadEntryCallback callback, Object ctx) {
        deliver(nthEntry(n, deletedEntries), e -> callback.readEntryComplete(e, ctx),
                e -> callback.readEntryFailed(e, ctx));
    }

    /** The n-th entry after the mark-delete position (optionally not counting deleted ones); null past the end. */
    private CompletableFuture<Entry> nthEntry(int n, IndividualDeletedEntries deletedEntries) {
        if (n <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("n must be > 0: " + n));
        }
        long offset;
        synchronized (this) {
            if (closed) {
                return closedFailure();
            }
            long start = Math.max(acks.markDeleteEnd(), host.firstOffset());
            offset = deletedEntries == IndividualDeletedEntries.Exclude
                    ? acks.nthUndeleted(start, n) : start + n - 1;
        }
        if (offset >= host.committedEnd()) {
            return CompletableFuture.completedFuture(null);
        }
        return reads.readOne(offset);
    }

    @Override
    public Set<? extends Position> asyncReplayEntries(Set<? extends Position> positions,
            AsyncCallbacks.ReadEntriesCallback callback, Object ctx) {
        return asyncReplayEntries(positions, callback, ctx, false);
    }

    @Override
    public Set<? extends Position> asyncReplayEntries(Set<? extends Position> positions,
            AsyncCallbacks.ReadEntriesCallback callback, Object ctx, boolean sortEntries) {
        Set<Position> acked = reads.acknowledged(positions);
        deliverRead(replay(positions, acked, sortEntries), callback, ctx);
        return acked;
    }

    @Override
    public List<Entry> replayEntries(Set<? extends Position> positions)
            throws InterruptedException, ManagedLedgerException {
        return await(replay(positions, reads.acknowledged(positions), false));
    }

    private CompletableFuture<List<Entry>> replay(Set<? extends Position> positions, Set<Position> acked,
            boolean sort) {
        if (isClosed()) {
            return closedFailure();
        }
        List<Long> offsets = new ArrayList<>();
        for (Position p : positions) {
            if (acked.contains(p)) {
                continue;
            }
            if (p.getLedgerId() != host.ledgerId()) {
                return CompletableFuture.failedFuture(new ManagedLedgerException.InvalidCursorPositionException(
                        "replay position " + p + " is not in ledger " + host.ledgerId() + " of " + host.name()));
            }
            offsets.add(p.getEntryId());
        }
        return reads.readEach(offsets, sort);
    }

    @Override
    public void trimDeletedEntries(List<Entry> entries) {
        entries.removeIf(e -> {
            boolean deleted = isMessageDeleted(e.getPosition());
            if (deleted) {
                e.release();
            }
            return deleted;
        });
    }

    @Override
    public int applyMaxSizeCap(int maxEntries, long maxSizeBytes) {
        if (maxSizeBytes == NO_MAX_SIZE_LIMIT) {
            return maxEntries;
        }
        double avg = host.averageEntryBytes();
        if (avg <= 0) {
            return maxEntries;
        }
        long estimate = (long) (maxSizeBytes / avg);
        return (int) Math.max(1, Math.min(maxEntries, estimate));
    }

    @Override
    public void updateReadStats(int readEntriesCount, long readEntriesSize) {
        entriesRead.add(readEntriesCount);
        entriesReadBytes.add(readEntriesSize);
    }

    /** Entries this cursor has read (for stats and tests). */
    public long entriesRead() {
        return entriesRead.sum();
    }

    // ---------------------------------------------------------------- positions

    @Override
    public synchronized Position getReadPosition() {
        return host.position(effectiveReadOffset());
    }

    @Override
    public synchronized Position getMarkDeletedPosition() {
        return host.position(acks.markDeleteEnd() - 1);
    }

    @Override
    public Position getPersistentMarkDeletedPosition() {
        return host.position(persistedMarkDeleteEnd() - 1);
    }

    @Override
    public Position getFirstPosition() {
        return host.position(host.firstOffset());
    }

    @Override
    public void rewind() {
        synchronized (this) {
            readOffset = acks.markDeleteEnd();
            readEpoch++;
        }
    }

    @Override
    public void seek(Position newReadPosition, boolean force) {
        synchronized (this) {
            long target = clampToLedger(newReadPosition);
            if (!force && target < acks.markDeleteEnd()) {
                target = acks.markDeleteEnd();
            }
            readOffset = target;
            readEpoch++;
        }
    }

    @Override
    public synchronized boolean checkAndUpdateReadPositionChanged() {
        Position read = host.position(effectiveReadOffset());
        boolean onTail = effectiveReadOffset() >= host.committedEnd() - 1;
        boolean changed = !read.equals(statsLastReadPosition);
        statsLastReadPosition = read;
        return onTail || changed;
    }

    // ---------------------------------------------------------------- acknowledgements

    @Override
    public void markDelete(Position position) throws InterruptedException, ManagedLedgerException {
        markDelete(position, Map.of());
    }

    @Override
    public void markDelete(Position position, Map<String, Long> props)
            throws InterruptedException, ManagedLedgerException {
        await(markDeleteAsync(position, props));
    }

    @Override
    public void asyncMarkDelete(Position position, AsyncCallbacks.MarkDeleteCallback callback, Object ctx) {
        asyncMarkDelete(position, Map.of(), callback, ctx);
    }

    @Override
    public void asyncMarkDelete(Position position, Map<String, Long> props,
            AsyncCallbacks.MarkDeleteCallback callback, Object ctx) {
        deliver(markDeleteAsync(position, props), v -> callback.markDeleteComplete(ctx),
                e -> callback.markDeleteFailed(e, ctx));
    }

    /**
     * Acknowledges everything up to and including {@code position} (a position carrying a batch ack set
     * acknowledges everything before it and those batch indexes). Beyond the last confirmed entry fails with
     * {@link ManagedLedgerException.InvalidCursorPositionException}; older than the current mark-delete
     * completes without change. The mark-delete properties become {@code props}.
     */
    private CompletableFuture<Void> markDeleteAsync(Position position, Map<String, Long> props) {
        if (position == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("mark-delete position is null"));
        }
        long[] ackSet = AckSetStateUtil.getAckSetArrayOrNull(position);
        CursorState s;
        synchronized (this) {
            if (closed) {
                return closedFailure();
            }
            long end = host.committedEnd();
            if (position.getLedgerId() > host.ledgerId()
                    || (position.getLedgerId() == host.ledgerId() && position.getEntryId() >= end)) {
                return CompletableFuture.failedFuture(new ManagedLedgerException.InvalidCursorPositionException(
                        "mark-delete position " + position + " is beyond the last confirmed entry "
                                + host.position(end - 1) + " of " + host.name()));
            }
            long offset = position.getLedgerId() < host.ledgerId() ? host.firstOffset() - 1 : position.getEntryId();
            if (offset + 1 < acks.markDeleteEnd() && ackSet == null) {
                return CompletableFuture.completedFuture(null); // older than the mark-delete: nothing to do
            }
            if (ackSet != null && batchIndexAcks() && offset >= 0) {
                acks.markDeleteBatch(offset, BitSet.valueOf(ackSet));
            } else if (ackSet != null) {
                acks.markDeleteTo(offset);
            } else {
                acks.markDeleteTo(offset + 1);
            }
            properties = props == null ? Map.of() : Map.copyOf(props);
            readOffset = Math.max(readOffset, acks.markDeleteEnd());
            s = snapshot();
        }
        return persistLater(s);
    }

    @Override
    public void delete(Position position) throws InterruptedException, ManagedLedgerException {
        delete(List.of(position));
    }

    @Override
    public void asyncDelete(Position position, AsyncCallbacks.DeleteCallback callback, Object ctx) {
        asyncDelete(List.of(position), callback, ctx);
    }

    @Override
    public void delete(Iterable<Position> positions) throws InterruptedException, ManagedLedgerException {
        await(deleteAsync(positions));
    }

    @Override
    public void asyncDelete(Iterable<Position> positions, AsyncCallbacks.DeleteCallback callback, Object ctx) {
        deliver(deleteAsync(positions), v -> callback.deleteComplete(ctx), e -> callback.deleteFailed(e, ctx));
    }

    /**
     * Acknowledges individual entries, or batch indexes of entries when a position carries an ack set (bits
     * set = indexes still unacknowledged; ignored when batch-index acks are disabled, as in Pulsar). The
     * mark-delete advances over what became contiguous. Nothing is applied when a position is beyond the
     * last confirmed entry.
     */
    private CompletableFuture<Void> deleteAsync(Iterable<Position> positions) {
        if (positions == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("positions to delete are null"));
        }
        CursorState s;
        synchronized (this) {
            if (closed) {
                return closedFailure();
            }
            long end = host.committedEnd();
            for (Position p : positions) {
                if (p == null || p.getLedgerId() > host.ledgerId()
                        || (p.getLedgerId() == host.ledgerId() && p.getEntryId() >= end)) {
                    return CompletableFuture.failedFuture(new ManagedLedgerException.InvalidCursorPositionException(
                            "deleted position " + p + " is beyond the last confirmed entry "
                                    + host.position(end - 1) + " of " + host.name()));
                }
            }
            boolean changed = false;
            for (Position p : positions) {
                if (p.getLedgerId() < host.ledgerId() || p.getEntryId() < 0) {
                    continue;
                }
                long[] ackSet = AckSetStateUtil.getAckSetArrayOrNull(p);
                if (ackSet == null || ackSet.length == 0) {
                    changed |= acks.delete(p.getEntryId());
                } else if (batchIndexAcks()) {
                    changed |= acks.deleteBatchIndexes(p.getEntryId(), BitSet.valueOf(ackSet));
                }
            }
            if (!changed) {
                return CompletableFuture.completedFuture(null);
            }
            readOffset = Math.max(readOffset, acks.markDeleteEnd());
            s = snapshot();
        }
        return persistLater(s);
    }

    @Override
    public synchronized boolean isMessageDeleted(Position position) {
        if (position.getLedgerId() != host.ledgerId()) {
            return position.getLedgerId() < host.ledgerId();
        }
        return acks.isDeleted(position.getEntryId());
    }

    @Override
    public synchronized long[] getDeletedBatchIndexesAsLongArray(Position position) {
        return batchIndexAcks() && position.getLedgerId() == host.ledgerId()
                ? acks.batchAckSet(position.getEntryId()) : null;
    }

    @Override
    public long[] getBatchPositionAckSet(Position position) {
        return getDeletedBatchIndexesAsLongArray(position);
    }

    @Override
    public synchronized Range<Position> getLastIndividualDeletedRange() {
        return acks.lastRange()
                .map(r -> Range.openClosed(host.position(r.start() - 1), host.position(r.end() - 1)))
                .orElse(null);
    }

    @Override
    public synchronized int getTotalNonContiguousDeletedMessagesRange() {
        return acks.rangeCount();
    }

    @Override
    public int getNonContiguousDeletedMessagesRangeSerializedSize() {
        List<OffsetRange> ranges;
        synchronized (this) {
            if (acks.rangeCount() == 0) {
                return 0;
            }
            ranges = acks.ranges();
        }
        CursorState onlyRanges = new CursorState(ranges.get(0).start(), ranges, new TreeMap<>(), Map.of(), Map.of());
        return CursorStateCodec.INSTANCE.encode(onlyRanges).stream().mapToInt(b -> b.length).sum();
    }

    @Override
    public synchronized long getNumberOfEntriesSinceFirstNotAckedMessage() {
        // Pulsar counts the range (mark-delete, read position], read position included even at the end
        return Math.max(0, effectiveReadOffset() - (acks.markDeleteEnd() - 1));
    }

    @Override
    public synchronized long getEstimatedSizeSinceMarkDeletePosition() {
        long from = Math.max(acks.markDeleteEnd(), host.firstOffset());
        long n = Math.max(0, host.committedEnd() - from);
        return (long) (n * host.averageEntryBytes());
    }

    // ---------------------------------------------------------------- moving the mark-delete

    @Override
    public void clearBacklog() throws InterruptedException, ManagedLedgerException {
        await(clearBacklogAsync());
    }

    @Override
    public void asyncClearBacklog(AsyncCallbacks.ClearBacklogCallback callback, Object ctx) {
        deliver(clearBacklogAsync(), v -> callback.clearBacklogComplete(ctx),
                e -> callback.clearBacklogFailed(e, ctx));
    }

    private CompletableFuture<Void> clearBacklogAsync() {
        Map<String, Long> props;
        synchronized (this) {
            props = properties;
        }
        return markDeleteAsync(host.position(host.committedEnd() - 1), props);
    }

    @Override
    public void skipEntries(int numEntriesToSkip, IndividualDeletedEntries deletedEntries)
            throws InterruptedException, ManagedLedgerException {
        await(skipAsync(numEntriesToSkip, deletedEntries));
    }

    @Override
    public void asyncSkipEntries(int numEntriesToSkip, IndividualDeletedEntries deletedEntries,
            AsyncCallbacks.SkipEntriesCallback callback, Object ctx) {
        deliver(skipAsync(numEntriesToSkip, deletedEntries), v -> callback.skipEntriesComplete(ctx),
                e -> callback.skipEntriesFailed(e, ctx));
    }

    /** Mark-deletes the next {@code n} entries (with Exclude, not counting individually deleted ones). */
    private CompletableFuture<Void> skipAsync(int n, IndividualDeletedEntries deletedEntries) {
        if (n <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("entries to skip must be > 0: " + n));
        }
        long last;
        Map<String, Long> props;
        synchronized (this) {
            long start = Math.max(acks.markDeleteEnd(), host.firstOffset());
            last = deletedEntries == IndividualDeletedEntries.Exclude ? acks.nthUndeleted(start, n) : start + n - 1;
            last = Math.min(last, host.committedEnd() - 1);
            props = properties;
        }
        return markDeleteAsync(host.position(last), props);
    }

    @Override
    public void resetCursor(Position position) throws InterruptedException, ManagedLedgerException {
        await(resetAsync(position));
    }

    @Override
    public void asyncResetCursor(Position position, boolean forceReset, AsyncCallbacks.ResetCursorCallback callback) {
        CompletableFuture<Position> f = resetAsync(position);
        deliver(f, p -> callback.resetComplete(p), e -> callback.resetFailed(e, null));
    }

    /**
     * Moves the read position to {@code position} and the mark-delete just before it, forgetting individual
     * and batch acks (a batch ack set carried by {@code position} becomes that entry's set) and the mark-delete
     * properties (kept for the compaction cursor, as in Pulsar); saved at once, not throttled. Earliest/Latest
     * markers mean the first entry / the end. Completes with the new read position; a failed save fails with
     * {@link ManagedLedgerException.InvalidCursorPositionException}.
     */
    private CompletableFuture<Position> resetAsync(Position position) {
        if (position == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("reset position is null"));
        }
        long[] ackSet = AckSetStateUtil.getAckSetArrayOrNull(position);
        CursorState s;
        long target;
        synchronized (this) {
            if (closed) {
                return closedFailure();
            }
            target = position.equals(PositionFactory.EARLIEST) ? host.firstOffset()
                    : position.equals(PositionFactory.LATEST) ? host.committedEnd()
                    : Math.max(host.firstOffset(), clampToLedger(position));
            acks.reset(target);
            if (ackSet != null && batchIndexAcks() && target < host.committedEnd()) {
                acks.markDeleteBatch(target, BitSet.valueOf(ackSet));
            }
            if (!COMPACTION_CURSOR.equals(name)) {
                properties = Map.of();
            }
            readOffset = target;
            readEpoch++;
            s = snapshot();
        }
        Position newRead = host.position(target);
        return persistNow(s).handle((v, t) -> {
            if (t != null) {
                ManagedLedgerException e = new ManagedLedgerException.InvalidCursorPositionException(
                        "unable to persist readPosition for cursor reset " + newRead);
                e.initCause(PulsarErrors.map(t));
                throw new java.util.concurrent.CompletionException(e);
            }
            updateLastActive();
            return newRead;
        });
    }

    // ---------------------------------------------------------------- searches

    @Override
    public Position findNewestMatching(Predicate<Entry> condition) throws InterruptedException, ManagedLedgerException {
        return findNewestMatching(FindPositionConstraint.SearchActiveEntries, condition);
    }

    @Override
    public Position findNewestMatching(FindPositionConstraint constraint, Predicate<Entry> condition)
            throws InterruptedException, ManagedLedgerException {
        return await(findNewest(constraint, condition, null, null));
    }

    @Override
    public void asyncFindNewestMatching(FindPositionConstraint constraint, Predicate<Entry> condition,
            AsyncCallbacks.FindEntryCallback callback, Object ctx) {
        asyncFindNewestMatching(constraint, condition, null, null, callback, ctx, false);
    }

    @Override
    public void asyncFindNewestMatching(FindPositionConstraint constraint, Predicate<Entry> condition,
            AsyncCallbacks.FindEntryCallback callback, Object ctx, boolean isFindFromLedger) {
        asyncFindNewestMatching(constraint, condition, null, null, callback, ctx, isFindFromLedger);
    }

    @Override
    public void asyncFindNewestMatching(FindPositionConstraint constraint, Predicate<Entry> condition,
            Position start, Position end, AsyncCallbacks.FindEntryCallback callback, Object ctx,
            boolean isFindFromLedger) {
        deliver(findNewest(constraint, condition, start, end), p -> callback.findEntryComplete(p, ctx),
                e -> callback.findEntryFailed(e, Optional.empty(), ctx));
    }

    /**
     * The newest position in the search window whose entry matches, by binary search (matches are assumed to
     * form a prefix, as publish times do); null when the first entry does not match or the window is empty.
     * SearchActiveEntries starts after the mark-delete (or at {@code start}, moved past it when not after
     * it); SearchAllAvailableEntries at the first entry (or {@code start}). The window ends at the last
     * confirmed entry or {@code end} when earlier.
     */
    private CompletableFuture<Position> findNewest(FindPositionConstraint constraint, Predicate<Entry> condition,
            Position start, Position end) {
        if (constraint == null || condition == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "find newest needs a constraint and a condition"));
        }
        long first;
        synchronized (this) {
            long md = acks.markDeleteEnd() - 1;
            if (constraint == FindPositionConstraint.SearchAllAvailableEntries) {
                first = start == null ? host.firstOffset() : clampToLedger(start);
            } else {
                long s = start == null ? md : clampToLedger(start);
                first = start == null || s <= md ? s + 1 : s;
            }
        }
        first = Math.max(first, host.firstOffset());
        long last = host.committedEnd() - 1;
        if (end != null) {
            last = Math.min(last, end.getLedgerId() < host.ledgerId() ? -1
                    : end.getLedgerId() > host.ledgerId() ? last : end.getEntryId());
        }
        return reads.findNewest(first, last, condition).thenApply(o -> o == null ? null : host.position(o));
    }

    @Override
    public CompletableFuture<ScanOutcome> scan(Optional<Position> startingPosition, Predicate<Entry> condition,
            int batchSize, long maxEntries, long timeOutMs) {
        long from;
        synchronized (this) {
            if (closed) {
                return closedFailure();
            }
            from = startingPosition.map(this::clampToLedger)
                    .orElse(Math.max(acks.markDeleteEnd(), host.firstOffset()));
        }
        return reads.scan(from, condition, batchSize, maxEntries, timeOutMs);
    }

    // ---------------------------------------------------------------- throttling, stats

    @Override
    public double getThrottleMarkDelete() {
        return durable ? persistence.rate() : nonDurableThrottle;
    }

    @Override
    public void setThrottleMarkDelete(double throttleMarkDelete) {
        double rate = Math.max(0, throttleMarkDelete);
        if (durable) {
            persistence.setRate(rate);
        } else {
            nonDurableThrottle = rate;
        }
    }

    @Override
    public ManagedCursorMXBean getStats() {
        return stats;
    }

    @Override
    public ManagedLedgerInternalStats.CursorStats getCursorStats() {
        ManagedLedgerInternalStats.CursorStats cs = new ManagedLedgerInternalStats.CursorStats();
        synchronized (this) {
            cs.markDeletePosition = host.position(acks.markDeleteEnd() - 1).toString();
            cs.readPosition = host.position(effectiveReadOffset()).toString();
            cs.waitingReadOp = waiting != null;
            cs.individuallyDeletedMessages = acks.rangesString(host.ledgerId());
            cs.totalNonContiguousDeletedMessagesRange = acks.rangeCount();
            cs.messagesConsumedCounter = acks.markDeleteEnd() + acks.individuallyDeletedCount();
            cs.state = closed ? "Closed" : "Open";
            cs.properties = properties;
        }
        cs.pendingReadOps = pendingReadOps.get();
        cs.cursorLedger = -1; // state lives in the metadata store, not in a cursor ledger
        cs.cursorLedgerLastEntry = -1;
        cs.active = active;
        cs.numberOfEntriesSinceFirstNotAckedMessage = getNumberOfEntriesSinceFirstNotAckedMessage();
        return cs;
    }

    @Override
    public ManagedCursor duplicateNonDurableCursor(String nonDurableCursorName) throws ManagedLedgerException {
        ManagedCursor copy = host.ledger().newNonDurableCursor(getMarkDeletedPosition(), nonDurableCursorName);
        if (copy instanceof NereusManagedCursor n) {
            n.copyAcksFrom(this);
        }
        return copy;
    }

    @Override
    public String toString() {
        return "NereusManagedCursor{ledger=" + host.name() + ", cursor=" + name + ", durable=" + durable + "}";
    }

    // ---------------------------------------------------------------- helpers

    private boolean batchIndexAcks() {
        return host.config().isDeletionAtBatchIndexLevelEnabled();
    }

    /** Holding the monitor: the read position, never below the mark-delete or the first offset. */
    private long effectiveReadOffset() {
        long floor = readCompacted ? acks.markDeleteEnd() : Math.max(acks.markDeleteEnd(), host.firstOffset());
        return Math.max(readOffset, floor);
    }

    /** The offset a position stands for in this ledger, clamped to {@code [0, committedEnd()]}. */
    private long clampToLedger(Position p) {
        if (p.getLedgerId() < host.ledgerId()) {
            return host.firstOffset();
        }
        if (p.getLedgerId() > host.ledgerId()) {
            return host.committedEnd();
        }
        return Math.max(0, Math.min(host.committedEnd(), p.getEntryId()));
    }

    /** The first offset a read bounded by {@code maxPosition} (inclusive; null = unbounded) may not return. */
    private long endExclusive(Position maxPosition) {
        if (maxPosition == null || maxPosition.getLedgerId() > host.ledgerId()) {
            return Long.MAX_VALUE;
        }
        if (maxPosition.getLedgerId() < host.ledgerId()) {
            return 0;
        }
        long e = maxPosition.getEntryId();
        return e == Long.MAX_VALUE ? e : Math.max(0, e + 1);
    }

    /** Holding the monitor: the state to persist now. */
    private CursorState snapshot() {
        return acks.toState(properties, cursorProperties);
    }

    /** Persists subject to the mark-delete rate (a throttled save completes at once and is flushed later). */
    private CompletableFuture<Void> persistLater(CursorState s) {
        if (!durable) {
            host.markDeleteMoved(this);
            return CompletableFuture.completedFuture(null);
        }
        return persistence.saveThrottled(s);
    }

    private CompletableFuture<Void> persistNow(CursorState s) {
        if (!durable) {
            host.markDeleteMoved(this);
            return CompletableFuture.completedFuture(null);
        }
        return persistence.save(s);
    }

    private long lastNotifiedEnd = -1;

    /** Called by the persistence once {@code s} is durable: tells the host when the mark-delete moved. */
    private void persisted(CursorState s) {
        boolean moved;
        synchronized (this) {
            moved = s.markDeleteEnd() != lastNotifiedEnd;
            lastNotifiedEnd = s.markDeleteEnd();
        }
        if (moved) {
            host.markDeleteMoved(this);
        }
    }

    private <T> CompletableFuture<T> closedFailure() {
        return CompletableFuture.failedFuture(
                new ManagedLedgerException.CursorAlreadyClosedException("Cursor " + name + " was already closed"));
    }

    /** Runs the callback matching {@code f}'s outcome on the host executor, with the error mapped. */
    private <T> void deliver(CompletableFuture<T> f, Consumer<T> ok, Consumer<ManagedLedgerException> failed) {
        f.whenCompleteAsync((v, t) -> {
            if (t == null) {
                ok.accept(v);
            } else {
                failed.accept(PulsarErrors.map(t));
            }
        }, host.executor());
    }

    private void deliverRead(CompletableFuture<List<Entry>> f, AsyncCallbacks.ReadEntriesCallback callback,
            Object ctx) {
        deliver(f, entries -> callback.readEntriesComplete(entries, ctx), e -> callback.readEntriesFailed(e, ctx));
    }

    /** Blocks the calling thread (never a callback thread) for {@code f}, with the metadata timeout. */
    private <T> T await(CompletableFuture<T> f) throws InterruptedException, ManagedLedgerException {
        long timeout = Math.max(1, host.config().getMetadataOperationsTimeoutSeconds());
        try {
            return f.get(timeout, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw PulsarErrors.map(e.getCause());
        } catch (TimeoutException e) {
            throw new ManagedLedgerException("cursor " + name + " of " + host.name() + ": operation timed out after "
                    + timeout + " s");
        }
    }

}
