package io.nereus.kafka;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

/**
 * Validates the record batches of one append with kafka-clients' record classes ({@link MemoryRecords},
 * {@link DefaultRecordBatch}): every {@link BatchRule}, batch by batch, and copies each batch out. A broken rule fails
 * the whole append with a {@link NereusException} of code {@link ErrorCode#INVALID_RECORD_BATCH} whose context names
 * the batch ({@code batch} index, {@code position}), the {@code rule} and the values it compared. Stateless; the
 * records' iteration decompresses compressed batches (gzip, snappy, lz4, zstd through kafka-clients' codecs).
 */
final class RecordBatches {
    private RecordBatches() {
    }

    /**
     * The batches of {@code records}, each checked and copied.
     *
     * @throws NereusException INVALID_RECORD_BATCH naming the first batch that breaks a rule
     */
    static List<ValidBatch> validate(MemoryRecords records, int maxBatchBytes) {
        ByteBuffer all = records.buffer();
        int total = all.remaining();
        List<ValidBatch> out = new ArrayList<>();
        int position = 0;
        Iterator<MutableRecordBatch> batches = records.batches().iterator();
        while (true) {
            MutableRecordBatch batch;
            try {
                if (!batches.hasNext()) {
                    break;
                }
                batch = batches.next();
            } catch (RuntimeException e) {
                // a length field below the smallest batch (kafka-clients' CorruptRecordException)
                throw invalid(e, out.size(), position, BatchRule.LENGTH, "reason", "length field too small");
            }
            out.add(validate(batch, out.size(), position, maxBatchBytes));
            position += batch.sizeInBytes();
        }
        if (position != total) {
            // kafka-clients' batch iteration stops before a batch whose length field claims more than the bytes left
            throw invalid(out.size(), position, BatchRule.LENGTH, "reason", "bytes after the last whole batch",
                    "trailing", total - position);
        }
        if (out.isEmpty()) {
            throw invalid(0, 0, BatchRule.NOT_EMPTY);
        }
        return out;
    }

    private static ValidBatch validate(MutableRecordBatch batch, int index, int position, int maxBatchBytes) {
        if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
            throw invalid(index, position, BatchRule.MAGIC, "magic", batch.magic(), "expected",
                    RecordBatch.MAGIC_VALUE_V2);
        }
        int size = batch.sizeInBytes();
        if (size < DefaultRecordBatch.RECORD_BATCH_OVERHEAD || size > maxBatchBytes) {
            throw invalid(index, position, BatchRule.LENGTH, "size", size, "min",
                    DefaultRecordBatch.RECORD_BATCH_OVERHEAD, "max", maxBatchBytes);
        }
        if (!batch.isValid()) {
            throw invalid(index, position, BatchRule.CRC, "storedCrc", batch.checksum());
        }
        Integer count = batch.countOrNull();
        long lastOffsetDelta = batch.lastOffset() - batch.baseOffset();
        if (count == null || count < 1 || count != lastOffsetDelta + 1) {
            throw invalid(index, position, BatchRule.RECORD_COUNT, "count", count, "lastOffsetDelta",
                    lastOffsetDelta);
        }
        if (batch.isTransactional() || batch.isControlBatch()) {
            throw invalid(index, position, BatchRule.NOT_TRANSACTIONAL, "transactional", batch.isTransactional(),
                    "control", batch.isControlBatch());
        }
        if (batch.hasProducerId() && (batch.producerEpoch() < 0 || batch.baseSequence() < 0)) {
            throw invalid(index, position, BatchRule.PRODUCER, "producerId", batch.producerId(), "producerEpoch",
                    batch.producerEpoch(), "baseSequence", batch.baseSequence());
        }
        if (batch.timestampType() != TimestampType.CREATE_TIME) {
            throw invalid(index, position, BatchRule.TIMESTAMPS, "timestampType", batch.timestampType());
        }
        checkRecords(batch, index, position, count);
        ByteBuffer copy = ByteBuffer.allocate(size);
        batch.writeTo(copy);
        return new ValidBatch(index, position, copy.array(), count, batch.maxTimestamp(),
                ValidBatch.Producer.of(batch));
    }

    /** Reads every record once (without copying keys and values) for the offset, count and timestamp rules. */
    private static void checkRecords(MutableRecordBatch batch, int index, int position, int count) {
        int seen = 0;
        long maxTimestamp = RecordBatch.NO_TIMESTAMP;
        try (CloseableIterator<Record> it = batch.skipKeyValueIterator(BufferSupplier.NO_CACHING)) {
            while (it.hasNext()) {
                Record r = it.next();
                if (r.offset() != batch.baseOffset() + seen) {
                    throw invalid(index, position, BatchRule.OFFSETS, "record", seen, "offsetDelta",
                            r.offset() - batch.baseOffset());
                }
                if (r.timestamp() < RecordBatch.NO_TIMESTAMP) {
                    throw invalid(index, position, BatchRule.TIMESTAMPS, "record", seen, "timestamp", r.timestamp());
                }
                maxTimestamp = Math.max(maxTimestamp, r.timestamp());
                seen++;
            }
        } catch (NereusException e) {
            throw e;
        } catch (RuntimeException e) {
            throw invalid(e, index, position, BatchRule.READABLE, "record", seen, "failure", e.getClass().getName());
        }
        if (seen != count) {
            throw invalid(index, position, BatchRule.RECORD_COUNT, "count", count, "records", seen);
        }
        if (maxTimestamp != batch.maxTimestamp()) {
            throw invalid(index, position, BatchRule.TIMESTAMPS, "maxTimestamp", batch.maxTimestamp(),
                    "largestRecordTimestamp", maxTimestamp);
        }
    }

    private static NereusException invalid(int index, int position, BatchRule rule, Object... more) {
        return invalid(null, index, position, rule, more);
    }

    private static NereusException invalid(Throwable cause, int index, int position, BatchRule rule,
            Object... more) {
        Map<String, Object> context = ErrorContext.of("batch", index, "position", position, "rule", rule);
        context.putAll(ErrorContext.of(more));
        return new NereusException(ErrorCode.INVALID_RECORD_BATCH, context, cause);
    }
}
