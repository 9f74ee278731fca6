package io.nereus.wal;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * The open batch of a {@link WalWriter}, the only state appenders touch: appends join it under this object's
 * monitor, and when it is cut (by size, an epoch or offset break, the flush delay or a barrier) its sections
 * move, with the next sequence number, to a queue of cut batches that the owner thread takes in order.
 *
 * <p>Every critical section is short: map and list updates, no encoding, checksumming, I/O or future completion.
 * Callers act on the returned {@link Added} outside the monitor.
 */
final class OpenBatch {
    /** One call of {@link WalWriter#append}, validated. */
    record Append(StreamId stream, long epoch, long firstOffset, List<AppendEntry> entries, long bytes,
            CompletableFuture<StreamHead> done, BooleanSupplier live) {
    }

    /** A cut batch: its sequence number and sections, in the order they joined (never changed after the cut). */
    record Cut(long sequence, Collection<PendingSection> sections) {
    }

    /**
     * What an append did: refused because the writer is closed; or joined, having cut one batch or more
     * ({@code cut}) and opened a new batch whose flush delay must be scheduled ({@code timer}, its number).
     */
    record Added(boolean closed, boolean cut, long timer) {
        static final long NO_TIMER = -1;
        static final Added CLOSED = new Added(true, false, NO_TIMER);
    }

    /** What a flush-delay timer should do, given whether the owner has batches waiting for BookKeeper. */
    enum Flush { CUT, LOOK_AGAIN, NOTHING }

    private final WalConfig config;

    // guarded by this
    private Map<StreamId, PendingSection> open = new LinkedHashMap<>();
    private long openBytes;
    private long openNumber;
    private long nextSequence;
    private final ArrayDeque<Cut> cuts = new ArrayDeque<>();
    private boolean closed;

    OpenBatch(WalConfig config) {
        this.config = config;
    }

    synchronized Added add(Append a) {
        if (closed) {
            return Added.CLOSED;
        }
        boolean cut = false;
        PendingSection s = open.get(a.stream());
        if (s != null && (s.epoch != a.epoch() || s.nextOffset != a.firstOffset())) {
            cut |= cutLocked();
            s = null;
        }
        if (openBytes + a.bytes() > config.maxBatchBytes()) {
            cut |= cutLocked();
            s = null;
        }
        if (s == null) {
            s = new PendingSection(a.stream(), a.epoch(), a.firstOffset());
            open.put(a.stream(), s);
        }
        s.add(a.entries(), a.done(), a.live());
        long timer = Added.NO_TIMER;
        if (openBytes == 0 && open.size() == 1 && s.entries.size() == a.entries().size()) {
            timer = openNumber;
        }
        openBytes += a.bytes();
        if (openBytes >= config.flushBytes()) {
            cut |= cutLocked();
        }
        return new Added(false, cut, timer);
    }

    /** For the flush-delay timer of batch {@code number}: cuts it if it is still open and nothing waits. */
    synchronized Flush flush(long number, boolean nothingWaiting) {
        if (number == openNumber && nothingWaiting) {
            return cutLocked() ? Flush.CUT : Flush.NOTHING;
        }
        return number == openNumber && !open.isEmpty() ? Flush.LOOK_AGAIN : Flush.NOTHING;
    }

    /** Cuts the open batch (if any); returns the sequence number the next batch will get. */
    synchronized long cut() {
        cutLocked();
        return nextSequence;
    }

    /** Stops accepting appends; returns the open batch's sections, which the caller fails. */
    synchronized List<PendingSection> close() {
        closed = true;
        List<PendingSection> dropped = new ArrayList<>(open.values());
        open = new LinkedHashMap<>();
        return dropped;
    }

    /** The batches cut since the last call, in sequence order; called by the owner thread. */
    synchronized List<Cut> takeCuts() {
        if (cuts.isEmpty()) {
            return List.of();
        }
        List<Cut> taken = new ArrayList<>(cuts);
        cuts.clear();
        return taken;
    }

    private boolean cutLocked() {
        if (open.isEmpty()) {
            return false;
        }
        cuts.add(new Cut(nextSequence++, open.values()));
        open = new LinkedHashMap<>();
        openBytes = 0;
        openNumber++;
        return true;
    }
}
