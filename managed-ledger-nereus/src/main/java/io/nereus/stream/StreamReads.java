package io.nereus.stream;

import io.nereus.error.ErrorCode;
import io.nereus.generation.GenerationResolver;
import io.nereus.generation.Resolution;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The reads of one stream ({@link NereusStream#read}): the tail cache, then the generation resolver, collecting
 * entries until a read's limits. Entries are the retained slices those hand out ({@link StreamEntry}); a read owns
 * what it collected until it hands the result over, and releases every entry it skips, every one that does not fit
 * and, when it fails, every one it collected. Stateless apart from its collaborators: safe from any thread.
 */
final class StreamReads {
    private final StreamId stream;
    private final TailCache tail;
    private final GenerationResolver resolver;

    StreamReads(StreamId stream, TailCache tail, GenerationResolver resolver) {
        this.stream = stream;
        this.tail = tail;
        this.resolver = resolver;
    }

    /**
     * Reads {@code view} from {@code fromOffset} within {@code readable} (the caller checked the arguments): the tail
     * cache first for COMMITTED, then the resolver, until the limits or the readable end. Throws OFFSET_TRIMMED below
     * {@code readable}.
     */
    CompletableFuture<ReadResult> read(ReadView view, long fromOffset, int maxEntries, long maxBytes,
            BoundaryMode mode, OffsetRange readable) {
        if (fromOffset < readable.start()) {
            throw Errors.of(ErrorCode.OFFSET_TRIMMED, stream, fromOffset);
        }
        return readLoop(new ReadState(view, fromOffset, maxEntries, maxBytes, mode, readable));
    }

    /**
     * One read in progress. It owns the entries it collected ({@code out}) until they are handed out in the result,
     * and releases them when the read fails.
     */
    private final class ReadState {
        final ReadView view;
        final long from;
        final int maxEntries;
        final long maxBytes;
        final BoundaryMode mode;
        final OffsetRange readable;
        final List<StreamEntry> out = new ArrayList<>();
        long offset;
        long bytes;

        ReadState(ReadView view, long from, int maxEntries, long maxBytes, BoundaryMode mode, OffsetRange readable) {
            this.view = view;
            this.from = from;
            this.maxEntries = maxEntries;
            this.maxBytes = maxBytes;
            this.mode = mode;
            this.readable = readable;
            this.offset = from;
        }

        boolean full() {
            return out.size() >= maxEntries || (!out.isEmpty() && bytes >= maxBytes) || offset >= readable.end();
        }

        /**
         * Takes {@code e}: keeps it if it is the next entry and fits, else releases it (also when it throws
         * NOT_ENTRY_BOUNDARY). Returns false when the read is full.
         */
        boolean add(StreamEntry e) {
            if (full()) {
                e.release();
                return false;
            }
            if (out.isEmpty() && e.range().start() < from) {
                if (mode == BoundaryMode.EXACT_START) {
                    e.release();
                    throw Errors.of(ErrorCode.NOT_ENTRY_BOUNDARY, stream, from);
                }
            } else if (e.range().start() != offset) {
                e.release();
                return true;
            }
            if (!out.isEmpty() && bytes + e.size() > maxBytes) {
                offset = Long.MAX_VALUE; // stop: the next entry does not fit
                e.release();
                return false;
            }
            out.add(e);
            bytes += e.size();
            offset = e.range().end();
            return true;
        }

        /** Takes every entry of {@code found}: the ones after {@code at} that fit are kept, the rest released. */
        void addAll(List<StreamEntry> found, long at) {
            int i = 0;
            try {
                boolean open = true;
                for (; i < found.size(); i++) {
                    StreamEntry e = found.get(i);
                    if (!open || e.range().end() <= at) {
                        e.release();
                    } else {
                        open = add(e);
                    }
                }
            } catch (RuntimeException ex) {
                for (int j = i + 1; j < found.size(); j++) {
                    found.get(j).release();
                }
                throw ex;
            }
        }

        /** Releases what the read collected (it failed); a second call releases nothing. */
        void releaseAll() {
            StreamEntry.releaseAll(out);
            out.clear();
        }

        ReadResult result() {
            long next = out.isEmpty() ? from : out.get(out.size() - 1).range().end();
            return new ReadResult(out, next, readable.end());
        }
    }

    /**
     * The read's future as the caller sees it: a caller that cancels it (or completes it otherwise) gives up the
     * entries, which are then released here instead of being dropped.
     */
    static CompletableFuture<ReadResult> releasedIfAbandoned(CompletableFuture<ReadResult> read) {
        if (read.isDone()) {
            return read;
        }
        CompletableFuture<ReadResult> out = new CompletableFuture<>();
        read.whenComplete((r, error) -> {
            if (error != null) {
                out.completeExceptionally(error);
            } else if (!out.complete(r)) {
                r.release();
            }
        });
        return out;
    }

    private CompletableFuture<ReadResult> readLoop(ReadState st) {
        try {
            return readSteps(st);
        } catch (RuntimeException e) {
            st.releaseAll();
            throw e;
        }
    }

    private CompletableFuture<ReadResult> readSteps(ReadState st) {
        while (!st.full()) {
            if (st.view == ReadView.COMMITTED) {
                var hit = tail.get(stream, st.offset);
                if (hit.isPresent()) {
                    st.add(hit.get());
                    continue;
                }
            }
            long at = st.offset;
            return resolver.resolve(stream, st.view, at, st.readable, st.maxEntries - st.out.size(),
                    Math.max(0, st.maxBytes - st.bytes)).handle((r, error) -> {
                if (error != null) {
                    st.releaseAll();
                    throw Errors.read(error, stream, at);
                }
                if (r instanceof Resolution.Found f) {
                    try {
                        st.addAll(f.entries(), at);
                    } catch (RuntimeException e) {
                        st.releaseAll();
                        throw e;
                    }
                    return readLoop(st);
                }
                if (r instanceof Resolution.Trimmed) {
                    if (st.out.isEmpty()) {
                        throw Errors.of(ErrorCode.OFFSET_TRIMMED, stream, at);
                    }
                    return CompletableFuture.completedFuture(st.result());
                }
                if (r instanceof Resolution.NotYetCommitted) {
                    return CompletableFuture.completedFuture(st.result());
                }
                st.releaseAll();
                if (r instanceof Resolution.Unreadable u) {
                    throw Errors.read(u.lastFailure(), stream, at);
                }
                if (st.view == ReadView.COMMITTED) {
                    throw Errors.of(ErrorCode.DATA_LOSS, stream, at);
                }
                throw Errors.of(ErrorCode.NOT_FOUND, stream, at);
            }).thenCompose(f -> f);
        }
        return CompletableFuture.completedFuture(st.result());
    }
}
