package io.nereus.metadata;

import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * The answer to "which records may serve offset {@code o} of a stream in a view", decided from the head
 * and the records of the covering scan ({@link NereusKeyspace#indexCoveringRange}), both read from one
 * snapshot. The head decides visibility first: in {@link ReadView#COMMITTED} an offset below the trim point is
 * {@link Trimmed}; in every view one at or after {@code committedEnd} is {@link NotYetCommitted}, whatever the
 * index holds, so a higher generation never makes an offset visible beyond the head. The trim point does not
 * apply to {@link ReadView#TOPIC_COMPACTED}: the compacted projection outlives the trimming of the committed
 * offsets it was made from (Pulsar keeps compacted data whatever the retention), and its coverage is its record's
 * range.
 */
public sealed interface IndexLookup {

    /** Readable records covering the offset, highest generation first (the preferred one first). */
    record Resolved(List<IndexRecord> candidates) implements IndexLookup {
        public Resolved {
            candidates = List.copyOf(candidates);
            if (candidates.isEmpty()) {
                throw new IllegalArgumentException("a resolved lookup needs at least one candidate");
            }
        }

        public IndexRecord preferred() {
            return candidates.get(0);
        }
    }

    /** The offset is below the trim point; {@code firstAvailable} is the trim offset. */
    record Trimmed(long firstAvailable) implements IndexLookup {
    }

    /** The offset is at or beyond the committed end; a tailing reader waits for {@code committedEnd} to pass it. */
    record NotYetCommitted(long committedEnd) implements IndexLookup {
    }

    /**
     * The offset is committed and not trimmed but no readable record of the view covers it. In COMMITTED this
     * calls for generation-0 repair; in TOPIC_COMPACTED it means the projection does not cover the offset.
     */
    record Unindexed(long offset) implements IndexLookup {
    }

    /**
     * Decides the lookup of {@code offset} in {@code view}.
     *
     * @param scanned records read from the covering scan; records of other views, non-readable
     *                records and records not covering {@code offset} are ignored
     */
    static IndexLookup decide(StreamHead head, ReadView view, long offset, List<IndexRecord> scanned) {
        Objects.requireNonNull(head, "head");
        Objects.requireNonNull(view, "view");
        Objects.requireNonNull(scanned, "scanned");
        if (view == ReadView.COMMITTED && offset < head.trimOffset()) {
            return new Trimmed(head.trimOffset());
        }
        if (offset >= head.committedEnd()) {
            return new NotYetCommitted(head.committedEnd());
        }
        List<IndexRecord> candidates = scanned.stream()
                .filter(r -> r.view() == view && r.serves(offset))
                .sorted(Comparator.comparing(IndexRecord::generation).reversed())
                .toList();
        return candidates.isEmpty() ? new Unindexed(offset) : new Resolved(candidates);
    }
}
