package io.nereus.kafka;

import java.util.Objects;
import org.apache.kafka.common.record.MemoryRecords;

/**
 * What one {@link KafkaPartitionLog#read} returns.
 *
 * @param records        whole stored batches, byte for byte as stored, the first containing the fetch offset; empty
 *                       when the fetch offset is the high watermark
 * @param highWatermark  the log's committed end when the read started
 * @param logStartOffset the first offset still readable when the read started
 */
public record FetchResult(MemoryRecords records, long highWatermark, long logStartOffset) {
    public FetchResult {
        Objects.requireNonNull(records, "records");
        if (logStartOffset < 0 || highWatermark < logStartOffset) {
            throw new IllegalArgumentException("need 0 <= logStartOffset <= highWatermark: " + logStartOffset + ", "
                    + highWatermark);
        }
    }
}
