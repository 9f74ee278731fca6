package io.nereus.metadata;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The durable state of one cursor, stored chunked under {@code (STREAM, sid, CURSOR, name, chunk)} by
 * {@link io.nereus.metadata.codec.CursorStateCodec}. Offsets are stream offsets; the Pulsar facade maps them
 * to positions.
 *
 * @param markDeleteEnd        every offset below it is acknowledged (half-open, like every range): Pulsar's
 *                             mark-delete position is {@code (ledger, markDeleteEnd - 1)}; {@code >= 0}
 * @param individuallyDeleted  acknowledged ranges above the mark-delete: sorted, non-empty, pairwise
 *                             disjoint, each starting at or after {@code markDeleteEnd}
 * @param batchAckSets         batch-index ack sets of partially acknowledged entries, by offset
 *                             ({@code >= markDeleteEnd}), sorted
 * @param properties           mark-delete properties (Pulsar {@code getProperties()}: {@code Map<String, Long>})
 * @param cursorProperties     cursor properties (Pulsar {@code getCursorProperties()}: {@code Map<String, String>})
 */
public record CursorState(
        long markDeleteEnd,
        List<OffsetRange> individuallyDeleted,
        NavigableMap<Long, AckSet> batchAckSets,
        Map<String, Long> properties,
        Map<String, String> cursorProperties) {

    public CursorState {
        if (markDeleteEnd < 0) {
            throw new IllegalArgumentException("cursor mark-delete end must be >= 0: " + markDeleteEnd);
        }
        individuallyDeleted = List.copyOf(individuallyDeleted);
        long floor = markDeleteEnd;
        for (int i = 0; i < individuallyDeleted.size(); i++) {
            OffsetRange r = individuallyDeleted.get(i);
            if (r.isEmpty()) {
                throw new IllegalArgumentException("cursor acknowledged range #" + i + " is empty: " + r);
            }
            if (r.start() < floor) {
                throw new IllegalArgumentException("cursor acknowledged range #" + i + " " + r
                        + (i == 0 ? " starts below the mark-delete end " + markDeleteEnd
                                  : " is not sorted and disjoint after " + individuallyDeleted.get(i - 1)));
            }
            floor = r.end();
        }
        TreeMap<Long, AckSet> sets = new TreeMap<>();
        for (Map.Entry<Long, AckSet> e : batchAckSets.entrySet()) {
            long offset = Objects.requireNonNull(e.getKey(), "batch ack set offset");
            if (offset < markDeleteEnd) {
                throw new IllegalArgumentException("cursor batch ack set at offset " + offset
                        + " is below the mark-delete end " + markDeleteEnd);
            }
            sets.put(offset, Objects.requireNonNull(e.getValue(), "batch ack set"));
        }
        batchAckSets = Collections.unmodifiableNavigableMap(sets);
        properties = Map.copyOf(properties);
        cursorProperties = Map.copyOf(cursorProperties);
    }

    /** A cursor with everything below {@code markDeleteEnd} acknowledged and nothing else. */
    public static CursorState at(long markDeleteEnd) {
        return new CursorState(markDeleteEnd, List.of(), new TreeMap<>(), Map.of(), Map.of());
    }

    /** True when {@code offset} is acknowledged by the mark-delete or an individually deleted range. */
    public boolean isAcknowledged(long offset) {
        if (offset < markDeleteEnd) {
            return true;
        }
        int lo = 0;
        int hi = individuallyDeleted.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            OffsetRange r = individuallyDeleted.get(mid);
            if (offset < r.start()) {
                hi = mid - 1;
            } else if (offset >= r.end()) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }
}
