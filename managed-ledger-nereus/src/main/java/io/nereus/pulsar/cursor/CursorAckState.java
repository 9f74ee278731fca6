package io.nereus.pulsar.cursor;

import io.nereus.metadata.CursorState;
import io.nereus.metadata.OffsetRange;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.bookkeeper.mledger.ManagedCursor.FindPositionConstraint;
import org.apache.bookkeeper.mledger.ManagedCursor.IndividualDeletedEntries;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.impl.AckSetStateUtil;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;

/**
 * The in-memory state of one cursor and every rule that changes it, in Pulsar positions: the acknowledgements
 * ({@link AckTracker}), the read position, the mark-delete and cursor properties, and whether the cursor is
 * closed. Changes return an {@link AckOutcome} telling the caller what to persist; no I/O happens here.
 *
 * <p>Every change that must be persisted bumps a version under the same monitor that applies it, and
 * {@link #snapshot()} returns the newest state with its version. The persistence ({@link CursorPersistence})
 * takes that snapshot itself when a save starts, so a state handed over late can never overwrite a newer one:
 * a save of version {@code v} holds every change up to {@code v}.
 *
 * <p>Thread-safe: one monitor, never held while calling anything but the host's non-blocking getters.
 */
final class CursorAckState implements CursorReads.Acks, CursorPersistence.Source {
    /** What a change asks of the caller. */
    sealed interface AckOutcome {
        /** The state changed: persist at least {@code version}. */
        record Save(long version) implements AckOutcome {
        }

        /**
         * Part of the change was applied (persist at least {@code version}); the rest was refused for
         * {@code why}, which the caller reports.
         */
        record Partial(long version, ManagedLedgerException why) implements AckOutcome {
        }

        /** Nothing changed (an older mark-delete, an entry already deleted). */
        record NoChange() implements AckOutcome {
        }

        /** The change was refused; nothing changed. */
        record Refused(ManagedLedgerException why) implements AckOutcome {
        }
    }

    /** Where a read starts, and the read-position epoch it must still match to move the position. */
    record ReadStart(long from, long epoch) {
    }

    /** The state to persist and the version of the last change it holds. */
    record Snapshot(long version, CursorState state) {
    }

    private static final AckOutcome NO_CHANGE = new AckOutcome.NoChange();

    private final CursorHost host;
    private final String name;
    private final boolean readCompacted;
    private final AckTracker acks;
    private long readOffset;
    /** Bumped by every explicit move of the read position, so a read that raced it does not move it back. */
    private long readEpoch;
    private Map<String, Long> properties;
    private Map<String, String> cursorProperties;
    private boolean closed;
    /** Bumped by every change to persist; the stored state this cursor was loaded from is version 0. */
    private long version;

    CursorAckState(CursorHost host, String name, boolean readCompacted, CursorState state, long readOffset) {
        this.host = host;
        this.name = name;
        this.readCompacted = readCompacted;
        this.acks = AckTracker.of(state);
        this.readOffset = readOffset;
        this.properties = state.properties();
        this.cursorProperties = state.cursorProperties();
    }

    // ---------------------------------------------------------------- lifecycle

    synchronized boolean isClosed() {
        return closed;
    }

    /** Marks the cursor closed; true when this call closed it. */
    synchronized boolean close() {
        boolean first = !closed;
        closed = true;
        return first;
    }

    ManagedLedgerException closedError() {
        return new ManagedLedgerException.CursorAlreadyClosedException("Cursor " + name + " was already closed");
    }

    // ---------------------------------------------------------------- acknowledgements

    /**
     * Acknowledges everything up to and including {@code position} (with a batch ack set: everything before
     * it, plus those batch indexes). Refused beyond the last confirmed entry; no change when older than the
     * current mark-delete. The mark-delete properties become {@code props}.
     */
    synchronized AckOutcome markDelete(Position position, Map<String, Long> props) {
        if (closed) {
            return new AckOutcome.Refused(closedError());
        }
        long end = host.committedEnd();
        if (beyondEnd(position, end)) {
            return new AckOutcome.Refused(new ManagedLedgerException.InvalidCursorPositionException(
                    "mark-delete position " + position + " is beyond the last confirmed entry "
                            + host.position(end - 1) + " of " + host.name()));
        }
        long[] ackSet = AckSetStateUtil.getAckSetArrayOrNull(position);
        long offset = position.getLedgerId() < host.ledgerId() ? host.trimOffset() - 1 : position.getEntryId();
        if (offset + 1 < acks.markDeleteEnd() && ackSet == null) {
            return NO_CHANGE;
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
        return save();
    }

    /**
     * Acknowledges individual entries, or batch indexes of entries when a position carries an ack set (bits
     * set = indexes still unacknowledged; ignored when batch-index acks are disabled, as in Pulsar). A null
     * position or one beyond the last confirmed entry is refused and named in a {@link AckOutcome.Partial}
     * (or {@link AckOutcome.Refused} when nothing else changed); the valid positions of the same call are
     * applied all the same, so one bad position never drops the acknowledgements beside it.
     */
    synchronized AckOutcome delete(Iterable<Position> positions) {
        if (closed) {
            return new AckOutcome.Refused(closedError());
        }
        long end = host.committedEnd();
        List<Position> invalid = new ArrayList<>();
        boolean changed = false;
        for (Position p : positions) {
            if (p == null || beyondEnd(p, end)) {
                invalid.add(p);
                continue;
            }
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
        ManagedLedgerException refused = invalid.isEmpty() ? null
                : new ManagedLedgerException.InvalidCursorPositionException(invalid.size() + " deleted position(s) "
                        + describe(invalid) + " beyond the last confirmed entry " + host.position(end - 1) + " of "
                        + host.name() + " refused");
        if (!changed) {
            return refused == null ? NO_CHANGE : new AckOutcome.Refused(refused);
        }
        readOffset = Math.max(readOffset, acks.markDeleteEnd());
        AckOutcome.Save saved = save();
        return refused == null ? saved : new AckOutcome.Partial(saved.version(), refused);
    }

    /** At most the first five positions, for messages. */
    private static String describe(List<Position> positions) {
        List<Position> shown = positions.subList(0, Math.min(5, positions.size()));
        return positions.size() > shown.size() ? shown + "..." : shown.toString();
    }

    /** Mark-deletes the next {@code n} entries (with Exclude, not counting individually deleted ones). */
    synchronized AckOutcome skip(int n, IndividualDeletedEntries deletedEntries) {
        long start = Math.max(acks.markDeleteEnd(), host.trimOffset());
        long last = deletedEntries == IndividualDeletedEntries.Exclude ? acks.nthUndeleted(start, n) : start + n - 1;
        return markDelete(host.position(Math.min(last, host.committedEnd() - 1)), properties);
    }

    /** Mark-deletes everything committed, keeping the mark-delete properties. */
    synchronized AckOutcome clearBacklog() {
        return markDelete(host.position(host.committedEnd() - 1), properties);
    }

    /**
     * Puts the read position at {@code position} and the mark-delete just before it, forgetting individual
     * and batch acks (an ack set carried by {@code position} becomes that entry's set) and, unless
     * {@code keepProperties}, the mark-delete properties. Earliest/Latest mean the first entry / the end.
     */
    synchronized AckOutcome reset(Position position, boolean keepProperties) {
        if (closed) {
            return new AckOutcome.Refused(closedError());
        }
        long target = position.equals(PositionFactory.EARLIEST) ? host.trimOffset()
                : position.equals(PositionFactory.LATEST) ? host.committedEnd()
                : Math.max(host.trimOffset(), clampToLedger(position));
        acks.reset(target);
        long[] ackSet = AckSetStateUtil.getAckSetArrayOrNull(position);
        if (ackSet != null && batchIndexAcks() && target < host.committedEnd()) {
            acks.markDeleteBatch(target, BitSet.valueOf(ackSet));
        }
        if (!keepProperties) {
            properties = Map.of();
        }
        readOffset = target;
        readEpoch++;
        return save();
    }

    /** Replaces the acknowledgements with those of {@code source} (a duplicated cursor). */
    void copyAcksFrom(CursorAckState source) {
        CursorState s = source.snapshot().state();
        synchronized (this) {
            acks.copyFrom(AckTracker.of(s));
            readOffset = Math.max(readOffset, acks.markDeleteEnd());
            version++;
        }
    }

    /** The newest state to persist and the version of the last change in it. */
    @Override
    public synchronized Snapshot snapshot() {
        return new Snapshot(version, acks.toState(properties, cursorProperties));
    }

    /** The version of the last change to persist. */
    @Override
    public synchronized long version() {
        return version;
    }

    // ---------------------------------------------------------------- properties

    synchronized Map<String, Long> properties() {
        return properties;
    }

    synchronized Map<String, String> cursorProperties() {
        return cursorProperties;
    }

    synchronized AckOutcome updateProperties(Consumer<Map<String, Long>> change) {
        Map<String, Long> m = new HashMap<>(properties);
        change.accept(m);
        properties = Map.copyOf(m);
        return save();
    }

    synchronized AckOutcome updateCursorProperties(Consumer<Map<String, String>> change) {
        if (closed) {
            return new AckOutcome.Refused(closedError());
        }
        Map<String, String> m = new HashMap<>(cursorProperties);
        change.accept(m);
        cursorProperties = Map.copyOf(m);
        return save();
    }

    // ---------------------------------------------------------------- read position

    /** The read position offset, never below the mark-delete or (unless compacted) the first offset. */
    synchronized long readOffset() {
        long floor = readCompacted ? acks.markDeleteEnd() : Math.max(acks.markDeleteEnd(), host.trimOffset());
        return Math.max(readOffset, floor);
    }

    synchronized ReadStart readStart() {
        return new ReadStart(readOffset(), readEpoch);
    }

    /** Moves the read position to {@code next} after a read that started at {@code start}, unless moved since. */
    synchronized void readCompleted(ReadStart start, long next) {
        if (start.epoch() == readEpoch && next > readOffset) {
            readOffset = next;
        }
    }

    synchronized void rewind() {
        readOffset = acks.markDeleteEnd();
        readEpoch++;
    }

    synchronized void seek(Position p, boolean force) {
        long target = clampToLedger(p);
        if (!force && target < acks.markDeleteEnd()) {
            target = acks.markDeleteEnd();
        }
        readOffset = target;
        readEpoch++;
    }

    // ---------------------------------------------------------------- queries

    synchronized long markDeleteEnd() {
        return acks.markDeleteEnd();
    }

    @Override
    public synchronized boolean isDeleted(long offset) {
        return acks.isDeleted(offset);
    }

    @Override
    public synchronized long nextUndeleted(long offset) {
        return acks.nextUndeleted(offset);
    }

    @Override
    public synchronized long nextDeletedStart(long offset) {
        return acks.nextDeletedStart(offset);
    }

    synchronized boolean isDeleted(Position p) {
        if (p.getLedgerId() != host.ledgerId()) {
            return p.getLedgerId() < host.ledgerId();
        }
        return acks.isDeleted(p.getEntryId());
    }

    /** Entries from the read position to the end that are not individually deleted. */
    synchronized long entriesToRead() {
        long from = readOffset();
        long end = host.committedEnd();
        return from >= end ? 0 : end - from - acks.countIndividuallyDeleted(from, end);
    }

    /** Entries after the mark-delete that are not individually deleted; O(1) unless trimmed above the mark. */
    synchronized long backlog() {
        long md = acks.markDeleteEnd();
        long from = Math.max(md, host.trimOffset());
        long end = host.committedEnd();
        if (from >= end) {
            return 0;
        }
        long deleted = acks.individuallyDeletedCount() - (from > md ? acks.countIndividuallyDeleted(md, from) : 0);
        return Math.max(0, end - from - deleted);
    }

    /** Pulsar's count of the range (mark-delete, read position], read position included even at the end. */
    synchronized long entriesSinceFirstNotAcked() {
        return Math.max(0, readOffset() - (acks.markDeleteEnd() - 1));
    }

    synchronized long entriesAfterMarkDelete() {
        return Math.max(0, host.committedEnd() - Math.max(acks.markDeleteEnd(), host.trimOffset()));
    }

    /** The offset of the n-th entry after the mark-delete (Exclude: not counting individually deleted ones). */
    synchronized long nthOffset(int n, IndividualDeletedEntries deletedEntries) {
        long start = Math.max(acks.markDeleteEnd(), host.trimOffset());
        return deletedEntries == IndividualDeletedEntries.Exclude ? acks.nthUndeleted(start, n) : start + n - 1;
    }

    /** The first offset of a newest-matching search (Pulsar's OpFindNewest start rules). */
    synchronized long findStart(FindPositionConstraint constraint, Position start) {
        long first;
        if (constraint == FindPositionConstraint.SearchAllAvailableEntries) {
            first = start == null ? host.trimOffset() : clampToLedger(start);
        } else {
            long md = acks.markDeleteEnd() - 1;
            long s = start == null ? md : clampToLedger(start);
            first = start == null || s <= md ? s + 1 : s;
        }
        return Math.max(first, host.trimOffset());
    }

    synchronized long scanStart(Optional<Position> start) {
        return start.map(this::clampToLedger).orElse(Math.max(acks.markDeleteEnd(), host.trimOffset()));
    }

    synchronized long[] batchAckSet(Position p) {
        return batchIndexAcks() && p.getLedgerId() == host.ledgerId() ? acks.batchAckSet(p.getEntryId()) : null;
    }

    synchronized int rangeCount() {
        return acks.rangeCount();
    }

    synchronized List<OffsetRange> ranges() {
        return acks.ranges();
    }

    synchronized Optional<OffsetRange> lastRange() {
        return acks.lastRange();
    }

    /** Fills the fields of Pulsar's cursor stats this state knows. */
    synchronized void fill(ManagedLedgerInternalStats.CursorStats cs) {
        cs.markDeletePosition = host.position(acks.markDeleteEnd() - 1).toString();
        cs.readPosition = host.position(readOffset()).toString();
        cs.individuallyDeletedMessages = acks.rangesString(host.ledgerId());
        cs.totalNonContiguousDeletedMessagesRange = acks.rangeCount();
        cs.messagesConsumedCounter = acks.markDeleteEnd() + acks.individuallyDeletedCount();
        cs.numberOfEntriesSinceFirstNotAckedMessage = entriesSinceFirstNotAcked();
        cs.state = closed ? "Closed" : "Open";
        cs.properties = properties;
    }

    // ---------------------------------------------------------------- positions

    /** The offset a position stands for in this ledger, clamped to {@code [0, committedEnd()]}. */
    long clampToLedger(Position p) {
        if (p.getLedgerId() < host.ledgerId()) {
            return host.trimOffset();
        }
        if (p.getLedgerId() > host.ledgerId()) {
            return host.committedEnd();
        }
        return Math.max(0, Math.min(host.committedEnd(), p.getEntryId()));
    }

    /** The first offset a read bounded by {@code maxPosition} (inclusive; null = unbounded) may not return. */
    long endExclusive(Position maxPosition) {
        if (maxPosition == null || maxPosition.getLedgerId() > host.ledgerId()) {
            return Long.MAX_VALUE;
        }
        if (maxPosition.getLedgerId() < host.ledgerId()) {
            return 0;
        }
        long e = maxPosition.getEntryId();
        return e == Long.MAX_VALUE ? e : Math.max(0, e + 1);
    }

    private boolean beyondEnd(Position p, long committedEnd) {
        return p.getLedgerId() > host.ledgerId()
                || (p.getLedgerId() == host.ledgerId() && p.getEntryId() >= committedEnd);
    }

    private boolean batchIndexAcks() {
        return host.config().isDeletionAtBatchIndexLevelEnabled();
    }

    private AckOutcome.Save save() {
        return new AckOutcome.Save(++version);
    }
}
