package io.nereus.pulsar.cursor;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.CursorStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamId;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import static io.nereus.testing.StreamTesting.await;

/**
 * A test-only {@link CursorHost} over a real {@link NereusStream} (real BookKeeper WAL, EmbeddedFdb metadata):
 * it is the stream's writer, appends through {@link #append}, tracks the committed end from append
 * completions and parks {@link #whenCommittedBeyond} waiters in a small purgatory completed by those appends,
 * on its own single-thread executor (the "ledger thread"). It has no ManagedLedger object
 * ({@link #ledger()} is null), so tests do not call cursor methods that need one.
 */
final class CursorTestHost implements CursorHost, AutoCloseable {
    static final long LEDGER_ID = 1L << 40;

    final NereusStream stream;
    final CursorStore cursorStore;
    final ManagedLedgerConfig config = new ManagedLedgerConfig();
    final List<NereusManagedCursor> markDeleteMoves = new CopyOnWriteArrayList<>();
    final List<NereusManagedCursor> closedCursors = new CopyOnWriteArrayList<>();
    /** Each activity change a cursor told, in order: true when it became active, false when it stopped. */
    final List<Boolean> activityChanges = new CopyOnWriteArrayList<>();
    /** Entries handed out by {@link #read}, to check that cursors do not fetch what they acknowledged. */
    final java.util.concurrent.atomic.AtomicLong entriesServed = new java.util.concurrent.atomic.AtomicLong();
    private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "cursor-test-ledger");
        t.setDaemon(true);
        return t;
    });
    private final long epoch;
    private final TreeMap<Long, List<CompletableFuture<Void>>> waiters = new TreeMap<>();
    private long committedEnd;
    private long trimOffset;
    private long totalBytes;
    private boolean terminated;
    private boolean closed;
    /** Offsets whose reads fail as lost data (a fault the test injects). */
    private final java.util.Set<Long> unreadable = java.util.concurrent.ConcurrentHashMap.newKeySet();

    CursorTestHost(NereusStream stream, CursorStore cursorStore) {
        this.stream = stream;
        this.cursorStore = cursorStore;
        this.epoch = await(stream.acquireWriter());
        this.committedEnd = await(stream.head()).committedEnd();
        config.setThrottleMarkDelete(0);
    }

    /** Appends one entry per payload (committed in order) and returns the offsets. */
    OffsetRange append(String... payloads) {
        List<AppendEntry> entries = new ArrayList<>();
        long bytes = 0;
        for (String p : payloads) {
            byte[] b = p.getBytes(StandardCharsets.UTF_8);
            entries.add(AppendEntry.of(b));
            bytes += b.length;
        }
        OffsetRange r = await(stream.append(entries));
        List<CompletableFuture<Void>> wake = new ArrayList<>();
        synchronized (this) {
            committedEnd = Math.max(committedEnd, r.end());
            totalBytes += bytes;
            Map<Long, List<CompletableFuture<Void>>> due = waiters.headMap(committedEnd, false);
            due.values().forEach(wake::addAll);
            due.clear();
        }
        wake.forEach(f -> executor.execute(() -> f.complete(null)));
        return r;
    }

    /** Appends {@code n} entries with payloads "0", "1", ... continuing from the committed end. */
    OffsetRange appendNumbered(int n) {
        long start;
        synchronized (this) {
            start = committedEnd;
        }
        String[] p = new String[n];
        for (int i = 0; i < n; i++) {
            p[i] = Long.toString(start + i);
        }
        return append(p);
    }

    void terminate() {
        synchronized (this) {
            terminated = true;
        }
        wakeAll();
    }

    /** Makes reads that include {@code offset} fail with NonRecoverableLedgerException, as lost data would. */
    void makeUnreadable(long offset) {
        unreadable.add(offset);
    }

    synchronized void trimTo(long offset) {
        trimOffset = offset;
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        wakeAll();
        executor.shutdown();
    }

    private void wakeAll() {
        List<CompletableFuture<Void>> wake = new ArrayList<>();
        synchronized (this) {
            waiters.values().forEach(wake::addAll);
            waiters.clear();
        }
        wake.forEach(f -> executor.execute(() -> f.complete(null)));
    }

    /** Waiters parked now (cancelled ones included until their offset is reached). */
    synchronized int parkedWaiters() {
        return waiters.values().stream().mapToInt(List::size).sum();
    }

    @Override
    public String name() {
        return "persistent://tenant/ns/cursor-test";
    }

    @Override
    public long ledgerId() {
        return LEDGER_ID;
    }

    @Override
    public StreamId streamId() {
        return stream.id();
    }

    @Override
    public ManagedLedger ledger() {
        return null;
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
    public java.time.Clock clock() {
        return java.time.Clock.systemUTC();
    }

    @Override
    public synchronized long trimOffset() {
        return trimOffset;
    }

    @Override
    public synchronized long committedEnd() {
        return committedEnd;
    }

    @Override
    public synchronized boolean isTerminated() {
        return terminated;
    }

    @Override
    public CompletableFuture<List<Entry>> read(long from, int maxEntries, long maxBytes) {
        int count = (int) Math.min(maxEntries, Math.max(0, committedEnd() - from));
        if (count <= 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        for (long o = from; o < from + count; o++) {
            if (unreadable.contains(o)) {
                return CompletableFuture.failedFuture(
                        new org.apache.bookkeeper.mledger.ManagedLedgerException.NonRecoverableLedgerException(
                                "entry " + o + " is lost"));
            }
        }
        return stream.read(ReadView.COMMITTED, from, count, maxBytes, BoundaryMode.EXACT_START)
                .handle((r, t) -> {
                    if (t != null) {
                        throw new java.util.concurrent.CompletionException(PulsarErrors.map(t));
                    }
                    List<Entry> out = io.nereus.pulsar.PulsarEntries.takeAll(LEDGER_ID, r.entries());
                    entriesServed.addAndGet(out.size());
                    return out;
                });
    }

    @Override
    public CompletableFuture<Void> whenCommittedBeyond(long offset) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (this) {
            if (committedEnd <= offset && !terminated && !closed) {
                waiters.computeIfAbsent(offset, k -> new ArrayList<>()).add(f);
                return f;
            }
        }
        executor.execute(() -> f.complete(null));
        return f;
    }

    @Override
    public CursorStore cursorStore() {
        return cursorStore;
    }

    @Override
    public long writerEpoch() {
        return epoch;
    }

    @Override
    public synchronized double averageEntryBytes() {
        return committedEnd == 0 ? 0 : (double) totalBytes / committedEnd;
    }

    @Override
    public void markDeleteMoved(NereusManagedCursor cursor) {
        markDeleteMoves.add(cursor);
    }

    @Override
    public void cursorClosed(NereusManagedCursor cursor) {
        closedCursors.add(cursor);
    }

    @Override
    public void cursorActivityChanged(NereusManagedCursor cursor, boolean active) {
        activityChanges.add(active);
    }
}
