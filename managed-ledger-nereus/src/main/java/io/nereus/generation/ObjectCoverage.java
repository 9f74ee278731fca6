package io.nereus.generation;

import io.nereus.metadata.IndexRecord;

/**
 * The objects holding a stream from its trim offset on without a gap (COMMITTED records of a generation above 0 in
 * the lookup space, consecutive): what a Pulsar ledger reports as offloaded.
 *
 * @param objects      records naming an object
 * @param entries      entries in them
 * @param bytes        payload bytes in them
 * @param firstOffset  first offset in an object, -1 when none
 * @param endOffset    end of the last object's range, -1 when none
 */
public record ObjectCoverage(long objects, long entries, long bytes, long firstOffset, long endOffset) {
    public static final ObjectCoverage NONE = new ObjectCoverage(0, 0, 0, -1, -1);

    ObjectCoverage plus(IndexRecord r) {
        return new ObjectCoverage(objects + 1, entries + r.entryCount(), bytes + r.bytes(),
                firstOffset < 0 ? r.range().start() : Math.min(firstOffset, r.range().start()),
                Math.max(endOffset, r.range().end()));
    }
}
