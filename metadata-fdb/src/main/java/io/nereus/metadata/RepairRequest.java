package io.nereus.metadata;

import java.util.Objects;

/**
 * A missing generation-0 record rebuilt from WAL evidence by generation-0 repair: the stream's section of
 * one WAL batch, with the checksum verified against the section's payload bytes.
 *
 * @param stream     the stream
 * @param range      the offsets of the section; never empty
 * @param target     the WAL batch entry and the section's position in it
 * @param checksum   CRC32C of the section's payload bytes
 * @param entryCount entries in the section, {@code 1..range.length()}
 * @param bytes      payload bytes of the section, {@code >= 0}
 */
public record RepairRequest(StreamId stream, OffsetRange range, WalTarget target, Checksum checksum, long entryCount,
        long bytes) {

    public RepairRequest {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(checksum, "checksum");
        // the record's constructor checks range, entry count and bytes
        new IndexRecord(stream, ReadView.COMMITTED, range, GenerationId.APPEND, IndexRecordState.COMMITTED, target,
                checksum, entryCount, bytes, 0);
    }

    /** The generation-0 COMMITTED-view record this repair writes. */
    public IndexRecord record() {
        return new IndexRecord(stream, ReadView.COMMITTED, range, GenerationId.APPEND, IndexRecordState.COMMITTED,
                target, checksum, entryCount, bytes, 0);
    }
}
