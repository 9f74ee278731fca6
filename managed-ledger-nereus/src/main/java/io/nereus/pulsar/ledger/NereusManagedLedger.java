package io.nereus.pulsar.ledger;

import com.google.common.collect.Range;
import io.nereus.metadata.CursorStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.StreamState;
import io.nereus.metadata.WriteOutcome;
import io.nereus.pulsar.Callbacks;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.pulsar.Sync;
import io.nereus.pulsar.VirtualLedger;
import io.nereus.pulsar.cursor.CursorHost;
import io.nereus.pulsar.cursor.NereusManagedCursor;
import io.nereus.stream.CommitPurgatory;
import io.nereus.stream.NereusStream;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.AsyncCallbacks;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.ManagedLedgerMXBean;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionBound;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.intercept.ManagedLedgerInterceptor;
import org.apache.bookkeeper.mledger.proto.MLDataFormats.ManagedLedgerInfo.LedgerInfo;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;
import org.apache.pulsar.compaction.Compactor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Pulsar managed ledger stored by Nereus: one stream incarnation, seen as one virtual ledger whose entry ids are
 * the stream's offsets (DESIGN §8). This broker is the stream's writer (it acquired a new writer epoch when it
 * opened the ledger, fencing the previous owner); entries are acknowledged once committed, with position
 * {@code (ledgerId, offset)}.
 *
 * <p>Threading: Pulsar callbacks run on the ledger's ordered executor thread ({@link #executor()}), in the
 * order appends were committed. The lifecycle state and the cursor map are safe for any thread; offsets and
 * counters are published through volatile fields.
 * The lifecycle is {@link LedgerState}.
 */
final class NereusManagedLedger implements ManagedLedger, CursorHost {
    private static final Logger LOG = LoggerFactory.getLogger(NereusManagedLedger.class);
    private static final AtomicIntegerFieldUpdater<NereusManagedLedger> ACTIVE_CURSORS =
            AtomicIntegerFieldUpdater.newUpdater(NereusManagedLedger.class, "activeCursors");
    static final String MIGRATED_PROPERTY = "migrated";

    private final NereusManagedLedgerFactory factory;
    private final String name;
    private final NereusStream stream;
    private final long ledgerId;
    private final long writerEpoch;
    private final CursorStore cursorStore;
    private final Executor executor;
    private final CommitPurgatory waiters;
    private final NereusLedgerStats stats;
    private final LedgerTrimmer trimmer;
    private final LedgerCursors cursors = new LedgerCursors(this);
    private final LedgerReads reads;
    private final LedgerAppends appends;
    private final LedgerSizes sizes;
    private final LedgerPropertiesState properties;
    private final LedgerOffload offload;
    private final long createdAtMillis;
    private volatile ManagedLedgerConfig config;
    /**
     * Cursors now active ({@link #cursorActivityChanged}): while there are none, added entries are not cached. A field
     * of the ledger, read by every add, rather than an object of its own.
     */
    private volatile int activeCursors;
    private volatile LedgerState state = LedgerState.OPEN;
    private volatile long committedEnd;
    private volatile long trimOffset;
    private final Clock clock;
    private CompletableFuture<Void> terminated;
    private CompletableFuture<Void> closed;
    private CompletableFuture<Void> deleted;

    private NereusManagedLedger(NereusManagedLedgerFactory factory, String name, ManagedLedgerConfig config,
            NereusStream stream, long writerEpoch, StreamHead head, Executor executor, Clock clock) {
        this.factory = factory;
        this.name = name;
        this.config = config;
        this.stream = stream;
        this.ledgerId = stream.catalog().virtualLedgerId();
        this.writerEpoch = writerEpoch;
        this.cursorStore = factory.cursorStore();
        this.executor = executor;
        this.committedEnd = head.committedEnd();
        this.trimOffset = head.trimOffset();
        this.clock = clock;
        this.createdAtMillis = clock.millis();
        this.waiters = new CommitPurgatory(executor, head.committedEnd());
        this.stats = new NereusLedgerStats(this);
        this.reads = new LedgerReads(this, stream, stats);
        this.appends = new LedgerAppends(this, stream, stats, executor);
        this.sizes = new LedgerSizes(head.trimOffset(), head.committedEnd(), head.cumulativeBytes());
        this.trimmer = new LedgerTrimmer(this, factory.metadata(), clock);
        this.offload = new LedgerOffload(this, factory.streams(), clock);
        this.properties = new LedgerPropertiesState(cursorStore, stream.id(), writerEpoch, this::checkWritten, p -> {
            ManagedLedgerInterceptor interceptor = this.config.getManagedLedgerInterceptor();
            if (interceptor != null) {
                interceptor.onUpdateManagedLedgerInfo(p);
            }
        });
        if (head.state() == StreamState.SEALED) {
            transition(LedgerState.TERMINATED);
            terminated = CompletableFuture.completedFuture(null);
        }
    }

    /**
     * Opens {@code name} for writing: the stream (created if absent), a new writer epoch, the stored properties and
     * every stored durable cursor, then the interceptor's initialization.
     */
    static CompletableFuture<NereusManagedLedger> open(NereusManagedLedgerFactory factory, String name,
            ManagedLedgerConfig config, Executor executor, Clock clock) {
        return factory.streams().openStream(name).thenCompose(stream -> stream.acquireWriter()
                .thenCompose(epoch -> stream.head().thenApply(head ->
                        new NereusManagedLedger(factory, name, config, stream, epoch, head, executor, clock))))
                .thenCompose(NereusManagedLedger::load);
    }

    private CompletableFuture<NereusManagedLedger> load() {
        return properties.load().thenCompose(props -> cursorStore.listCursors(streamId()))
                .thenCompose(cursors::loadStored).thenCompose(ignored -> initializeInterceptor()).thenApply(ignored -> {
            LOG.info("Opened managed ledger name={} stream={} ledgerId={} epoch={} committedEnd={} trimOffset={}",
                    name, streamId(), ledgerId, writerEpoch, committedEnd, trimOffset);
            offload.refresh();
            return this;
        });
    }

    private CompletableFuture<Void> initializeInterceptor() {
        ManagedLedgerInterceptor interceptor = config.getManagedLedgerInterceptor();
        if (interceptor == null) {
            return CompletableFuture.completedFuture(null);
        }
        Map<String, String> initial = new HashMap<>(properties.get());
        interceptor.onManagedLedgerPropertiesInitialize(initial);
        return interceptor.onManagedLedgerLastLedgerInitialize(name, () -> {
            long end = committedEnd;
            if (end <= trimOffset) {
                return CompletableFuture.completedFuture(Optional.empty());
            }
            return readOne(end - 1).thenApply(Optional::of);
        });
    }

    // ---- CursorHost ----

    @Override
    public String name() {
        return name;
    }

    @Override
    public long ledgerId() {
        return ledgerId;
    }

    /** The stream this ledger stores. */
    NereusStream stream() {
        return stream;
    }

    @Override
    public StreamId streamId() {
        return stream.id();
    }

    @Override
    public ManagedLedger ledger() {
        return this;
    }

    @Override
    public ManagedLedgerConfig config() {
        return config;
    }

    @Override
    public Executor executor() {
        return executor;
    }

    @Override
    public Clock clock() {
        return clock;
    }

    @Override
    public long trimOffset() {
        return trimOffset;
    }

    @Override
    public long committedEnd() {
        return committedEnd;
    }

    @Override
    public boolean isTerminated() {
        return state == LedgerState.TERMINATED;
    }

    @Override
    public CompletableFuture<List<Entry>> read(long from, int maxEntries, long maxBytes) {
        return reads.read(from, maxEntries, maxBytes);
    }

    @Override
    public CompletableFuture<Void> whenCommittedBeyond(long offset) {
        return waiters.await(offset);
    }

    @Override
    public CursorStore cursorStore() {
        return cursorStore;
    }

    @Override
    public long writerEpoch() {
        return writerEpoch;
    }

    /** The average payload bytes of the stored entries (see {@link LedgerSizes}). */
    @Override
    public double averageEntryBytes() {
        return sizes.averageEntryBytes(trimOffset);
    }

    @Override
    public void markDeleteMoved(NereusManagedCursor cursor) {
        stats.addMarkDeleteOp();
        trimmer.trimSoon();
    }

    @Override
    public void cursorClosed(NereusManagedCursor cursor) {
        cursors.closed(cursor);
    }

    @Override
    public void cursorActivityChanged(NereusManagedCursor cursor, boolean active) {
        ACTIVE_CURSORS.addAndGet(this, active ? 1 : -1);
    }

    /**
     * Whether a cursor is active (reads near the tail): as Pulsar's managed ledger, an entry added meanwhile goes to
     * the tail cache, and one added while none is does not.
     */
    boolean hasActiveCursors() {
        return activeCursors > 0;
    }

    // ---- appends ----

    @Override
    public Position addEntry(byte[] data) throws InterruptedException, ManagedLedgerException {
        return addEntry(data, 1, 0, data.length);
    }

    @Override
    public Position addEntry(byte[] data, int numberOfMessages) throws InterruptedException, ManagedLedgerException {
        return addEntry(data, numberOfMessages, 0, data.length);
    }

    @Override
    public Position addEntry(byte[] data, int offset, int length) throws InterruptedException, ManagedLedgerException {
        return addEntry(data, 1, offset, length);
    }

    @Override
    public Position addEntry(byte[] data, int numberOfMessages, int offset, int length)
            throws InterruptedException, ManagedLedgerException {
        return Sync.await(add(Unpooled.wrappedBuffer(data, offset, length), numberOfMessages, null));
    }

    @Override
    public void asyncAddEntry(byte[] data, AsyncCallbacks.AddEntryCallback callback, Object ctx) {
        asyncAddEntry(Unpooled.wrappedBuffer(data), 1, callback, ctx);
    }

    @Override
    public void asyncAddEntry(byte[] data, int offset, int length, AsyncCallbacks.AddEntryCallback callback,
            Object ctx) {
        asyncAddEntry(Unpooled.wrappedBuffer(data, offset, length), 1, callback, ctx);
    }

    @Override
    public void asyncAddEntry(byte[] data, int numberOfMessages, int offset, int length,
            AsyncCallbacks.AddEntryCallback callback, Object ctx) {
        asyncAddEntry(Unpooled.wrappedBuffer(data, offset, length), numberOfMessages, callback, ctx);
    }

    @Override
    public void asyncAddEntry(ByteBuf buffer, AsyncCallbacks.AddEntryCallback callback, Object ctx) {
        asyncAddEntry(buffer, 1, callback, ctx);
    }

    @Override
    public void asyncAddEntry(ByteBuf buffer, int numberOfMessages, AsyncCallbacks.AddEntryCallback callback,
            Object ctx) {
        AddOperation op = new AddOperation(buffer.retain(), ctx);
        add(op, numberOfMessages).whenComplete((position, t) -> {
            try {
                if (t != null) {
                    callback.addFailed(PulsarErrors.map(t), ctx);
                } else {
                    callback.addComplete(position, op.getData(), ctx);
                }
            } finally {
                op.getData().release();
            }
        });
    }

    private CompletableFuture<Position> add(ByteBuf data, int numberOfMessages, Object ctx) {
        AddOperation op = new AddOperation(data, ctx);
        return add(op, numberOfMessages);
    }

    private CompletableFuture<Position> add(AddOperation op, int numberOfMessages) {
        return appends.add(op, numberOfMessages, config.getManagedLedgerInterceptor());
    }

    /**
     * An append committed {@code range} of {@code bytes} payload bytes: the committed end moves. The readers parked
     * below it wake in {@link #wakeReaders}, which the append calls after its callback, as Pulsar's ledger notifies
     * its cursors after the add callback (the broker's callback moves the transaction buffer's max read position
     * that the woken readers are bounded by).
     */
    void committed(OffsetRange range, long bytes) {
        sizes.committed(range.end(), bytes, config.getMaxEntriesPerLedger());
        if (range.end() > committedEnd) {
            committedEnd = range.end();
        }
    }

    /** Wakes the readers parked below {@code end} (on the ledger's executor, after the append's callback). */
    void wakeReaders(long end) {
        waiters.advance(end);
    }

    /** An append was refused because a newer writer holds the stream. */
    void fencedByNewerWriter() {
        if (transition(LedgerState.FENCED)) {
            LOG.warn("Managed ledger fenced by a newer writer name={} stream={}", name, streamId());
        }
    }

    ManagedLedgerException stateError(LedgerState s) {
        return switch (s) {
            case TERMINATED -> new ManagedLedgerException.ManagedLedgerTerminatedException(
                    "managed ledger " + name + " is terminated");
            case FENCED -> new ManagedLedgerException.ManagedLedgerFencedException(
                    "managed ledger " + name + " is fenced by a newer writer");
            case DELETED -> new ManagedLedgerException.ManagedLedgerNotFoundException(
                    "managed ledger " + name + " was deleted");
            default -> new ManagedLedgerException.ManagedLedgerAlreadyClosedException(
                    "managed ledger " + name + " is closed");
        };
    }

    // ---- cursors ----

    @Override
    public ManagedCursor openCursor(String cursorName) throws InterruptedException, ManagedLedgerException {
        return openCursor(cursorName, InitialPosition.Latest);
    }

    @Override
    public ManagedCursor openCursor(String cursorName, InitialPosition initialPosition)
            throws InterruptedException, ManagedLedgerException {
        return openCursor(cursorName, initialPosition, Map.of(), Map.of());
    }

    @Override
    public ManagedCursor openCursor(String cursorName, InitialPosition initialPosition, Map<String, Long> props,
            Map<String, String> cursorProperties) throws InterruptedException, ManagedLedgerException {
        return Sync.await(openCursorAsync(cursorName, initialPosition, props, cursorProperties));
    }

    @Override
    public void asyncOpenCursor(String cursorName, AsyncCallbacks.OpenCursorCallback callback, Object ctx) {
        asyncOpenCursor(cursorName, InitialPosition.Latest, callback, ctx);
    }

    @Override
    public void asyncOpenCursor(String cursorName, InitialPosition initialPosition,
            AsyncCallbacks.OpenCursorCallback callback, Object ctx) {
        asyncOpenCursor(cursorName, initialPosition, Map.of(), Map.of(), callback, ctx);
    }

    @Override
    public void asyncOpenCursor(String cursorName, InitialPosition initialPosition, Map<String, Long> props,
            Map<String, String> cursorProperties, AsyncCallbacks.OpenCursorCallback callback, Object ctx) {
        Callbacks.deliver(openCursorAsync(cursorName, initialPosition, props, cursorProperties), executor,
                c -> callback.openCursorComplete(c, ctx), e -> callback.openCursorFailed(e, ctx));
    }

    private CompletableFuture<NereusManagedCursor> openCursorAsync(String cursorName, InitialPosition initial,
            Map<String, Long> props, Map<String, String> cursorProperties) {
        LedgerState s = state;
        if (s == LedgerState.CLOSED || s == LedgerState.DELETED) {
            return CompletableFuture.failedFuture(stateError(s));
        }
        return cursors.openDurable(cursorName, initial, props, cursorProperties);
    }

    @Override
    public ManagedCursor newNonDurableCursor(Position startCursorPosition) throws ManagedLedgerException {
        return newNonDurableCursor(startCursorPosition, "non-durable-cursor-" + java.util.UUID.randomUUID());
    }

    @Override
    public ManagedCursor newNonDurableCursor(Position startPosition, String subscriptionName)
            throws ManagedLedgerException {
        return newNonDurableCursor(startPosition, subscriptionName, InitialPosition.Latest, false);
    }

    @Override
    public ManagedCursor newNonDurableCursor(Position startPosition, String cursorName,
            InitialPosition initialPosition, boolean isReadCompacted) throws ManagedLedgerException {
        LedgerState s = state;
        if (s == LedgerState.CLOSED || s == LedgerState.DELETED) {
            throw stateError(s);
        }
        return cursors.nonDurable(cursorName, startPosition, initialPosition, isReadCompacted);
    }

    @Override
    public void asyncDeleteCursor(String cursorName, AsyncCallbacks.DeleteCursorCallback callback, Object ctx) {
        Callbacks.deliver(deleteCursorAsync(cursorName), executor,
                v -> callback.deleteCursorComplete(ctx), e -> callback.deleteCursorFailed(e, ctx));
    }

    @Override
    public void deleteCursor(String cursorName) throws InterruptedException, ManagedLedgerException {
        Sync.await(deleteCursorAsync(cursorName));
    }

    private CompletableFuture<Void> deleteCursorAsync(String cursorName) {
        CompletableFuture<Void> deleted = cursors.remove(cursorName)
                .map(c -> {
                    c.setInactive(); // no longer the ledger's: it reads nothing more
                    return c.deleteState().thenRun(trimmer::trimSoon);
                })
                // not open here: the stored state may still exist (it is removed conditionally on our epoch)
                .orElseGet(() -> cursorStore.deleteCursor(streamId(), cursorName, writerEpoch)
                        .thenAccept(this::checkWritten));
        if (!Compactor.COMPACTION_SUBSCRIPTION.equals(cursorName)) {
            return deleted;
        }
        // compaction disabled: as Pulsar's compactor subscription deletes its compacted ledger once its cursor is
        // gone, the stream's compacted view goes with the cursor (NereusCompactionServiceFactory)
        return deleted.thenCompose(v -> factory.streams().compactor().drop(streamId())).thenApply(n -> null);
    }

    WriteOutcome checkWritten(WriteOutcome outcome) {
        if (outcome instanceof WriteOutcome.Written) {
            return outcome;
        }
        throw new java.util.concurrent.CompletionException(PulsarErrors.map(outcome, Map.of("ledger", name)));
    }

    @Override
    public void removeWaitingCursor(ManagedCursor cursor) {
        cursor.cancelPendingReadRequest();
    }

    @Override
    public Iterable<ManagedCursor> getCursors() {
        return Collections.unmodifiableList(cursors.all());
    }

    @Override
    public Iterable<ManagedCursor> getActiveCursors() {
        return cursors.active();
    }

    Iterable<NereusManagedCursor> nereusCursors() {
        return cursors.all();
    }

    /** The durable cursor with the lowest mark-delete, if any. */
    @Override
    public ManagedCursor getSlowestConsumer() {
        return cursors.slowestDurable().orElse(null);
    }

    // ---- sizes and positions ----

    /** The stored entries as positions, now (the first offset is read before the committed end). */
    VirtualLedger view() {
        long first = trimOffset;
        return new VirtualLedger(ledgerId, first, committedEnd);
    }

    @Override
    public long getNumberOfEntries() {
        return view().entries();
    }

    @Override
    public long getNumberOfEntries(Range<Position> range) {
        return view().entries(range);
    }

    @Override
    public long getNumberOfActiveEntries() {
        long from = committedEnd;
        for (ManagedCursor c : cursors.active()) {
            from = Math.min(from, offsetOf(c.getReadPosition()));
        }
        return Math.max(0, committedEnd - from);
    }

    /**
     * Payload bytes of the entries still stored: exact once this ledger trimmed to a point it committed itself
     * (or while the stream was never trimmed); until then the bytes below the trim point are estimated from the
     * average entry (see {@link LedgerSizes}).
     */
    @Override
    public long getTotalSize() {
        return sizes.bytesBetween(trimOffset, committedEnd);
    }

    /**
     * Payload bytes after the slowest durable cursor's mark-delete position (what the size backlog quota
     * compares); 0 without durable cursors. Exact at segment boundaries, like {@link #getTotalSize()};
     * interpolated inside a segment, as Pulsar does inside a ledger.
     */
    @Override
    public long getEstimatedBacklogSize() {
        NereusManagedCursor slowest = (NereusManagedCursor) getSlowestConsumer();
        if (slowest == null) {
            return 0;
        }
        return sizes.bytesBetween(Math.max(trimOffset, slowest.markDeleteEnd()), committedEnd);
    }

    @Override
    public long getEstimatedBacklogSize(Position position) {
        return sizes.bytesBetween(Math.max(trimOffset, offsetOf(position) + 1), committedEnd);
    }

    /** Payload bytes of the stored entries from {@code offset} to the end, as {@link #getTotalSize()} counts. */
    long storedBytesFrom(long offset) {
        return sizes.bytesBetween(Math.max(trimOffset, offset), committedEnd);
    }

    @Override
    public CompletableFuture<Long> getEarliestMessagePublishTimeInBacklog() {
        NereusManagedCursor slowest = (NereusManagedCursor) getSlowestConsumer();
        if (slowest == null) {
            return CompletableFuture.completedFuture(-1L);
        }
        long at = Math.max(trimOffset, slowest.markDeleteEnd());
        if (at >= committedEnd) {
            return CompletableFuture.completedFuture(-1L);
        }
        return Callbacks.handOff(readOne(at).thenApply(e -> {
            try {
                return PublishTimes.of(e);
            } finally {
                e.release();
            }
        }), executor);
    }

    @Override
    public Position getLastConfirmedEntry() {
        return view().lastConfirmed();
    }

    @Override
    public Position getFirstPosition() {
        return view().firstPosition();
    }

    boolean isValidPosition(Position p) {
        return view().isStored(p);
    }

    @Override
    public Position getNextValidPosition(Position position) {
        return view().next(position);
    }

    @Override
    public Position getPreviousPosition(Position position) {
        return view().previous(position);
    }

    @Override
    public Position getPositionAfterN(Position startPosition, long n, PositionBound startRange) {
        return view().afterN(startPosition, n, startRange);
    }

    @Override
    public void asyncReadEntry(Position position, AsyncCallbacks.ReadEntryCallback callback, Object ctx) {
        CompletableFuture<Entry> read = isValidPosition(position) ? readOne(position.getEntryId())
                : CompletableFuture.failedFuture(new ManagedLedgerException.NonRecoverableLedgerException(
                        "position " + position + " is not a stored entry of " + name + " (ledger " + ledgerId
                                + ", entries [" + trimOffset + ", " + committedEnd + "))"));
        Callbacks.deliver(read, executor,
                e -> callback.readEntryComplete(e, ctx), e -> callback.readEntryFailed(e, ctx));
    }

    CompletableFuture<Entry> readOne(long offset) {
        return reads.readOne(offset);
    }

    /**
     * The newest position at or before {@code startPosition} whose entry satisfies {@code predicate}, read
     * backwards one entry at a time; a start outside the stored entries is returned as is (Pulsar's contract).
     */
    @Override
    public CompletableFuture<Position> getLastDispatchablePosition(Predicate<Entry> predicate,
            Position startPosition) {
        return Callbacks.handOff(reads.newestAtOrBefore(predicate, startPosition), executor);
    }

    /**
     * The position after the newest entry matching {@code predicate} (entries are searched assuming the predicate
     * holds for a prefix, as Pulsar does for publish-time searches); the first position when none matches.
     */
    @Override
    public CompletableFuture<Position> asyncFindPosition(Predicate<Entry> predicate) {
        CompletableFuture<Position> found = EntrySearch.newestMatching(this, trimOffset, committedEnd, predicate)
                .thenApply(newest -> newest.isEmpty() ? PositionFactory.create(ledgerId, trimOffset)
                        : getNextValidPosition(PositionFactory.create(ledgerId, newest.getAsLong())));
        return Callbacks.handOff(found, executor);
    }

    // ---- lifecycle ----

    @Override
    public String getName() {
        return name;
    }

    @Override
    public void asyncTerminate(AsyncCallbacks.TerminateCallback callback, Object ctx) {
        Callbacks.deliver(terminateAsync(), executor,
                p -> callback.terminateComplete(p, ctx), e -> callback.terminateFailed(e, ctx));
    }

    @Override
    public Position terminate() throws InterruptedException, ManagedLedgerException {
        return Sync.await(terminateAsync());
    }

    /**
     * Refuses new appends, waits for the last one in flight (the stream completes one stream's appends in offset
     * order, so the last one finishing means all did), then seals the stream.
     */
    private synchronized CompletableFuture<Position> terminateAsync() {
        if (terminated == null) {
            LedgerState s = state;
            if (s != LedgerState.OPEN) {
                return CompletableFuture.failedFuture(stateError(s));
            }
            transition(LedgerState.TERMINATED);
            terminated = appends.handedOff().thenCompose(lastAdd -> lastAdd.handle((r, t) -> null))
                    .thenCompose(ignored -> factory.metadata().streams().seal(streamId(), writerEpoch))
                    .thenAccept(head -> {
                        sizes.caughtUp(head.committedEnd(), head.cumulativeBytes());
                        committedEnd = Math.max(committedEnd, head.committedEnd());
                        waiters.releaseAll();
                        LOG.info("Terminated managed ledger name={} stream={} lastConfirmed={}", name, streamId(),
                                getLastConfirmedEntry());
                    });
        }
        return terminated.thenApply(ignored -> getLastConfirmedEntry());
    }

    @Override
    public CompletableFuture<Position> asyncMigrate() {
        return Callbacks.handOff(setPropertiesAsync(Map.of(MIGRATED_PROPERTY, "true"), false).thenCompose(ignored ->
                state == LedgerState.TERMINATED ? CompletableFuture.completedFuture(getLastConfirmedEntry())
                        : terminateAsync()), executor);
    }

    @Override
    public boolean isMigrated() {
        return "true".equals(properties.get().get(MIGRATED_PROPERTY));
    }

    @Override
    public void close() throws InterruptedException, ManagedLedgerException {
        Sync.await(closeAsync());
    }

    @Override
    public void asyncClose(AsyncCallbacks.CloseCallback callback, Object ctx) {
        Callbacks.deliver(closeAsync(), executor,
                v -> callback.closeComplete(ctx), e -> callback.closeFailed(e, ctx));
    }

    /**
     * Moves the lifecycle state to {@code next} if {@link State#canTransitionTo} allows it from the current one;
     * false (nothing changed) otherwise. Safe from any thread.
     */
    private synchronized boolean transition(LedgerState next) {
        if (!state.canTransitionTo(next)) {
            return false;
        }
        state = next;
        return true;
    }

    /**
     * Closes every cursor (flushing their state), releases waiting readers and leaves the factory. Every call
     * returns the same future, so a broker shutdown that closes the ledger while a topic close is in flight waits
     * for the flush.
     */
    synchronized CompletableFuture<Void> closeAsync() {
        if (closed != null) {
            return closed;
        }
        if (state == LedgerState.DELETED) {
            closed = CompletableFuture.completedFuture(null);
            return closed;
        }
        transition(LedgerState.CLOSED);
        CompletableFuture<Void> cursorsClosed = cursors.closeAll();
        waiters.releaseAll();
        closed = cursorsClosed.whenComplete((v, t) -> {
            factory.closed(this);
            LOG.info("Closed managed ledger name={} stream={}", name, streamId());
        });
        return closed;
    }

    @Override
    public void delete() throws InterruptedException, ManagedLedgerException {
        Sync.await(deleteAsync());
    }

    @Override
    public void asyncDelete(AsyncCallbacks.DeleteLedgerCallback callback, Object ctx) {
        Callbacks.deliver(deleteAsync(), executor,
                v -> callback.deleteLedgerComplete(ctx), e -> callback.deleteLedgerFailed(e, ctx));
    }

    /**
     * Deletes the ledger: its stream's catalog entry moves to DELETED (opening the name again creates a new stream
     * with a new virtual ledger id, so old positions never alias new data); cursors stop and readers are released.
     */
    synchronized CompletableFuture<Void> deleteAsync() {
        if (deleted != null) {
            return deleted;
        }
        transition(LedgerState.DELETED);
        ManagedLedgerException why = new ManagedLedgerException.ManagedLedgerNotFoundException(
                "managed ledger " + name + " was deleted");
        cursors.failAll(why);
        waiters.releaseAll();
        deleted = factory.streams().deleteStream(name).thenCompose(entry -> factory.topicNodes().remove(name))
                .thenAccept(ignored -> {
                    factory.closed(this);
                    LOG.info("Deleted managed ledger name={} stream={} ledgerId={}", name, streamId(), ledgerId);
                });
        return deleted;
    }

    // ---- properties ----

    @Override
    public Map<String, String> getProperties() {
        return properties.get();
    }

    @Override
    public void setProperty(String key, String value) throws InterruptedException, ManagedLedgerException {
        Sync.await(setPropertiesAsync(Map.of(key, value), false));
    }

    @Override
    public void asyncSetProperty(String key, String value, AsyncCallbacks.UpdatePropertiesCallback callback,
            Object ctx) {
        propertiesCallback(setPropertiesAsync(Map.of(key, value), false), callback, ctx);
    }

    @Override
    public void deleteProperty(String key) throws InterruptedException, ManagedLedgerException {
        Sync.await(deletePropertyAsync(key));
    }

    @Override
    public void asyncDeleteProperty(String key, AsyncCallbacks.UpdatePropertiesCallback callback, Object ctx) {
        propertiesCallback(deletePropertyAsync(key), callback, ctx);
    }

    @Override
    public void setProperties(Map<String, String> props) throws InterruptedException, ManagedLedgerException {
        Sync.await(setPropertiesAsync(props, true));
    }

    @Override
    public void asyncSetProperties(Map<String, String> props, AsyncCallbacks.UpdatePropertiesCallback callback,
            Object ctx) {
        propertiesCallback(setPropertiesAsync(props, true), callback, ctx);
    }

    private void propertiesCallback(CompletableFuture<Map<String, String>> f,
            AsyncCallbacks.UpdatePropertiesCallback callback, Object ctx) {
        Callbacks.deliver(f, executor,
                p -> callback.updatePropertiesComplete(p, ctx), e -> callback.updatePropertiesFailed(e, ctx));
    }

    private CompletableFuture<Map<String, String>> setPropertiesAsync(Map<String, String> update, boolean replace) {
        return replace ? properties.replace(update) : properties.put(update);
    }

    private CompletableFuture<Map<String, String>> deletePropertyAsync(String key) {
        return properties.remove(key);
    }

    // ---- trimming, truncation ----

    @Override
    public void trimConsumedLedgersInBackground(CompletableFuture<?> promise) {
        Callbacks.handOff(trimmer.trimNow(), executor).whenComplete((v, t) -> {
            if (t != null) {
                promise.completeExceptionally(PulsarErrors.map(t));
            } else {
                promise.complete(null);
            }
        });
    }

    /**
     * Clears every cursor's backlog, then trims everything consumed whatever the retention policy (as Pulsar's
     * truncation deletes every ledger but the one being written): all whole segments but the one holding the last
     * entry.
     */
    @Override
    public CompletableFuture<Void> asyncTruncate() {
        List<CompletableFuture<Void>> clears = new ArrayList<>();
        for (NereusManagedCursor c : cursors.all()) {
            clears.add(c.clearBacklogAsync());
        }
        return Callbacks.handOff(CompletableFuture.allOf(clears.toArray(CompletableFuture[]::new))
                .thenCompose(v -> trimmer.truncateNow()), executor);
    }

    /**
     * Moves the first readable offset up to {@code newTrimOffset} (never down). Only the trimmer calls this,
     * {@link #trimFailed} and {@link #trimmed}, one run at a time, so the volatile field has one writer.
     */
    void trimming(long newTrimOffset) {
        if (newTrimOffset > trimOffset) {
            trimOffset = Math.min(newTrimOffset, committedEnd);
        }
    }

    /** The stream's head now trims below {@code newTrimOffset}. */
    void trimmed(long newTrimOffset) {
        trimming(newTrimOffset);
        sizes.trimmed(trimOffset);
    }

    /** A trim to {@code target} failed: the offsets from {@code before} are readable again. */
    void trimFailed(long target, long before) {
        if (trimOffset == target) {
            trimOffset = before;
        }
    }

    LedgerState state() {
        return state;
    }

    int walWriteQuorum() {
        return factory.walWriteQuorum();
    }

    // ---- things a BookKeeper-based ledger has and a Nereus stream does not ----

    // ---- offload: materialization into objects (see LedgerOffload) ----

    /** Payload bytes of this ledger held in objects (higher generations), as last read from the index. */
    @Override
    public long getOffloadedSize() {
        return offload.offloadedSize();
    }

    /** Objects are not ledgers: 0, like a ledger that never offloaded. */
    @Override
    public long getLastOffloadedLedgerId() {
        return 0;
    }

    @Override
    public long getLastOffloadedSuccessTimestamp() {
        return offload.lastSuccessMillis();
    }

    @Override
    public long getLastOffloadedFailureTimestamp() {
        return offload.lastFailureMillis();
    }

    @Override
    public Position offloadPrefix(Position pos) throws InterruptedException, ManagedLedgerException {
        return Sync.await(offload.offloadPrefix(pos));
    }

    /**
     * Materializes the entries before {@code pos} into objects now (rolling the WAL slice over when they reach into
     * it) and completes after their publication, with the position before which every entry is in objects.
     */
    @Override
    public void asyncOffloadPrefix(Position pos, AsyncCallbacks.OffloadCallback callback, Object ctx) {
        offload.offloadPrefix(pos).whenCompleteAsync((done, error) -> {
            if (error != null) {
                callback.offloadFailed(PulsarErrors.map(error), ctx);
            } else {
                callback.offloadComplete(done, ctx);
            }
        }, executor);
    }

    LedgerOffload offload() {
        return offload;
    }

    /**
     * Pulsar's ledger leaves its write-failed state here (the transaction buffer, the pending-ack store and the
     * transaction log call it after an append failed with {@code ManagedLedgerAlreadyClosedException}). A Nereus ledger
     * has no such state: after a failed WAL write or commit the stream re-reads its head and accepts the next append
     * by itself, and a closed, fenced or terminated ledger stays so in Pulsar's ledger too; so there is nothing to do.
     * The WAL rolls its own slices; there is no current ledger to roll.
     */
    @Override
    public void readyToCreateNewLedger() {
    }

    @Override
    public void rollCurrentLedgerIfFull() {
    }

    @Override
    public boolean checkInactiveLedgerAndRollOver() {
        return false;
    }

    /** Reads are served by the engine's tail cache, which every committed entry enters; nothing to decide here. */
    @Override
    public void checkCursorsToCacheEntries() {
    }

    @Override
    public ManagedLedgerConfig getConfig() {
        return config;
    }

    @Override
    public void setConfig(ManagedLedgerConfig config) {
        this.config = config;
    }

    @Override
    public ManagedLedgerMXBean getStats() {
        return stats;
    }

    NereusLedgerStats stats() {
        return stats;
    }

    @Override
    public ManagedLedgerInterceptor getManagedLedgerInterceptor() {
        return config.getManagedLedgerInterceptor();
    }

    @Override
    public int getPendingAddEntriesCount() {
        return appends.pending();
    }

    /** Nereus keeps one tail cache per broker, not one per ledger; this ledger holds no cache of its own. */
    @Override
    public long getCacheSize() {
        return 0;
    }

    // ---- ledger info ----

    /** The one virtual ledger of this stream incarnation, honestly: entries and bytes stored, creation time. */
    LedgerInfo ledgerInfo() {
        return LedgerInfo.newBuilder().setLedgerId(ledgerId).setEntries(getNumberOfEntries())
                .setSize(getTotalSize()).setTimestamp(createdAtMillis).build();
    }

    @Override
    public CompletableFuture<LedgerInfo> getLedgerInfo(long id) {
        return CompletableFuture.completedFuture(id == ledgerId ? ledgerInfo() : null);
    }

    @Override
    public Optional<LedgerInfo> getOptionalLedgerInfo(long id) {
        return id == ledgerId ? Optional.of(ledgerInfo()) : Optional.empty();
    }

    /**
     * The one virtual ledger, whatever has been trimmed: Pulsar's transaction buffer keeps an aborted transaction
     * while {@code getLedgersInfo().containsKey(ledgerId of its abort marker)}, which holds for every position of this
     * incarnation (as for a stock ledger that retention has not deleted).
     */
    @Override
    public NavigableMap<Long, LedgerInfo> getLedgersInfo() {
        NavigableMap<Long, LedgerInfo> m = new TreeMap<>();
        m.put(ledgerId, ledgerInfo());
        return Collections.unmodifiableNavigableMap(m);
    }

    @Override
    public CompletableFuture<ManagedLedgerInternalStats> getManagedLedgerInternalStats(boolean includeLedgerMetadata) {
        return Callbacks.handOff(
                offload.refresh().thenApply(coverage -> LedgerInternalStats.of(this, includeLedgerMetadata)), executor);
    }

    long entriesAdded() {
        return appends.entriesAdded();
    }

    long createdAtMillis() {
        return createdAtMillis;
    }

    int waitingReaders() {
        return waiters.size();
    }

    LedgerCursors cursors() {
        return cursors;
    }

    /** What internal stats show as the ledger's metadata: the stream incarnation and its range. */
    String describeStream() {
        return "nereus stream " + streamId() + " incarnation " + stream.catalog().incarnation() + ", entries ["
                + trimOffset + ", " + committedEnd + "), writer epoch " + writerEpoch + "; " + offload.describe();
    }
}
