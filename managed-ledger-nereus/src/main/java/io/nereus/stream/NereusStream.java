package io.nereus.stream;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import io.nereus.generation.GenerationResolver;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.CatalogEntry;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamCommitStore;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.wal.WalWriter;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One stream as seen by one storage instance: appends (once this instance acquired the writer), reads in
 * any view, the head and waits for commits. One handle per stream per storage instance.
 *
 * <p>Writer state machine (guarded by this object's monitor):
 * <pre>
 *   NO_WRITER ──acquireWriter──▶ READY ──append failed──▶ REFRESHING ──head re-read──▶ READY
 *                                  │                          ├──head unreadable──▶ NO_WRITER
 *                                  └──────fenced──────────────┴──▶ FENCED
 * </pre>
 * acquireWriter leads from every mode to READY (a new epoch); a fencing seen in any mode leads to FENCED.
 * Offsets are assigned in READY under the monitor, so one stream's appends reach the WAL in offset order.
 * After any failure the handle re-reads the head (after every batch already sealed has finished its commit)
 * and continues at its committed end; appends arriving meanwhile wait for that.
 */
public final class NereusStream {
    /**
     * The writer state of this handle (diagram on the class); {@link #canTransitionTo} is the one table of
     * allowed moves and {@link NereusStream#moveTo} the one place that makes them. Acquiring the writer again
     * is allowed from every state (a new epoch); a fencing seen in any state makes the handle FENCED.
     */
    enum Mode {
        NO_WRITER, READY, REFRESHING, FENCED;

        boolean canTransitionTo(Mode next) {
            return switch (next) {
                case READY, FENCED -> true;
                case REFRESHING -> this == READY;
                case NO_WRITER -> this == REFRESHING;
            };
        }
    }

    private final CatalogEntry catalog;
    private final StreamCommitStore streams;
    private final WalWriter wal;
    private final GenerationResolver resolver;
    private final TailCache tail;
    private final StreamReads reads;
    private final String writerId;

    // guarded by this
    private Mode mode = Mode.NO_WRITER;
    private long epoch;
    private long nextOffset;
    private CompletableFuture<Void> refreshed = CompletableFuture.completedFuture(null);
    private volatile long session;

    NereusStream(CatalogEntry catalog, StreamCommitStore streams, WalWriter wal, GenerationResolver resolver,
            TailCache tail, String writerId) {
        this.catalog = catalog;
        this.streams = streams;
        this.wal = wal;
        this.resolver = resolver;
        this.tail = tail;
        this.reads = new StreamReads(catalog.streamId(), tail, resolver);
        this.writerId = writerId;
    }

    public StreamId id() {
        return catalog.streamId();
    }

    public CatalogEntry catalog() {
        return catalog;
    }

    /**
     * Makes this instance the stream's writer with a new epoch, fencing every earlier writer (including an
     * earlier epoch of this instance). Returns the epoch (the fencing token).
     */
    public CompletableFuture<Long> acquireWriter() {
        return streams.acquireWriter(id(), writerId).thenApply(head -> {
            synchronized (this) {
                session++;
                moveTo(Mode.READY);
                epoch = head.writerEpoch();
                nextOffset = head.committedEnd();
                refreshed = CompletableFuture.completedFuture(null);
            }
            return head.writerEpoch();
        });
    }

    /**
     * Appends entries in order; completes with their offsets once committed. Fails with a
     * {@link NereusException}: FENCED when another writer took over (this handle stays fenced), a RETRIABLE_
     * code after a WAL or commit failure (the next append continues at the re-read head). The payloads are lent
     * ({@link AppendEntry}): the caller may release its references once this returns.
     */
    public CompletableFuture<OffsetRange> append(List<AppendEntry> entries) {
        return append(entries, OptionalLong.empty(), true);
    }

    /**
     * As {@link #append(List)}, but the entries go to the tail cache once committed only if {@code cache}: for a
     * writer that knows whether anyone reads near the tail. Pulsar's managed ledger caches an added entry only while
     * one of its cursors is active; without such a reader an entry held in the tail cache (with the buffer it is a
     * slice of) only waits to be evicted. A read that misses the cache reads the stream's storage, so this decides
     * where reads are served from, never what they return.
     */
    public CompletableFuture<OffsetRange> append(List<AppendEntry> entries, boolean cache) {
        return append(entries, OptionalLong.empty(), cache);
    }

    /**
     * As {@link #append(List)}, only if the entries get offsets from {@code expectedStart} on: for a caller whose
     * payloads name their own offsets (the Kafka adapter writes a batch's base offset into its bytes), so that a
     * payload is never stored at an offset other than the one it names. When the stream's next offset is another
     * (an earlier append failed and the handle continued at the re-read head) the append fails with
     * RETRIABLE_ABANDONED, context {@code expectedStart} and {@code nextOffset}, and nothing is stored.
     */
    public CompletableFuture<OffsetRange> append(List<AppendEntry> entries, long expectedStart) {
        if (expectedStart < 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("expectedStart must be >= 0"));
        }
        return append(entries, OptionalLong.of(expectedStart), true);
    }

    /**
     * Takes the stream's own reference to each payload (a retained slice: indices of its own, so the caller may
     * move its buffer's), held until the append completes and released then, on every path (refused here, failed
     * or committed by the WAL): the caller's references stay the caller's. The WAL and the tail cache take
     * references of their own from these slices.
     */
    private CompletableFuture<OffsetRange> append(List<AppendEntry> entries, OptionalLong expectedStart,
            boolean cache) {
        List<AppendEntry> owned;
        try {
            int n = entries.size();
            if (n == 0) {
                throw new IllegalArgumentException("append needs at least one entry");
            }
            for (AppendEntry e : entries) {
                Objects.requireNonNull(e, "entry");
            }
            if (n == 1) {
                owned = List.of(entries.get(0).retainedSlice());
            } else {
                AppendEntry[] slices = new AppendEntry[n];
                try {
                    for (int i = 0; i < n; i++) {
                        slices[i] = entries.get(i).retainedSlice(); // fails for a payload already released
                    }
                } catch (RuntimeException e) {
                    for (AppendEntry taken : slices) {
                        if (taken != null) {
                            taken.payload().release();
                        }
                    }
                    throw e;
                }
                owned = Arrays.asList(slices);
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return appendOwned(owned, expectedStart, cache);
    }

    private static void release(List<AppendEntry> owned) {
        for (AppendEntry e : owned) {
            e.payload().release();
        }
    }

    /** Appends entries whose stream references it releases once the append has completed, whatever the outcome. */
    private CompletableFuture<OffsetRange> appendOwned(List<AppendEntry> owned, OptionalLong expectedStart,
            boolean cache) {
        CompletableFuture<Void> wait;
        synchronized (this) {
            switch (mode) {
                case NO_WRITER:
                    release(owned);
                    return CompletableFuture.failedFuture(Errors.of(ErrorCode.NOT_WRITABLE, id()));
                case FENCED:
                    release(owned);
                    return CompletableFuture.failedFuture(Errors.of(ErrorCode.FENCED, id()));
                case REFRESHING:
                    wait = refreshed;
                    break;
                default:
                    return appendLocked(owned, expectedStart, cache);
            }
        }
        // the refresh never fails (it ends in a mode); the append then runs on the thread that ended it
        return wait.thenCompose(ignored -> appendOwned(owned, expectedStart, cache));
    }

    private CompletableFuture<OffsetRange> appendLocked(List<AppendEntry> entries, OptionalLong expectedStart,
            boolean cache) {
        long first = nextOffset;
        if (expectedStart.isPresent() && expectedStart.getAsLong() != first) {
            release(entries);
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.RETRIABLE_ABANDONED,
                    ErrorContext.of("stream", id(), "expectedStart", expectedStart.getAsLong(), "nextOffset", first)));
        }
        long records = 0;
        for (AppendEntry e : entries) {
            records += e.recordCount();
        }
        OffsetRange range = new OffsetRange(first, first + records);
        nextOffset = range.end();
        long mySession = session;
        return wal.append(id(), epoch, first, entries, () -> session == mySession).handle((head, error) -> {
            try {
                if (error != null) {
                    NereusException n = Errors.append(error, id());
                    failed(mySession, n);
                    throw fencedIfDropped(n);
                }
                if (cache) {
                    cached(range, entries); // the tail cache retains what it keeps
                }
                return range;
            } finally {
                release(entries);
            }
        });
    }

    /**
     * The handle's write session: it changes whenever the writer is acquired, fenced or an append fails, so a caller
     * that saw one value before an append and another after knows that an append in between failed (or will).
     */
    public long writeSession() {
        return session;
    }

    private void cached(OffsetRange range, List<AppendEntry> entries) {
        long offset = range.start();
        for (AppendEntry e : entries) {
            tail.put(id(), new OffsetRange(offset, offset + e.recordCount()), e.payload());
            offset += e.recordCount();
        }
    }

    /**
     * An append the WAL dropped because an earlier one failed reports FENCED once that failure fenced this
     * handle: it was never committed and never will be, and a retry on this handle cannot succeed.
     */
    private NereusException fencedIfDropped(NereusException n) {
        synchronized (this) {
            if (n.code() == ErrorCode.RETRIABLE_ABANDONED && mode == Mode.FENCED) {
                return new NereusException(ErrorCode.FENCED, Map.of("stream", id()), n);
            }
        }
        return n;
    }

    /** The one place the writer mode changes; called under this object's monitor. */
    private void moveTo(Mode next) {
        if (!mode.canTransitionTo(next)) {
            throw new IllegalStateException("stream " + id() + ": writer mode " + mode + " cannot become " + next);
        }
        mode = next;
    }

    private void failed(long failedSession, NereusException cause) {
        synchronized (this) {
            if (cause.code() == ErrorCode.FENCED) {
                moveTo(Mode.FENCED);
                session++;
                return;
            }
            if (session != failedSession || mode != Mode.READY) {
                return;
            }
            session++;
            moveTo(Mode.REFRESHING);
            long refreshSession = session;
            refreshed = wal.barrier().thenCompose(ignored -> streams.head(id())).handle((head, error) -> {
                synchronized (this) {
                    if (session != refreshSession || mode != Mode.REFRESHING) {
                        return null;
                    }
                    if (error != null || head.isEmpty()) {
                        moveTo(Mode.NO_WRITER);
                    } else if (head.get().writerEpoch() != epoch) {
                        moveTo(Mode.FENCED);
                    } else {
                        nextOffset = head.get().committedEnd();
                        moveTo(Mode.READY);
                    }
                }
                return null;
            });
        }
    }

    /** The stream's head as stored now. */
    public CompletableFuture<StreamHead> head() {
        return streams.head(id()).thenApply(h -> h.orElseThrow(() -> Errors.of(ErrorCode.NOT_FOUND, id())));
    }

    /**
     * Reads committed entries from {@code fromOffset} in {@code view}: at most {@code maxEntries} entries and,
     * beyond the first, at most {@code maxBytes} payload bytes. The head snapshot read first decides: below the
     * trim point fails OFFSET_TRIMMED, at or after the committed end returns nothing. The entries are retained
     * slices of what the tail cache, the WAL reader or the object blocks hold (no copies); the caller owns them
     * ({@link ReadResult}). Cancelling the returned future gives them up: they are released.
     */
    public CompletableFuture<ReadResult> read(ReadView view, long fromOffset, int maxEntries, long maxBytes,
            BoundaryMode mode) {
        RuntimeException invalid = invalidRead(view, fromOffset, maxEntries, maxBytes, mode);
        if (invalid != null) {
            return CompletableFuture.failedFuture(invalid);
        }
        return StreamReads.releasedIfAbandoned(head().thenCompose(head -> {
            return reads.read(view, fromOffset, maxEntries, maxBytes, mode, head.readableRange());
        }));
    }

    /**
     * As {@link #read}, with the stream's readable range {@code [trim offset, committed end)} given instead of read
     * from the head: for the stream's writer, which knows both (it committed every offset below its committed end
     * and is the only one that trims), so its reads need no metadata read before the tail cache or the resolver.
     * A range that claims more than the head holds is a caller bug; offsets the stream no longer has fail as any
     * unreadable offset does.
     */
    public CompletableFuture<ReadResult> read(ReadView view, long fromOffset, int maxEntries, long maxBytes,
            BoundaryMode mode, OffsetRange readable) {
        RuntimeException invalid = invalidRead(view, fromOffset, maxEntries, maxBytes, mode);
        if (invalid == null && readable == null) {
            invalid = new NullPointerException("readable");
        }
        if (invalid != null) {
            return CompletableFuture.failedFuture(invalid);
        }
        try {
            return StreamReads.releasedIfAbandoned(reads.read(view, fromOffset, maxEntries, maxBytes, mode, readable));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static RuntimeException invalidRead(ReadView view, long fromOffset, int maxEntries, long maxBytes,
            BoundaryMode mode) {
        if (view == null || mode == null) {
            return new NullPointerException(view == null ? "view" : "mode");
        }
        if (fromOffset < 0 || maxEntries < 1 || maxBytes < 0) {
            return new IllegalArgumentException("need fromOffset >= 0, maxEntries >= 1, maxBytes >= 0");
        }
        return null;
    }
}
