package io.nereus.metadata;

import java.util.List;
import java.util.Objects;

/**
 * What a conditional generation-0 repair write did ({@link MetadataStore#repairGenerationZero}), decided from
 * the head and the COMMITTED-view records overlapping the range, all read in the write's transaction.
 *
 * <ul>
 *   <li>{@link Repaired}: the record is in the index (written now, or by an earlier attempt of this very
 *       write whose result was unknown, error 1021);</li>
 *   <li>{@link AlreadyCovered}: readable COMMITTED records already cover part of the range; nothing written;</li>
 *   <li>{@link Trimmed}: the whole range is below the trim point; nothing written;</li>
 *   <li>{@link NotCommitted}: the range reaches beyond the committed end; nothing written;</li>
 *   <li>{@link KeyOccupied}: the record's key holds a record that no longer serves reads (quarantined); a
 *       record never returns to COMMITTED, so nothing is written;</li>
 *   <li>{@link SliceCollected}: the evidence's WAL slice is COLLECTING or gone: its ledger is (being) deleted, so
 *       no record may target it; nothing written.</li>
 * </ul>
 * A range that straddles the trim point is repaired: trim leaves straddling records in place too.
 */
public sealed interface RepairOutcome {

    record Repaired(IndexRecord record) implements RepairOutcome {
        public Repaired {
            Objects.requireNonNull(record, "record");
        }
    }

    record AlreadyCovered(List<IndexRecord> covering) implements RepairOutcome {
        public AlreadyCovered {
            covering = List.copyOf(covering);
            if (covering.isEmpty()) {
                throw new IllegalArgumentException("an already covered range needs a covering record");
            }
        }
    }

    record Trimmed(long firstAvailable) implements RepairOutcome {
    }

    record NotCommitted(long committedEnd) implements RepairOutcome {
    }

    record KeyOccupied(IndexRecord occupant) implements RepairOutcome {
        public KeyOccupied {
            Objects.requireNonNull(occupant, "occupant");
        }
    }

    record SliceCollected(long sliceId) implements RepairOutcome {
    }

    /**
     * Decides the repair of {@code request}.
     *
     * @param overlapping COMMITTED-view records whose end offset is above the range start, read in the same
     *                    transaction; records not overlapping the range are ignored
     */
    static RepairOutcome decide(StreamHead head, List<IndexRecord> overlapping, RepairRequest request) {
        Objects.requireNonNull(head, "head");
        Objects.requireNonNull(overlapping, "overlapping");
        Objects.requireNonNull(request, "request");
        IndexRecord wanted = request.record();
        OffsetRange range = wanted.range();
        if (range.end() <= head.trimOffset()) {
            return new Trimmed(head.trimOffset());
        }
        if (range.end() > head.committedEnd()) {
            return new NotCommitted(head.committedEnd());
        }
        // a stream's open run ending where the wanted record ends holds its place: closing it writes it there
        IndexKey key = IndexKey.atEnd(wanted);
        List<IndexRecord> covering = overlapping.stream()
                .filter(r -> r.view() == ReadView.COMMITTED && r.range().start() < range.end()
                        && r.range().end() > range.start())
                .toList();
        for (IndexRecord r : covering) {
            if (IndexKey.atEnd(r).equals(key)) {
                if (r.equals(wanted)) {
                    return new Repaired(r);
                }
                if (r.state() != IndexRecordState.COMMITTED) {
                    return new KeyOccupied(r);
                }
            }
        }
        List<IndexRecord> readable = covering.stream().filter(r -> r.state() == IndexRecordState.COMMITTED).toList();
        return readable.isEmpty() ? new Repaired(wanted) : new AlreadyCovered(readable);
    }
}
