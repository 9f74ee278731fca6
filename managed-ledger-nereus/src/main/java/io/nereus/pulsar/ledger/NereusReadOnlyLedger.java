package io.nereus.pulsar.ledger;

import com.google.common.collect.BoundType;
import com.google.common.collect.Range;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamHead;
import io.nereus.pulsar.Callbacks;
import io.nereus.pulsar.EntryReader;
import io.nereus.pulsar.PulsarEntries;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.pulsar.Sync;
import io.nereus.pulsar.VirtualLedger;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.AsyncCallbacks;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.ReadOnlyCursor;
import org.apache.bookkeeper.mledger.ReadOnlyManagedLedger;

/**
 * A ledger opened for reading only (tools, connectors, the segmented transaction snapshot): it never acquires
 * the writer, so it can run beside the owning broker. Its view of the committed end is the stored head, read
 * again by every read.
 */
final class NereusReadOnlyLedger implements ReadOnlyManagedLedger, EntryReader {
    private final NereusStream stream;
    private final long ledgerId;
    private final Map<String, String> properties;
    private final Executor executor;
    private volatile StreamHead head;

    private NereusReadOnlyLedger(NereusStream stream, StreamHead head, Map<String, String> properties,
            Executor executor) {
        this.stream = stream;
        this.ledgerId = stream.catalog().virtualLedgerId();
        this.head = head;
        this.properties = properties;
        this.executor = executor;
    }

    static CompletableFuture<NereusReadOnlyLedger> open(NereusManagedLedgerFactory factory, String name) {
        return factory.activeCatalogEntry(name)
                .thenCompose(entry -> factory.streams().openStream(name))
                .thenCompose(stream -> stream.head().thenCompose(head ->
                        factory.cursorStore().loadProperties(stream.id()).thenApply(props ->
                                new NereusReadOnlyLedger(stream, head, Map.copyOf(props.values()),
                                        factory.executor().chooseThread(name)))));
    }

    @Override
    public CompletableFuture<List<Entry>> read(long from, int maxEntries, long maxBytes) {
        // one head read, which both refreshes this ledger's view and bounds the read (the stream would read it anyway)
        return stream.head().thenCompose(h -> {
            head = h;
            return stream.read(ReadView.COMMITTED, from, maxEntries, maxBytes, BoundaryMode.EXACT_START,
                    h.readableRange());
        }).thenApply(r -> PulsarEntries.takeAll(ledgerId, r.entries()))
                .exceptionally(t -> {
                    throw new java.util.concurrent.CompletionException(PulsarErrors.map(t));
                });
    }

    @Override
    public void asyncReadEntry(Position position, AsyncCallbacks.ReadEntryCallback callback, Object ctx) {
        StreamHead h = head;
        CompletableFuture<List<Entry>> f = position.getLedgerId() == ledgerId && position.getEntryId() >= h.trimOffset()
                ? read(position.getEntryId(), 1, Long.MAX_VALUE)
                : CompletableFuture.failedFuture(new ManagedLedgerException.NonRecoverableLedgerException(
                        "position " + position + " is not a stored entry of ledger " + ledgerId));
        CompletableFuture<Entry> one = f.thenApply(l -> {
            if (l.isEmpty()) {
                throw new java.util.concurrent.CompletionException(
                        new ManagedLedgerException.NonRecoverableLedgerException("position " + position
                                + " is beyond the committed entries of ledger " + ledgerId));
            }
            return l.get(0);
        });
        Callbacks.deliver(one, executor, e -> callback.readEntryComplete(e, ctx),
                e -> callback.readEntryFailed(e, ctx));
    }

    @Override
    public long getNumberOfEntries() {
        StreamHead h = head;
        return h.committedEnd() - h.trimOffset();
    }

    @Override
    public ReadOnlyCursor createReadOnlyCursor(Position startPosition) {
        return new Cursor(startPosition);
    }

    @Override
    public Map<String, String> getProperties() {
        return properties;
    }

    private long clamp(Position p) {
        StreamHead h = head;
        return p == null ? h.trimOffset() : new VirtualLedger(ledgerId, h.trimOffset(), h.committedEnd()).offsetOf(p);
    }

    /** A read-only cursor: a read position and nothing persisted. Not thread-safe beyond its volatile position. */
    private final class Cursor implements ReadOnlyCursor {
        private volatile long readOffset;

        Cursor(Position start) {
            readOffset = clamp(start);
        }

        @Override
        public List<Entry> readEntries(int numberOfEntriesToRead) throws InterruptedException, ManagedLedgerException {
            return Sync.await(readAsync(numberOfEntriesToRead, Long.MAX_VALUE, null));
        }

        @Override
        public void asyncReadEntries(int numberOfEntriesToRead, AsyncCallbacks.ReadEntriesCallback callback,
                Object ctx, Position maxPosition) {
            asyncReadEntries(numberOfEntriesToRead, Long.MAX_VALUE, callback, ctx, maxPosition);
        }

        @Override
        public void asyncReadEntries(int numberOfEntriesToRead, long maxSizeBytes,
                AsyncCallbacks.ReadEntriesCallback callback, Object ctx, Position maxPosition) {
            Callbacks.deliver(readAsync(numberOfEntriesToRead, maxSizeBytes, maxPosition), executor,
                    l -> callback.readEntriesComplete(l, ctx), e -> callback.readEntriesFailed(e, ctx));
        }

        private CompletableFuture<List<Entry>> readAsync(int n, long maxBytes, Position maxPosition) {
            long from = readOffset;
            long limit = maxPosition == null || maxPosition.getLedgerId() > ledgerId ? Long.MAX_VALUE
                    : maxPosition.getLedgerId() < ledgerId ? from : maxPosition.getEntryId() + 1;
            int count = (int) Math.max(0, Math.min(n, limit - from));
            if (count == 0 || n < 1) {
                return CompletableFuture.completedFuture(List.of());
            }
            return read(from, count, Math.max(0, maxBytes)).thenApply(l -> {
                if (!l.isEmpty()) {
                    readOffset = l.get(l.size() - 1).getEntryId() + 1;
                }
                return l;
            });
        }

        @Override
        public Position getReadPosition() {
            return PositionFactory.create(ledgerId, readOffset);
        }

        @Override
        public boolean hasMoreEntries() {
            return readOffset < head.committedEnd();
        }

        @Override
        public long getNumberOfEntries() {
            return Math.max(0, head.committedEnd() - readOffset);
        }

        @Override
        public void skipEntries(int numEntriesToSkip) {
            readOffset = Math.min(head.committedEnd(), readOffset + Math.max(0, numEntriesToSkip));
        }

        @Override
        public Position findNewestMatching(ManagedCursor.FindPositionConstraint constraint, Predicate<Entry> condition)
                throws InterruptedException, ManagedLedgerException {
            long from = constraint == ManagedCursor.FindPositionConstraint.SearchAllAvailableEntries
                    ? head.trimOffset() : readOffset;
            return Sync.await(EntrySearch.newestMatching(NereusReadOnlyLedger.this, from, head.committedEnd(),
                    condition).thenApply(o -> o.isPresent() ? PositionFactory.create(ledgerId, o.getAsLong())
                            : null));
        }

        @Override
        public long getNumberOfEntries(Range<Position> range) {
            long from = range.hasLowerBound() ? clamp(range.lowerEndpoint())
                    + (range.lowerBoundType() == BoundType.OPEN ? 1 : 0) : head.trimOffset();
            long to = range.hasUpperBound() ? clamp(range.upperEndpoint())
                    + (range.upperBoundType() == BoundType.CLOSED ? 1 : 0) : head.committedEnd();
            return Math.max(0, Math.min(to, head.committedEnd()) - Math.max(from, head.trimOffset()));
        }

        @Override
        public void close() {
        }

        @Override
        public void asyncClose(AsyncCallbacks.CloseCallback callback, Object ctx) {
            executor.execute(() -> callback.closeComplete(ctx));
        }
    }
}
