package io.nereus.kafka;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.RecordBatch;

/**
 * One record batch of an append that passed every {@link BatchRule}, in a private copy of its bytes that the log
 * will give its offsets ({@link #assignBaseOffset}) before storing it as one entry.
 *
 * @param index       its position among the append's batches, from 0
 * @param position    its byte position in the appended records
 * @param bytes       a copy of the whole batch
 * @param recordCount {@code lastOffsetDelta + 1}
 * @param maxTimestamp the batch's max timestamp
 * @param producer    the idempotent producer's id, epoch and sequences, when the batch has a producer id
 */
record ValidBatch(int index, int position, byte[] bytes, int recordCount, long maxTimestamp,
        Optional<Producer> producer) {
    ValidBatch {
        Objects.requireNonNull(bytes, "bytes");
        Objects.requireNonNull(producer, "producer");
        if (recordCount < 1) {
            throw new IllegalArgumentException("record count must be >= 1: " + recordCount);
        }
    }

    /**
     * The producer fields of a batch.
     *
     * @param id            producer id, {@code >= 0}
     * @param epoch         producer epoch, {@code >= 0}
     * @param firstSequence base sequence, {@code >= 0}
     * @param lastSequence  sequence of the last record (wrapping past {@code Integer.MAX_VALUE} to 0)
     */
    record Producer(long id, int epoch, int firstSequence, int lastSequence) {
        Producer {
            if (id < 0 || epoch < 0 || firstSequence < 0 || lastSequence < 0) {
                throw new IllegalArgumentException("producer fields must be >= 0: " + id + "/" + epoch + "/"
                        + firstSequence + ".." + lastSequence);
            }
        }

        static Optional<Producer> of(RecordBatch b) {
            if (!b.hasProducerId()) {
                return Optional.empty();
            }
            return Optional.of(new Producer(b.producerId(), b.producerEpoch(), b.baseSequence(),
                    b.lastSequence()));
        }
    }

    /** Sets the base offset of the copy to {@code baseOffset} (outside the CRC, so the batch stays valid). */
    void assignBaseOffset(long baseOffset) {
        batchOf(bytes).setLastOffset(baseOffset + recordCount - 1);
    }

    /** The single batch in {@code bytes} (a stored entry or a validated copy), read with kafka-clients. */
    static MutableRecordBatch batchOf(byte[] bytes) {
        return batchOf(ByteBuffer.wrap(bytes));
    }

    /**
     * The single batch in {@code bytes}' remaining bytes (a view of a stored entry's buffer: valid while the entry's
     * reference is held), read with kafka-clients.
     */
    static MutableRecordBatch batchOf(ByteBuffer bytes) {
        int length = bytes.remaining();
        var it = MemoryRecords.readableRecords(bytes).batches().iterator();
        if (!it.hasNext()) {
            throw new IllegalArgumentException("no whole record batch in " + length + " bytes");
        }
        return it.next();
    }
}
