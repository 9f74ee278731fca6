package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.StreamEntry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Reads the entries an index record's target holds, verifying them against the record's checksum. Fails with a
 * {@link NereusException} of one of {@link #FAILURES}; never throws.
 */
public interface TargetReader {
    /**
     * What a read of a target fails with: TARGET_MISSING (the ledger, entry or object does not exist), CORRUPT_DATA
     * (its bytes are unusable or do not describe the record) or RETRIABLE_READ_FAILED (a transient failure, or no
     * reader for the target's kind; says nothing about the target).
     */
    Set<ErrorCode> FAILURES = Set.of(ErrorCode.TARGET_MISSING, ErrorCode.CORRUPT_DATA, ErrorCode.RETRIABLE_READ_FAILED);

    /**
     * Entries of {@code record}'s target from the one containing {@code offset} (which the record covers): at
     * least that entry, and a reader may stop after {@code maxEntries} entries or, beyond the first,
     * {@code maxBytes} payload bytes. A reader whose target is small (a WAL section) may return all of the
     * record's entries, also ones before {@code offset}; callers skip what they do not need. Each entry holds a
     * reference to its payload (a retained slice of what the reader fetched or caches, not a copy) that the caller
     * owns and releases exactly once ({@link StreamEntry}), the ones it skips too. A failed read hands out nothing.
     */
    CompletableFuture<List<StreamEntry>> read(IndexRecord record, long offset, int maxEntries, long maxBytes);

    /** All entries of {@code record}'s target, in offset order. */
    default CompletableFuture<List<StreamEntry>> readAll(IndexRecord record) {
        return read(record, record.range().start(), Integer.MAX_VALUE, Long.MAX_VALUE);
    }
}
