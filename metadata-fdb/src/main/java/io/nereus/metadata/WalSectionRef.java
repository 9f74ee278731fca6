package io.nereus.metadata;

import java.util.Objects;

/**
 * One stream's section of one WAL batch as a generation-0 record lists it ({@link IndexRecord#walSections()}): where
 * it is, the offsets it holds and the checksum of its payload.
 *
 * @param sliceId         the BookKeeper ledger id of the WAL slice
 * @param entryId         the BookKeeper entry id of the WAL batch
 * @param positionInBatch index of the section in the batch's directory
 * @param range           the offsets the section holds; never empty
 * @param checksum        the checksum of the section's payload
 */
public record WalSectionRef(long sliceId, long entryId, int positionInBatch, OffsetRange range, Checksum checksum) {
    public WalSectionRef {
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(checksum, "checksum");
        if (range.isEmpty()) {
            throw new IllegalArgumentException("a WAL section holds at least one offset: " + range);
        }
    }
}
