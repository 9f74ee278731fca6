package io.nereus.generation;

import io.nereus.metadata.IndexRecord;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Reads the entries an index record's target holds, verifying them against the record's checksum.
 * Fails with {@link PhysicalReadException}; never throws.
 */
public interface TargetReader {
    CompletableFuture<List<ResolvedEntry>> read(IndexRecord record);
}
