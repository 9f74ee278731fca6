package io.nereus.fdb.embedded;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.async.AsyncIterable;
import com.apple.foundationdb.async.AsyncIterator;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * A lazy range read, like fdb-java's {@code RangeQuery}: nothing is read until {@link #iterator()} or
 * {@link #asList()}, and every new iterator reads again. An iterator fetches in batches whose size follows
 * the streaming mode; each batch adds a read conflict only for the keys that decided it.
 */
final class RangeRead implements AsyncIterable<KeyValue> {
    /** What a batch read returned: its rows, and whether the range is exhausted. */
    record Batch(List<KeyValue> rows, boolean done) {
    }

    /** Shared cursor state of one iteration, advanced by the transaction under its monitor. */
    static final class Cursor {
        final KeySelector beginSelector;
        final KeySelector endSelector;
        final boolean reverse;
        final boolean snapshot;
        final StreamingMode mode;
        boolean resolved;
        byte[] begin;
        byte[] end;
        /** Rows still allowed; meaningful only when {@link #limited} (fixed when the selectors resolve). */
        int rowsRemaining;
        boolean limited;

        Cursor(KeySelector begin, KeySelector end, int limit, boolean reverse, boolean snapshot, StreamingMode mode) {
            this.mode = mode;
            this.beginSelector = begin;
            this.endSelector = end;
            this.rowsRemaining = limit;
            this.reverse = reverse;
            this.snapshot = snapshot;
        }

        boolean limited() {
            return limited;
        }
    }

    private final EmbeddedTransaction tr;
    private final KeySelector begin;
    private final KeySelector end;
    private final int limit;
    private final boolean reverse;
    private final StreamingMode mode;
    private final boolean snapshot;

    RangeRead(EmbeddedTransaction tr, KeySelector begin, KeySelector end, int limit, boolean reverse,
              StreamingMode mode, boolean snapshot) {
        this.tr = tr;
        this.begin = begin;
        this.end = end;
        this.limit = limit;
        this.reverse = reverse;
        this.mode = mode;
        this.snapshot = snapshot;
    }

    private Cursor newCursor() {
        return new Cursor(begin, end, limit, reverse, snapshot, mode);
    }

    @Override
    public CompletableFuture<List<KeyValue>> asList() {
        Cursor c = newCursor();
        return tr.readBatch(c, Integer.MAX_VALUE).thenApply(Batch::rows);
    }

    @Override
    public AsyncIterator<KeyValue> iterator() {
        return new Iter(newCursor());
    }

    private int batchSize(int iteration) {
        return switch (mode) {
            case WANT_ALL, SERIAL -> Integer.MAX_VALUE;
            case EXACT -> limit;
            case SMALL -> 16;
            case MEDIUM -> 128;
            case LARGE -> 1024;
            default -> Math.min(4096, 16 << Math.min(iteration, 8));
        };
    }

    private final class Iter implements AsyncIterator<KeyValue> {
        private final Cursor cursor;
        private List<KeyValue> chunk = List.of();
        private int index;
        private boolean done;
        private boolean cancelled;
        private int iteration;
        private CompletableFuture<Boolean> fetching;
        private Throwable error;

        Iter(Cursor cursor) {
            this.cursor = cursor;
            fetch();
        }

        private synchronized CompletableFuture<Boolean> fetch() {
            CompletableFuture<Boolean> promise = new CompletableFuture<>();
            fetching = promise;
            tr.readBatch(cursor, batchSize(iteration++)).whenComplete((b, t) -> {
                boolean more;
                synchronized (Iter.this) {
                    fetching = null;
                    if (t != null) {
                        error = t;
                    } else {
                        chunk = b.rows();
                        index = 0;
                        done = b.done();
                    }
                    more = index < chunk.size();
                }
                if (t != null) {
                    promise.completeExceptionally(t);
                } else {
                    promise.complete(more);
                }
            });
            return promise;
        }

        @Override
        public synchronized CompletableFuture<Boolean> onHasNext() {
            if (cancelled) {
                throw new CancellationException();
            }
            if (fetching != null) {
                return fetching;
            }
            if (error != null) {
                return CompletableFuture.failedFuture(error);
            }
            if (index < chunk.size()) {
                return CompletableFuture.completedFuture(true);
            }
            if (done) {
                return CompletableFuture.completedFuture(false);
            }
            return fetch();
        }

        @Override
        public boolean hasNext() {
            return onHasNext().join();
        }

        @Override
        public KeyValue next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            synchronized (this) {
                return chunk.get(index++);
            }
        }

        @Override
        public synchronized void cancel() {
            cancelled = true;
            if (fetching != null) {
                fetching.cancel(false);
            }
        }
    }
}
