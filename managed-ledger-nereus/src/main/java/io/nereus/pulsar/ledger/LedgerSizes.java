package io.nereus.pulsar.ledger;

import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * Payload bytes of one open ledger's entries by offset, for its sizes (total, backlog) and for retention by size:
 * the bytes committed before an offset, exact at the offsets it knows and, between two of them, interpolated as if
 * the entries there were of equal size (Pulsar does the same inside one ledger). It knows the committed end (every
 * commit moves it), each segment boundary (a multiple of {@code managedLedgerMaxEntriesPerLedger}, where trims
 * land) that a commit of this instance reached, the end at open and the trim point.
 *
 * <p>The stream's head keeps only the bytes ever committed, not the bytes below its trim offset, so at open the
 * bytes below the trim point are estimated from the average entry over the stream's life; the estimate becomes
 * exact once the ledger trims to a boundary it committed itself. Without a trim since open, sizes are what they
 * were before: the stored entries at that average.
 *
 * <p>Threading: {@link #committed} runs on the ledger's executor in commit order, {@link #trimmed} after a trim
 * committed (one trim at a time); readers on any thread. The two ends are immutable points in volatile fields,
 * the offsets known in between are in a concurrent map of about {@link #MAX_KNOWN} at most (checked every
 * {@code MAX_KNOWN} additions; beyond it every other one is dropped: more of the range is interpolated, but memory
 * stays bounded with tiny segments).
 */
final class LedgerSizes {
    static final int MAX_KNOWN = 4096;

    /** The bytes committed before {@code offset}. */
    private record Point(long offset, long bytesBefore) {
    }

    private final NavigableMap<Long, Long> known = new ConcurrentSkipListMap<>();
    private volatile Point end;
    private volatile Point trim;
    private int addedSinceCheck; // the committing thread's

    /** A ledger opened with the stream's head: trimmed below {@code trimOffset}, {@code cumulativeBytes} in all. */
    LedgerSizes(long trimOffset, long committedEnd, long cumulativeBytes) {
        this.end = new Point(committedEnd, cumulativeBytes);
        long below = trimOffset == committedEnd ? cumulativeBytes
                : Math.round((double) cumulativeBytes * trimOffset / committedEnd);
        this.trim = new Point(trimOffset, below);
        if (committedEnd > trimOffset) {
            known.put(committedEnd, cumulativeBytes);
        }
    }

    /**
     * A commit moved the end to {@code newEnd} with {@code bytes} payload bytes; a segment boundary it ends on is
     * remembered.
     */
    void committed(long newEnd, long bytes, long segment) {
        Point e = end;
        if (newEnd <= e.offset()) {
            return;
        }
        Point next = new Point(newEnd, e.bytesBefore() + bytes);
        if (segment > 0 && newEnd % segment == 0) {
            known.put(newEnd, next.bytesBefore());
            if (++addedSinceCheck >= MAX_KNOWN) {
                addedSinceCheck = 0;
                if (known.size() > MAX_KNOWN) {
                    thin();
                }
            }
        }
        end = next;
    }

    /** The end moved to what the stream's head says (a seal), past the commits this ledger saw. */
    void caughtUp(long committedEnd, long cumulativeBytes) {
        if (committedEnd > end.offset()) {
            end = new Point(committedEnd, cumulativeBytes);
        }
    }

    /** The stream was trimmed below {@code trimOffset}: its bytes there become the anchor, the offsets below go. */
    void trimmed(long trimOffset) {
        if (trimOffset <= trim.offset()) {
            return;
        }
        trim = new Point(trimOffset, bytesBefore(trimOffset));
        known.headMap(trimOffset, true).clear();
    }

    /** Payload bytes of the entries in {@code [from, to)} (exact between known offsets, interpolated inside). */
    long bytesBetween(long from, long to) {
        return to <= from ? 0 : Math.max(0, bytesBefore(to) - bytesBefore(from));
    }

    /** Payload bytes committed before {@code offset}; below the trim point, the bytes below it. */
    long bytesBefore(long offset) {
        Point e = end;
        if (offset >= e.offset()) {
            return e.bytesBefore();
        }
        Point t = trim;
        if (offset <= t.offset()) {
            return t.bytesBefore();
        }
        Point lo = t;
        Map.Entry<Long, Long> floor = known.floorEntry(offset);
        if (floor != null && floor.getKey() > lo.offset()) {
            lo = new Point(floor.getKey(), floor.getValue());
        }
        if (lo.offset() == offset) {
            return lo.bytesBefore();
        }
        Point hi = e;
        Map.Entry<Long, Long> ceiling = known.ceilingEntry(offset);
        if (ceiling != null && ceiling.getKey() < hi.offset()) {
            hi = new Point(ceiling.getKey(), ceiling.getValue());
        }
        double share = (double) (offset - lo.offset()) / (hi.offset() - lo.offset());
        return lo.bytesBefore() + Math.round((hi.bytesBefore() - lo.bytesBefore()) * share);
    }

    /**
     * The average payload bytes of the entries from {@code trimOffset} to the end; the average over the stream's
     * life when none is stored; 0 for an empty stream.
     */
    double averageEntryBytes(long trimOffset) {
        Point e = end;
        long entries = e.offset() - trimOffset;
        if (entries > 0) {
            return (double) bytesBetween(trimOffset, e.offset()) / entries;
        }
        return e.offset() == 0 ? 0 : (double) e.bytesBefore() / e.offset();
    }

    /** How many offsets between the ends it knows exactly now. */
    int knownOffsets() {
        return known.size();
    }

    /** Drops every other known offset (on the committing thread, the only one adding). */
    private void thin() {
        Iterator<Long> it = known.keySet().iterator();
        boolean drop = false;
        while (it.hasNext()) {
            it.next();
            if (drop) {
                it.remove();
            }
            drop = !drop;
        }
    }
}
