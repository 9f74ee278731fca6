package io.nereus.pulsar.cursor;

import com.google.common.collect.Range;
import io.nereus.error.ErrorContext;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.WriteOutcome;
import io.nereus.metadata.codec.CursorStateCodec;
import io.nereus.pulsar.Callbacks;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.pulsar.Sync;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
import org.apache.pulsar.common.api.proto.CommandSubscribe;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Pulsar {@link ManagedCursor} over a Nereus stream: a subscription's acknowledgements and read position.
 *
 * <p>This class is the facade (Pulsar's callback, ctx and sync variants over one future-returning core per
 * operation); the work is done by small collaborators: {@link CursorAckState} (read position, properties and
 * the acknowledgement rules, over {@link AckTracker}), {@link CursorPersistence} (coalesced, rate-limited saves
 * of durable cursors to FoundationDB, conditional on the writer epoch), {@link CursorReadScheduler} (reads
 * that move the cursor and the one waiting read, parked on {@link CursorHost#whenCommittedBeyond}, never
 * polled) and {@link CursorReads} (reads that skip acknowledged entries, the newest-matching search, scans,
 * replays).
 *
 * <p>Positions are {@code (host.ledgerId(), offset)}; the mark-delete position is {@code markDeleteEnd() - 1}.
 * No monitor is held across I/O. Every callback to Pulsar runs on {@link CursorHost#executor()}; the
 * synchronous variants block only their caller (tests, tools).
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
    private static final VarHandle ACTIVE;

    static {
        try {
            ACTIVE = MethodHandles.lookup().findVarHandle(NereusManagedCursor.class, "active", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CursorHost host;
    private final String name;
    private final boolean durable;
    private final Clock clock;
    private final CursorStatsBean stats;
    private final CursorAckState state;
    private final CursorReads reads;
    private final CursorReadScheduler scheduler;
    private final CursorPersistence persistence;

    private CompletableFuture<Void> closeFuture;
    /** Whether the cursor is active (reads near the tail); changed only by {@link #activate} / {@link #deactivate}. */
    private volatile boolean active;
    private volatile boolean alwaysInactive;
    private volatile long lastActive;
    private volatile double nonDurableThrottle;
    private Position statsLastReadPosition;
    private long lastNotifiedEnd = -1;

    private NereusManagedCursor(CursorHost host, String name, boolean durable, boolean readCompacted,
            CursorState stored, boolean isStored, long readOffset) {
        this.host = host;
        this.name = name;
        this.durable = durable;
        this.clock = host.clock();
        this.stats = new CursorStatsBean(name, host.name());
        this.state = new CursorAckState(host, name, readCompacted, stored, readOffset);
        this.reads = new CursorReads(host, state, clock);
        this.scheduler = new CursorReadScheduler(host, name, state, reads);
        this.lastActive = clock.millis();
        double rate = host.config().getThrottleMarkDelete();
        this.nonDurableThrottle = rate;
        this.persistence = durable
                ? new CursorPersistence(name, host.name(),
                        s -> host.cursorStore().saveCursor(host.streamId(), name, host.writerEpoch(), s),
                        state, stored, isStored ? 0 : -1, rate, this::persisted, stats,
                        CursorPersistence.Scheduler.on(host.executor()), System::nanoTime)
                : null;
    }

    // ---------------------------------------------------------------- entry points of the managed ledger

    /**
     * Opens the durable cursor {@code name}: an existing cursor keeps its stored state (the arguments are then
     * ignored, as in Pulsar); a new one starts at the first offset (Earliest) or the committed end (Latest)
     * with the given properties and is saved before the future completes. Completes on the host's executor.
     */
    public static CompletableFuture<NereusManagedCursor> openDurable(CursorHost host, String name,
            CommandSubscribe.InitialPosition initial, Map<String, Long> properties,
            Map<String, String> cursorProperties) {
        if (name == null || name.isEmpty()) {
            return CompletableFuture.failedFuture(new ManagedLedgerException("cursor name must not be empty"));
        }
        return host.cursorStore().loadCursor(host.streamId(), name).thenCompose(stored -> {
            if (stored.isPresent()) {
                CursorState s = stored.get();
                NereusManagedCursor c = new NereusManagedCursor(host, name, true, false, s, true,
                        Math.max(s.markDeleteEnd(), host.trimOffset()));
                return CompletableFuture.completedFuture(c);
            }
            long start = initial == CommandSubscribe.InitialPosition.Latest ? host.committedEnd() : host.trimOffset();
            CursorState s = new CursorState(start, List.of(), new TreeMap<>(),
                    properties == null ? Map.of() : properties,
                    cursorProperties == null ? Map.of() : cursorProperties);
            NereusManagedCursor c = new NereusManagedCursor(host, name, true, false, s, false, start);
            return c.persistence.save(c.state.version()).thenApply(v -> c);
        }).handleAsync((c, t) -> {
            if (t != null) {
                throw new CompletionException(PulsarErrors.map(t));
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
    public static NereusManagedCursor nonDurable(CursorHost host, String name, Position start,
            CommandSubscribe.InitialPosition initial, boolean readCompacted) {
        long first = host.trimOffset();
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
        return new NereusManagedCursor(host, name, false, readCompacted, CursorState.at(mdEnd), false, mdEnd);
    }

    /** The first offset not acknowledged by the mark-delete, in memory. */
    public long markDeleteEnd() {
        return state.markDeleteEnd();
    }

    /** The mark-delete end last saved durably (what the ledger may trim below); in memory for non-durable. */
    public long persistedMarkDeleteEnd() {
        return durable ? persistence.persisted().markDeleteEnd() : markDeleteEnd();
    }

    /** Closes the cursor: fails the parked read, flushes the newest state (durable), tells the host. */
    public CompletableFuture<Void> closeAsync() {
        CompletableFuture<Void> result;
        synchronized (this) {
            if (closeFuture != null) {
                return closeFuture;
            }
            state.close();
            closeFuture = new CompletableFuture<>();
            result = closeFuture;
        }
        scheduler.failWaiting(new ManagedLedgerException.CursorAlreadyClosedException("Cursor was already closed"));
        CompletableFuture<Void> flushed = durable ? persistence.flush() : CompletableFuture.completedFuture(null);
        flushed.whenComplete((v, t) -> {
            deactivate();
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
        closeQuietly();
        scheduler.failWaiting(new ManagedLedgerException.CursorAlreadyClosedException("Cursor was deleted"));
        host.cursorClosed(this);
        if (!durable) {
            return CompletableFuture.completedFuture(null);
        }
        persistence.stop(new ManagedLedgerException.CursorAlreadyClosedException("cursor " + name + " was deleted"));
        return persistence.idle()
                .thenCompose(v -> host.cursorStore().deleteCursor(host.streamId(), name, host.writerEpoch()))
                .thenAccept(outcome -> {
                    // a stream that no longer exists took the cursor's state with it: only a fenced delete fails
                    if (outcome instanceof WriteOutcome.Fenced) {
                        throw new CompletionException(PulsarErrors.map(outcome,
                                ErrorContext.of("ledger", host.name(), "cursor", name, "operation", "delete cursor")));
                    }
                });
    }

    /** The ledger was closed, deleted or fenced: fail the parked read with {@code why}, stop persisting. */
    public void ledgerClosed(ManagedLedgerException why) {
        closeQuietly();
        scheduler.failWaiting(why);
        if (durable) {
            persistence.stop(why);
        }
    }

    private synchronized void closeQuietly() {
        state.close();
        if (closeFuture == null) {
            closeFuture = CompletableFuture.completedFuture(null);
        }
    }

    /** Makes this cursor acknowledge exactly what {@code source} acknowledges (a duplicated cursor). */
    void copyAcksFrom(NereusManagedCursor source) {
        state.copyAcksFrom(source.state);
    }

    /** True while a read is parked waiting for entries. */
    public boolean hasPendingReadRequest() {
        return scheduler.hasWaiting();
    }

    /** Entries this cursor has read (for stats and tests). */
    public long entriesRead() {
        return scheduler.entriesRead();
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
    public boolean isClosed() {
        return state.isClosed();
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
            activate();
        }
    }

    @Override
    public void setInactive() {
        deactivate();
    }

    @Override
    public void setAlwaysInactive() {
        alwaysInactive = true;
        deactivate();
    }

    /** Makes the cursor active, telling the host when it was not: each change is told exactly once. */
    private void activate() {
        if (ACTIVE.compareAndSet(this, false, true)) {
            host.cursorActivityChanged(this, true);
        }
    }

    private void deactivate() {
        if (ACTIVE.compareAndSet(this, true, false)) {
            host.cursorActivityChanged(this, false);
        }
    }

    @Override
    public boolean isActive() {
        return active;
    }

    // ---------------------------------------------------------------- properties

    @Override
    public Map<String, Long> getProperties() {
        return state.properties();
    }

    @Override
    public Map<String, String> getCursorProperties() {
        return state.cursorProperties();
    }

    /** Sets a mark-delete property; saved with the next (throttled) save. */
    @Override
    public boolean putProperty(String key, Long value) {
        if (key == null || value == null) {
            return false;
        }
        persist(state.updateProperties(m -> m.put(key, value)), true);
        return true;
    }

    @Override
    public boolean removeProperty(String key) {
        if (key == null || !state.properties().containsKey(key)) {
            return false;
        }
        persist(state.updateProperties(m -> m.remove(key)), true);
        return true;
    }

    @Override
    public CompletableFuture<Void> putCursorProperty(String key, String value) {
        if (key == null || value == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "cursor property key and value must not be null: " + key + "=" + value));
        }
        return handOff(persist(state.updateCursorProperties(m -> m.put(key, value)), false));
    }

    @Override
    public CompletableFuture<Void> setCursorProperties(Map<String, String> newProperties) {
        if (newProperties == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("cursor properties must not be null"));
        }
        Map<String, String> copy = new HashMap<>(newProperties);
        return handOff(persist(state.updateCursorProperties(m -> {
            m.clear();
            m.putAll(copy);
        }), false));
    }

    @Override
    public CompletableFuture<Void> removeCursorProperty(String key) {
        return handOff(persist(state.updateCursorProperties(m -> m.remove(key)), false));
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

    /** Blocks the caller until entries arrive (no timeout: waiting is the point). */
    @Override
    public List<Entry> readEntriesOrWait(int maxEntries, long maxSizeBytes)
            throws InterruptedException, ManagedLedgerException {
        return Sync.await(readOrWait(maxEntries, maxSizeBytes, null, null));
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

    private CompletableFuture<List<Entry>> read(int maxEntries, long maxSizeBytes, Position maxPosition,
            Predicate<Position> skip) {
        int count = maxEntries <= 0 ? maxEntries : applyMaxSizeCap(maxEntries, maxSizeBytes);
        return scheduler.read(count, maxSizeBytes, maxPosition, skip);
    }

    private CompletableFuture<List<Entry>> readOrWait(int maxEntries, long maxSizeBytes, Position maxPosition,
            Predicate<Position> skip) {
        int count = maxEntries <= 0 ? maxEntries : applyMaxSizeCap(maxEntries, maxSizeBytes);
        return scheduler.readOrWait(count, maxSizeBytes, maxPosition, skip);
    }

    @Override
    public boolean cancelPendingReadRequest() {
        return scheduler.cancel();
    }

    @Override
    public boolean hasMoreEntries() {
        return state.readOffset() < host.committedEnd();
    }

    @Override
    public long getNumberOfEntries() {
        return state.entriesToRead();
    }

    /** Always precise: the count is cheap (a running total of individually deleted offsets). */
    @Override
    public long getNumberOfEntriesInBacklog(boolean isPrecise) {
        return state.backlog();
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
        if (state.isClosed()) {
            return CompletableFuture.failedFuture(state.closedError());
        }
        long offset = state.nthOffset(n, deletedEntries);
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

    /** Reads the positions not yet acknowledged; returns those already acknowledged (not replayed). */
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
        if (state.isClosed()) {
            return CompletableFuture.failedFuture(state.closedError());
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

    /** How many entries fit {@code maxSizeBytes} at the ledger's average entry size (at least one). */
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
        scheduler.addReadStats(readEntriesCount, readEntriesSize);
    }

    // ---------------------------------------------------------------- positions

    @Override
    public Position getReadPosition() {
        return host.position(state.readOffset());
    }

    @Override
    public Position getMarkDeletedPosition() {
        return host.position(state.markDeleteEnd() - 1);
    }

    @Override
    public Position getPersistentMarkDeletedPosition() {
        return host.position(persistedMarkDeleteEnd() - 1);
    }

    @Override
    public Position getFirstPosition() {
        return host.position(host.trimOffset());
    }

    @Override
    public void rewind() {
        state.rewind();
    }

    @Override
    public void seek(Position newReadPosition, boolean force) {
        state.seek(newReadPosition, force);
    }

    @Override
    public synchronized boolean checkAndUpdateReadPositionChanged() {
        long read = state.readOffset();
        Position readPosition = host.position(read);
        boolean onTail = read >= host.committedEnd() - 1;
        boolean changed = !readPosition.equals(statsLastReadPosition);
        statsLastReadPosition = readPosition;
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

    /** See {@link CursorAckState#markDelete}; the save is throttled. */
    private CompletableFuture<Void> markDeleteAsync(Position position, Map<String, Long> props) {
        if (position == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("mark-delete position is null"));
        }
        return persist(state.markDelete(position, props), true);
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

    /** See {@link CursorAckState#delete}; the save is throttled. */
    private CompletableFuture<Void> deleteAsync(Iterable<Position> positions) {
        if (positions == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("positions to delete are null"));
        }
        return persist(state.delete(positions), true);
    }

    @Override
    public boolean isMessageDeleted(Position position) {
        return state.isDeleted(position);
    }

    @Override
    public long[] getDeletedBatchIndexesAsLongArray(Position position) {
        return state.batchAckSet(position);
    }

    @Override
    public long[] getBatchPositionAckSet(Position position) {
        return state.batchAckSet(position);
    }

    @Override
    public Range<Position> getLastIndividualDeletedRange() {
        return state.lastRange()
                .map(r -> Range.openClosed(host.position(r.start() - 1), host.position(r.end() - 1)))
                .orElse(null);
    }

    @Override
    public int getTotalNonContiguousDeletedMessagesRange() {
        return state.rangeCount();
    }

    /** The bytes the individually deleted ranges take in the stored cursor state. */
    @Override
    public int getNonContiguousDeletedMessagesRangeSerializedSize() {
        List<OffsetRange> ranges = state.ranges();
        if (ranges.isEmpty()) {
            return 0;
        }
        CursorState onlyRanges = new CursorState(ranges.get(0).start(), ranges, new TreeMap<>(), Map.of(), Map.of());
        return CursorStateCodec.INSTANCE.encode(onlyRanges).stream().mapToInt(b -> b.length).sum();
    }

    @Override
    public long getNumberOfEntriesSinceFirstNotAckedMessage() {
        return state.entriesSinceFirstNotAcked();
    }

    @Override
    public long getEstimatedSizeSinceMarkDeletePosition() {
        return (long) (state.entriesAfterMarkDelete() * host.averageEntryBytes());
    }

    // ---------------------------------------------------------------- moving the mark-delete

    @Override
    public void clearBacklog() throws InterruptedException, ManagedLedgerException {
        await(clearBacklogAsync());
    }

    @Override
    public void asyncClearBacklog(AsyncCallbacks.ClearBacklogCallback callback, Object ctx) {
        deliver(clearBacklogAsync(), v -> callback.clearBacklogComplete(ctx), e -> callback.clearBacklogFailed(e, ctx));
    }

    /** Moves the mark-delete to the end and completes once that is saved (the ledger's truncate uses it too). */
    public CompletableFuture<Void> clearBacklogAsync() {
        return persist(state.clearBacklog(), true);
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

    private CompletableFuture<Void> skipAsync(int n, IndividualDeletedEntries deletedEntries) {
        if (n <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("entries to skip must be > 0: " + n));
        }
        return persist(state.skip(n, deletedEntries), true);
    }

    @Override
    public void resetCursor(Position position) throws InterruptedException, ManagedLedgerException {
        await(resetAsync(position));
    }

    /** Completes with the new read position as the callback's context, as Pulsar does. */
    @Override
    public void asyncResetCursor(Position position, boolean forceReset, AsyncCallbacks.ResetCursorCallback callback) {
        deliver(resetAsync(position), p -> callback.resetComplete(p), e -> callback.resetFailed(e, null));
    }

    /**
     * See {@link CursorAckState#reset}; saved at once, not throttled, keeping the mark-delete properties only
     * for the compaction cursor. A failed save fails with
     * {@link ManagedLedgerException.InvalidCursorPositionException}.
     */
    private CompletableFuture<Position> resetAsync(Position position) {
        if (position == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("reset position is null"));
        }
        CompletableFuture<Void> saved = persist(state.reset(position, COMPACTION_CURSOR.equals(name)), false);
        Position newRead = getReadPosition();
        return saved.handle((v, t) -> {
            if (t != null) {
                ManagedLedgerException e = new ManagedLedgerException.InvalidCursorPositionException(
                        "unable to persist readPosition for cursor reset " + newRead);
                e.initCause(PulsarErrors.map(t));
                throw new CompletionException(e);
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
     * The window starts as {@link CursorAckState#findStart} says and ends at the last confirmed entry, or at
     * {@code end} when earlier.
     */
    private CompletableFuture<Position> findNewest(FindPositionConstraint constraint, Predicate<Entry> condition,
            Position start, Position end) {
        if (constraint == null || condition == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "find newest needs a constraint and a condition"));
        }
        long first = state.findStart(constraint, start);
        long last = host.committedEnd() - 1;
        if (end != null) {
            last = Math.min(last, end.getLedgerId() < host.ledgerId() ? -1
                    : end.getLedgerId() > host.ledgerId() ? last : end.getEntryId());
        }
        return reads.findNewest(first, last, condition).thenApply(o -> o == null ? null : host.position(o));
    }

    /** Tests entries from {@code startingPosition} (default: after the mark-delete); "analyze backlog". */
    @Override
    public CompletableFuture<ScanOutcome> scan(Optional<Position> startingPosition, Predicate<Entry> condition,
            int batchSize, long maxEntries, long timeOutMs) {
        if (state.isClosed()) {
            return CompletableFuture.failedFuture(state.closedError());
        }
        return handOff(reads.scan(state.scanStart(startingPosition), condition, batchSize, maxEntries, timeOutMs));
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
        state.fill(cs);
        cs.waitingReadOp = scheduler.hasWaiting();
        cs.pendingReadOps = scheduler.pendingReads();
        cs.cursorLedger = -1; // state lives in the metadata store, not in a cursor ledger
        cs.cursorLedgerLastEntry = -1;
        cs.active = active;
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

    /**
     * Carries out an {@link CursorAckState.AckOutcome}: a durable cursor saves the state (throttled or at
     * once); a non-durable one only tells the host its mark-delete may have moved. A refusal, whole or in part,
     * is logged with the cursor and fails the returned future (the broker's callback), never silently.
     */
    private CompletableFuture<Void> persist(CursorAckState.AckOutcome outcome, boolean throttled) {
        long version;
        ManagedLedgerException partlyRefused = null;
        if (outcome instanceof CursorAckState.AckOutcome.Refused r) {
            LOG.warn("Cursor change refused cursor={} ledger={} reason={}", name, host.name(), r.why().getMessage());
            return CompletableFuture.failedFuture(r.why());
        } else if (outcome instanceof CursorAckState.AckOutcome.Partial p) {
            LOG.warn("Cursor change partly refused cursor={} ledger={} reason={}", name, host.name(),
                    p.why().getMessage());
            version = p.version();
            partlyRefused = p.why();
        } else if (outcome instanceof CursorAckState.AckOutcome.Save s) {
            version = s.version();
        } else {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> saved;
        if (!durable) {
            host.markDeleteMoved(this);
            saved = CompletableFuture.completedFuture(null);
        } else {
            saved = throttled ? persistence.saveThrottled(version) : persistence.save(version);
        }
        ManagedLedgerException refusal = partlyRefused;
        return refusal == null ? saved : saved.thenCompose(v -> CompletableFuture.failedFuture(refusal));
    }

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

    private <T> void deliver(CompletableFuture<T> f, Consumer<T> ok, Consumer<ManagedLedgerException> failed) {
        Callbacks.deliver(f, host.executor(), ok, failed);
    }

    /** {@code f} completed on the ledger's executor, for a future returned to Pulsar ({@link Callbacks#handOff}). */
    private <T> CompletableFuture<T> handOff(CompletableFuture<T> f) {
        return Callbacks.handOff(f, host.executor());
    }

    private void deliverRead(CompletableFuture<List<Entry>> f, AsyncCallbacks.ReadEntriesCallback callback,
            Object ctx) {
        deliver(f, entries -> callback.readEntriesComplete(entries, ctx), e -> callback.readEntriesFailed(e, ctx));
    }

    /** Blocks the calling thread (never a callback thread) for {@code f}, with the metadata timeout. */
    private <T> T await(CompletableFuture<T> f) throws InterruptedException, ManagedLedgerException {
        long timeout = Math.max(1, host.config().getMetadataOperationsTimeoutSeconds());
        return Sync.await(f, java.time.Duration.ofSeconds(timeout), "cursor " + name + " of " + host.name());
    }
}
