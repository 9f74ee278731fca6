package io.nereus.kafka;

/**
 * Settings of a {@link KafkaPartitionLog}.
 *
 * @param maxBatchBytes        largest record batch an append accepts, in bytes (Kafka's {@code max.message.bytes},
 *                             default 1,048,588); at least a v2 batch header, at most 4 MiB (the WAL's default largest batch; a whole append must fit the WAL's {@code maxBatchBytes})
 * @param snapshotEveryBatches new batches after which the log saves its producer state to the metadata store
 *                             (besides on {@link KafkaPartitionLog#trim} and {@link KafkaPartitionLog#close}); a restart
 *                             replays at most about this many batches from the stream; {@code >= 1}
 * @param scanBytes            bytes read from the stream per step of a replay or a timestamp search; {@code >= 1}
 */
public record KafkaLogConfig(int maxBatchBytes, int snapshotEveryBatches, int scanBytes) {
    /** Smallest v2 record batch: its header ({@code DefaultRecordBatch.RECORD_BATCH_OVERHEAD}). */
    static final int MIN_BATCH_BYTES = 61;

    public KafkaLogConfig {
        if (maxBatchBytes < MIN_BATCH_BYTES || maxBatchBytes > 4 << 20) {
            throw new IllegalArgumentException("maxBatchBytes must be " + MIN_BATCH_BYTES + ".." + (4 << 20) + ": "
                    + maxBatchBytes);
        }
        if (snapshotEveryBatches < 1) {
            throw new IllegalArgumentException("snapshotEveryBatches must be >= 1: " + snapshotEveryBatches);
        }
        if (scanBytes < 1) {
            throw new IllegalArgumentException("scanBytes must be >= 1: " + scanBytes);
        }
    }

    public static KafkaLogConfig defaults() {
        return new KafkaLogConfig(1_048_588, 1_000, 1 << 20);
    }

    public KafkaLogConfig withSnapshotEveryBatches(int batches) {
        return new KafkaLogConfig(maxBatchBytes, batches, scanBytes);
    }

    public KafkaLogConfig withScanBytes(int bytes) {
        return new KafkaLogConfig(maxBatchBytes, snapshotEveryBatches, bytes);
    }
}
