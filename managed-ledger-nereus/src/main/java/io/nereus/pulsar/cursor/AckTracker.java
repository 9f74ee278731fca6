package io.nereus.pulsar.cursor;

import io.nereus.metadata.AckSet;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.OffsetRange;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What one cursor has acknowledged, in stream offsets: everything below {@link #markDeleteEnd()}, the
 * individually deleted ranges above it (kept merged: sorted, disjoint, never adjacent, never touching the
 * mark-delete end, because such a range is absorbed into the mark-delete at once), and the batch-index ack
 * sets of partially acknowledged entries (Pulsar's meaning: a set bit is a batch index NOT yet acknowledged;
 * an entry whose set becomes empty is fully deleted).
 *
 * <p>Not thread-safe: the owning cursor guards it with its lock.
 */
final class AckTracker {
    private long markDeleteEnd;
    /** start -> end of each individually deleted range, all starts {@code > markDeleteEnd}. */
    private final TreeMap<Long, Long> ranges = new TreeMap<>();
    /** offset -> bits of batch indexes not yet acknowledged, offsets {@code >= markDeleteEnd}. */
    private final TreeMap<Long, BitSet> batches = new TreeMap<>();
    /** Sum of the lengths of {@link #ranges}, so backlog counts do not walk them. */
    private long deletedInRanges;

    AckTracker(long markDeleteEnd) {
        if (markDeleteEnd < 0) {
            throw new IllegalArgumentException("mark-delete end must be >= 0: " + markDeleteEnd);
        }
        this.markDeleteEnd = markDeleteEnd;
    }

    /** A tracker holding exactly the acknowledgements of a stored cursor state. */
    static AckTracker of(CursorState state) {
        AckTracker t = new AckTracker(state.markDeleteEnd());
        for (OffsetRange r : state.individuallyDeleted()) {
            t.addRange(r.start(), r.end());
        }
        for (Map.Entry<Long, AckSet> e : state.batchAckSets().entrySet()) {
            if (!t.isDeleted(e.getKey())) {
                BitSet bits = BitSet.valueOf(e.getValue().words());
                if (!bits.isEmpty()) {
                    t.batches.put(e.getKey(), bits);
                }
            }
        }
        t.absorb();
        return t;
    }

    /** The state to persist: these acknowledgements plus the given properties. */
    CursorState toState(Map<String, Long> properties, Map<String, String> cursorProperties) {
        NavigableMap<Long, AckSet> sets = new TreeMap<>();
        batches.forEach((offset, bits) -> sets.put(offset, AckSet.of(bits.toLongArray())));
        return new CursorState(markDeleteEnd, ranges(), sets, properties, cursorProperties);
    }

    /** Copies every acknowledgement of {@code other} into this tracker (for a duplicated cursor). */
    void copyFrom(AckTracker other) {
        markDeleteEnd = other.markDeleteEnd;
        ranges.clear();
        ranges.putAll(other.ranges);
        deletedInRanges = other.deletedInRanges;
        batches.clear();
        other.batches.forEach((o, b) -> batches.put(o, (BitSet) b.clone()));
    }

    /** The first offset not acknowledged by the mark-delete: Pulsar's mark-delete position is this minus one. */
    long markDeleteEnd() {
        return markDeleteEnd;
    }

    /**
     * Moves the mark-delete end up to {@code newEnd} (and beyond, over individually deleted ranges it now
     * touches). Returns false, changing nothing, when {@code newEnd} is not above the current end.
     */
    boolean markDeleteTo(long newEnd) {
        if (newEnd <= markDeleteEnd) {
            return false;
        }
        markDeleteEnd = newEnd;
        absorb();
        return true;
    }

    /**
     * Mark-deletes everything below {@code offset} and records {@code unacked} (bits set = batch indexes not
     * yet acknowledged) as the entry's ack set when it acknowledges more than the recorded one (Pulsar never
     * rolls a batch's cumulative ack back). An empty set acknowledges the whole entry.
     */
    boolean markDeleteBatch(long offset, BitSet unacked) {
        if (unacked.isEmpty()) {
            return markDeleteTo(offset + 1);
        }
        boolean moved = markDeleteTo(offset);
        if (isDeleted(offset)) {
            return moved;
        }
        BitSet current = batches.get(offset);
        if (current == null || unacked.nextSetBit(0) > current.nextSetBit(0)) {
            batches.put(offset, (BitSet) unacked.clone());
            return true;
        }
        return moved;
    }

    /** Deletes one whole entry. Returns false when it was already deleted. */
    boolean delete(long offset) {
        if (isDeleted(offset)) {
            batches.remove(offset);
            return false;
        }
        batches.remove(offset);
        addRange(offset, offset + 1);
        absorb();
        return true;
    }

    /**
     * Acknowledges batch indexes of one entry: {@code unacked} has a set bit for every index the caller has
     * NOT acknowledged; the entry's set becomes the intersection. Returns true when anything changed.
     */
    boolean deleteBatchIndexes(long offset, BitSet unacked) {
        if (isDeleted(offset)) {
            batches.remove(offset);
            return false;
        }
        BitSet current = batches.get(offset);
        BitSet next = (BitSet) unacked.clone();
        if (current != null) {
            next.and(current);
            if (next.equals(current)) {
                return false;
            }
        }
        if (next.isEmpty()) {
            return delete(offset);
        }
        batches.put(offset, next);
        return true;
    }

    /** True when the entry at {@code offset} is acknowledged whole (mark-delete or individually deleted). */
    boolean isDeleted(long offset) {
        if (offset < markDeleteEnd) {
            return true;
        }
        Map.Entry<Long, Long> r = ranges.floorEntry(offset);
        return r != null && offset < r.getValue();
    }

    /** The first offset at or after {@code offset} that is not acknowledged whole. */
    long nextUndeleted(long offset) {
        long o = Math.max(offset, markDeleteEnd);
        Map.Entry<Long, Long> r = ranges.floorEntry(o);
        return r != null && o < r.getValue() ? r.getValue() : o;
    }

    /** The start of the first individually deleted range at or after {@code offset}; MAX_VALUE when none. */
    long nextDeletedStart(long offset) {
        Long start = ranges.ceilingKey(offset);
        return start == null ? Long.MAX_VALUE : start;
    }

    /** How many offsets of {@code [from, to)} are individually deleted (above the mark-delete end). */
    long countIndividuallyDeleted(long from, long to) {
        if (to <= from) {
            return 0;
        }
        long n = 0;
        Map.Entry<Long, Long> first = ranges.floorEntry(from);
        long scanFrom = first != null && first.getValue() > from ? first.getKey() : from;
        for (Map.Entry<Long, Long> r : ranges.subMap(scanFrom, true, to, false).entrySet()) {
            n += Math.min(r.getValue(), to) - Math.max(r.getKey(), from);
        }
        return n;
    }

    /**
     * The offset of the {@code n}-th ({@code n >= 1}) offset at or after {@code from} that is not individually
     * deleted, skipping deleted ranges.
     */
    long nthUndeleted(long from, long n) {
        if (n < 1) {
            throw new IllegalArgumentException("n must be >= 1: " + n);
        }
        long at = nextUndeleted(from);
        long remaining = n;
        while (true) {
            Map.Entry<Long, Long> next = ranges.higherEntry(at);
            long gap = next == null ? Long.MAX_VALUE : next.getKey() - at;
            if (remaining <= gap) {
                return at + remaining - 1;
            }
            remaining -= gap;
            at = next.getValue();
        }
    }

    /** Forgets every individual and batch acknowledgement and puts the mark-delete end at {@code newEnd}. */
    void reset(long newEnd) {
        if (newEnd < 0) {
            throw new IllegalArgumentException("mark-delete end must be >= 0: " + newEnd);
        }
        markDeleteEnd = newEnd;
        ranges.clear();
        deletedInRanges = 0;
        batches.clear();
    }

    /** The individually deleted ranges, sorted. */
    List<OffsetRange> ranges() {
        List<OffsetRange> out = new ArrayList<>(ranges.size());
        ranges.forEach((s, e) -> out.add(OffsetRange.of(s, e)));
        return out;
    }

    /** How many offsets the individually deleted ranges hold in all. */
    long individuallyDeletedCount() {
        return deletedInRanges;
    }

    int rangeCount() {
        return ranges.size();
    }

    Optional<OffsetRange> lastRange() {
        Map.Entry<Long, Long> last = ranges.lastEntry();
        return last == null ? Optional.empty() : Optional.of(OffsetRange.of(last.getKey(), last.getValue()));
    }

    /** A copy of the unacknowledged-index bits of a partially acknowledged entry, or null when it has none. */
    long[] batchAckSet(long offset) {
        BitSet bits = batches.get(offset);
        return bits == null ? null : bits.toLongArray();
    }

    /**
     * The ranges in Pulsar's string format ({@code [(L:a..L:b],(L:c..L:d]]}, each range open below at the entry
     * before its first), as {@code CursorStats.individuallyDeletedMessages} shows them.
     */
    String rangesString(long ledgerId) {
        StringBuilder sb = new StringBuilder("[");
        boolean first = true;
        for (Map.Entry<Long, Long> r : ranges.entrySet()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            sb.append('(').append(ledgerId).append(':').append(r.getKey() - 1).append("..")
                    .append(ledgerId).append(':').append(r.getValue() - 1).append(']');
        }
        return sb.append(']').toString();
    }

    private void addRange(long start, long end) {
        long s = start;
        long e = end;
        Map.Entry<Long, Long> before = ranges.floorEntry(s);
        if (before != null && before.getValue() >= s) {
            s = before.getKey();
            e = Math.max(e, before.getValue());
            ranges.remove(before.getKey());
            deletedInRanges -= before.getValue() - before.getKey();
        }
        while (true) {
            Map.Entry<Long, Long> after = ranges.ceilingEntry(s);
            if (after == null || after.getKey() > e) {
                break;
            }
            e = Math.max(e, after.getValue());
            ranges.remove(after.getKey());
            deletedInRanges -= after.getValue() - after.getKey();
        }
        ranges.put(s, e);
        deletedInRanges += e - s;
    }

    /** Drops what the mark-delete covers and pulls the mark-delete over ranges touching it. */
    private void absorb() {
        while (!ranges.isEmpty() && ranges.firstKey() <= markDeleteEnd) {
            Map.Entry<Long, Long> r = ranges.pollFirstEntry();
            deletedInRanges -= r.getValue() - r.getKey();
            markDeleteEnd = Math.max(markDeleteEnd, r.getValue());
        }
        batches.headMap(markDeleteEnd, false).clear();
    }
}
