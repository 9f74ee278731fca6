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

    CompletableFuture<List<StreamEntry>> read(IndexRecord record);
}
