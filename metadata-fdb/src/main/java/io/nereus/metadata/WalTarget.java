package io.nereus.metadata;

/**
 * A location inside the multi-stream WAL: the BookKeeper ledger that is the WAL slice, the entry holding
 * the WAL batch, and this stream's position in the batch's per-stream directory.
 *
 * @param sliceId         the BookKeeper ledger id of the WAL slice, {@code >= 0}
 * @param entryId         the BookKeeper entry id of the WAL batch, {@code >= 0}
 * @param positionInBatch index of this stream's section in the batch directory, {@code >= 0}
 */
public record WalTarget(long sliceId, long entryId, int positionInBatch) implements ReadTarget {
    public WalTarget {
        if (sliceId < 0) {
            throw new IllegalArgumentException("WAL slice id must be >= 0: " + sliceId);
        }
        if (entryId < 0) {
            throw new IllegalArgumentException("WAL entry id must be >= 0: " + entryId);
        }
        if (positionInBatch < 0) {
            throw new IllegalArgumentException("position in WAL batch must be >= 0: " + positionInBatch);
        }
    }
}
