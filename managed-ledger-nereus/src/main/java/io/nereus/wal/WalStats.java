package io.nereus.wal;

/**
 * Counters of one {@link WalWriter} since it started: what the group commit did. One metadata transaction per
 * commit group is the design's cost target (DESIGN §4); {@code commitTransactions} exceeds {@code commitGroups}
 * only by the recommits after a refused stream or slice.
 *
 * @param batchesWritten     WAL batches (BookKeeper entries) acknowledged by BookKeeper
 * @param bytesWritten       encoded bytes of those batches
 * @param entriesWritten     entries in those batches
 * @param commitGroups       groups of consecutive acknowledged batches committed together
 * @param commitTransactions metadata commit transactions started for them, recommits included
 * @param appendsCommitted   stream appends (one per stream per batch) committed
 */
public record WalStats(long batchesWritten, long bytesWritten, long entriesWritten, long commitGroups,
        long commitTransactions, long appendsCommitted) {
}
