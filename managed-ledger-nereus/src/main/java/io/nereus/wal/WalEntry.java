package io.nereus.wal;

import java.util.Objects;

/**
 * One entry of a stream inside a WAL batch: an indivisible payload covering {@code recordCount} offsets.
 *
 * @param recordCount offsets the entry covers, {@code >= 1}
 * @param payload     the entry's bytes; not copied, callers must not modify them afterwards
 */
public record WalEntry(int recordCount, byte[] payload) {
    public WalEntry {
        Objects.requireNonNull(payload, "payload");
        if (recordCount < 1) {
            throw new IllegalArgumentException("WAL entry record count must be >= 1: " + recordCount);
        }
    }
}
