package io.nereus.pulsar.cursor;

import io.nereus.metadata.CursorStore;
import io.nereus.metadata.StreamId;
import io.nereus.pulsar.EntryReader;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.pulsar.VirtualLedger;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;

/**
 * What a cursor needs from the managed ledger it belongs to; implemented by {@code io.nereus.pulsar.ledger.NereusManagedLedger}.
 *
 * <p>Positions of a Nereus ledger are {@code (ledgerId(), offset)}: one virtual ledger per stream incarnation,
 * entry id = stream offset. Readable offsets are {@code [trimOffset(), committedEnd())}; the last confirmed
 * position is {@code (ledgerId(), committedEnd() - 1)}, and an empty ledger's is {@code (ledgerId(), -1)}.
 * Offsets are dense: every offset in the readable range is one entry.
 *
 * <p>Cursors call the getters ({@code trimOffset}, {@code committedEnd}, {@code isTerminated}, {@code config},
 * {@code averageEntryBytes}) while holding their own monitor, so these must not block or take a lock the ledger
 * may hold while calling into a cursor (volatile reads are right). Cursors call {@code markDeleteMoved} and
 * {@code cursorClosed} without holding their monitor.
 */
public interface CursorHost extends EntryReader {
    /** The managed ledger's name (Pulsar's persistence name of the topic). */
    String name();

    /** The virtual ledger id of this stream incarnation; never a BookKeeper ledger id. */
    long ledgerId();

    StreamId streamId();

    /** The managed ledger the cursor reports from {@code getManagedLedger()}. */
    ManagedLedger ledger();

    ManagedLedgerConfig config();

    /** The ledger's ordered executor thread: callbacks to Pulsar run here, never on metadata or BookKeeper threads. */
    Executor executor();

    /** The clock cursors read time from (last activity, the deadline of a backlog scan). */
    Clock clock();

    /** The first readable offset (the stream's trim point) as last known by this broker. */
    long trimOffset();

    /** The committed end (first offset not yet committed) as last known by this broker, the stream's only writer. */
    long committedEnd();

    /** True once the ledger was terminated: no entry beyond {@code committedEnd()} will ever exist. */
    boolean isTerminated();

    /**
     * Reads committed entries {@code [from, ...)}: at most {@code maxEntries} and, beyond the first, at most
     * {@code maxBytes} bytes; never beyond {@code committedEnd()}. Entries carry positions
     * {@code (ledgerId(), offset)} and are owned (released) by the caller. Fails with a
     * {@link org.apache.bookkeeper.mledger.ManagedLedgerException} (mapped by {@link PulsarErrors}).
     */
    CompletableFuture<List<Entry>> read(long from, int maxEntries, long maxBytes);

    /**
     * Completes (on {@link #executor()}) once {@code committedEnd() > offset}, or once the ledger is closed or
     * terminated (the caller then re-checks). Parked, never polled. The returned future may be cancelled by
     * the caller (a cancelled pending read); cancelling it has no other effect.
     */
    CompletableFuture<Void> whenCommittedBeyond(long offset);

    /** Where durable cursors persist their state, and the writer epoch every such write is conditional on. */
    CursorStore cursorStore();

    long writerEpoch();

    /**
     * Average stored entry size in bytes (over the stream's life when none is stored, 0 for an empty stream), for
     * byte estimates of offset ranges.
     */
    double averageEntryBytes();

    /**
     * Told by a durable cursor after its persisted mark-delete moved, so the ledger can trim what every cursor
     * has consumed (subject to retention).
     */
    void markDeleteMoved(NereusManagedCursor cursor);

    /** Told by a cursor that it closed, so the ledger stops tracking it (it stays stored if durable). */
    void cursorClosed(NereusManagedCursor cursor);

    /**
     * Told by a cursor each time it becomes active ({@code active}) or stops being active (set inactive, or closed),
     * exactly once per change, so the ledger knows whether any cursor reads near the tail.
     */
    void cursorActivityChanged(NereusManagedCursor cursor, boolean active);

    /** The stream offset a position stands for, clamped to {@code [trimOffset(), committedEnd()]}. */
    default long offsetOf(Position p) {
        long first = trimOffset();
        return new VirtualLedger(ledgerId(), first, committedEnd()).offsetOf(p);
    }

    default Position position(long offset) {
        return PositionFactory.create(ledgerId(), offset);
    }
}
