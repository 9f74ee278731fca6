package io.nereus.wal;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.Checksum;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamId;
import java.util.List;
import java.util.Objects;

/**
 * One stream's part of a WAL batch: consecutive entries starting at {@code firstOffset}.
 *
 * @param stream      the stream
 * @param firstOffset offset of the first record of the first entry, {@code >= 0}
 * @param entries     the entries in offset order; at least one
 * @param checksum    CRC32C of the section's payload bytes (all entries' payloads concatenated), as stored in
 *                    the batch directory and in the stream's generation-0 index record
 */
public record WalSection(StreamId stream, long firstOffset, List<AppendEntry> entries, Checksum checksum) {
    public WalSection {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(checksum, "checksum");
        entries = List.copyOf(entries);
        if (firstOffset < 0) {
            throw new IllegalArgumentException("WAL section first offset must be >= 0: " + firstOffset);
        }
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("WAL section needs at least one entry");
        }
    }

    /** A section of {@code entries} with the checksum computed from their payloads (each byte read once). */
    public static WalSection of(StreamId stream, long firstOffset, List<AppendEntry> entries) {
        return new WalSection(stream, firstOffset, entries, Checksum.crc32c(crcOf(entries)));
    }

    /** The CRC32C of the payloads of {@code entries}, back to back. */
    static int crcOf(List<AppendEntry> entries) {
        int crc = 0;
        for (AppendEntry e : entries) {
            crc = Crc32c.update(crc, e.payload());
        }
        return crc;
    }

    /** The offsets the section covers. */
    public OffsetRange range() {
        long records = 0;
        for (AppendEntry e : entries) {
            records += e.recordCount();
        }
        return new OffsetRange(firstOffset, Math.addExact(firstOffset, records));
    }

    /** Payload bytes of all entries. */
    public long payloadBytes() {
        long n = 0;
        for (AppendEntry e : entries) {
            n += e.size();
        }
        return n;
    }
}
