package io.nereus.kafka;

import static io.nereus.kafka.KafkaBatches.batch;
import static io.nereus.kafka.KafkaBatches.bytes;
import static io.nereus.kafka.KafkaBatches.concat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** Each {@link BatchRule} on real batches built by kafka-clients and then broken, without storage. */
class RecordBatchesTest {
    private static final int MAX = 1 << 20;

    private static Map<String, Object> refused(MemoryRecords records, int max) {
        Object[] context = new Object[1];
        assertThatThrownBy(() -> RecordBatches.validate(records, max)).isInstanceOfSatisfying(NereusException.class,
                e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_RECORD_BATCH);
                    context[0] = e.context();
                });
        @SuppressWarnings("unchecked")
        Map<String, Object> m = (Map<String, Object>) context[0];
        return m;
    }

    private static MemoryRecords wrap(byte[] b) {
        return MemoryRecords.readableRecords(ByteBuffer.wrap(b));
    }

    private static MutableRecordBatch only(byte[] b) {
        return wrap(b).batches().iterator().next();
    }

    @Test
    void validBatches_ofEveryCompression_passWithTheirCountsProducerAndACopyOfTheBytes() {
        for (Compression c : KafkaBatches.compressions()) {
            MemoryRecords a = batch("a", 7).compressed(c).producer(3, 1, 40).build();
            MemoryRecords b = batch("b", 1).compressed(c).build();
            List<ValidBatch> v = RecordBatches.validate(concat(a, b), MAX);
            assertThat(v).extracting(ValidBatch::recordCount).containsExactly(7, 1);
            assertThat(v).extracting(ValidBatch::position).containsExactly(0, a.sizeInBytes());
            assertThat(v.get(0).producer()).contains(new ValidBatch.Producer(3, 1, 40, 46));
            assertThat(v.get(1).producer()).isEmpty();
            assertThat(v.get(0).bytes()).isEqualTo(bytes(a));
            assertThat(v.get(0).maxTimestamp()).isEqualTo(1_006);
        }
    }

    @Test
    void emptyRecords_areRefused() {
        assertThat(refused(MemoryRecords.EMPTY, MAX)).containsEntry("rule", BatchRule.NOT_EMPTY);
    }

    @Test
    void aBatchLargerThanTheMaximum_isRefusedAsLength() {
        MemoryRecords big = batch("big", 10).valueBytes(500).build();
        assertThat(refused(big, 1_000)).containsEntry("rule", BatchRule.LENGTH).containsEntry("size",
                big.sizeInBytes()).containsEntry("max", 1_000);
    }

    @Test
    void aLengthFieldBelowTheSmallestBatch_isRefusedAsLength() {
        byte[] b = bytes(batch("a", 2).build());
        ByteBuffer.wrap(b).putInt(8, 3); // the length field (after the base offset)
        assertThat(refused(wrap(b), MAX)).containsEntry("rule", BatchRule.LENGTH).containsEntry("batch", 0);
    }

    @Test
    void recordOffsetDeltasWithAGap_areRefusedAsOffsets() {
        byte[] b = bytes(batch("a", 3).build());
        // record 0 at RECORDS_OFFSET: length varint (one byte, zigzag), attributes, timestamp delta, offset delta;
        // record 1 follows: the same, its offset delta 1 (zigzag 0x02) becomes 5 (0x0A)
        int record0 = 61;
        int length0 = (b[record0] & 0xFF) >>> 1;
        int offsetDelta1 = record0 + 1 + length0 + 3;
        assertThat(b[offsetDelta1]).isEqualTo((byte) 0x02);
        b[offsetDelta1] = 0x0A;
        KafkaBatches.fixCrc(b, 0, b.length);
        assertThat(refused(wrap(b), MAX)).containsEntry("rule", BatchRule.OFFSETS).containsEntry("record", 1)
                .containsEntry("offsetDelta", 5L);
    }

    @Test
    void aMaxTimestampOtherThanTheRecords_orLogAppendTime_isRefusedAsTimestamps() {
        byte[] b = bytes(batch("a", 3).at(5_000).build());
        only(b).setMaxTimestamp(TimestampType.CREATE_TIME, 9_999); // kafka-clients recomputes the CRC
        assertThat(refused(wrap(b), MAX)).containsEntry("rule", BatchRule.TIMESTAMPS)
                .containsEntry("maxTimestamp", 9_999L).containsEntry("largestRecordTimestamp", 5_002L);
        byte[] l = bytes(batch("a", 3).build());
        only(l).setMaxTimestamp(TimestampType.LOG_APPEND_TIME, 1_002);
        assertThat(refused(wrap(l), MAX)).containsEntry("rule", BatchRule.TIMESTAMPS)
                .containsEntry("timestampType", TimestampType.LOG_APPEND_TIME);
    }

    @Test
    void transactionalBatches_areRefused() {
        ByteBuffer buf = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder b = MemoryRecords.builder(buf, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0L, RecordBatch.NO_TIMESTAMP, 8L, (short) 0, 0, true,
                RecordBatch.NO_PARTITION_LEADER_EPOCH);
        b.append(1L, new byte[1], new byte[1]);
        assertThat(refused(b.build(), MAX)).containsEntry("rule", BatchRule.NOT_TRANSACTIONAL)
                .containsEntry("transactional", true);
    }

    @Test
    void aCompressedBatchThatDoesNotDecompress_isRefusedAsReadable() {
        byte[] b = bytes(batch("z", 20).compressed(Compression.gzip().build()).valueBytes(100).build());
        for (int i = DefaultRecordBatch.RECORD_BATCH_OVERHEAD; i < b.length; i++) {
            b[i] = (byte) 0x5A;
        }
        KafkaBatches.fixCrc(b, 0, b.length);
        assertThat(refused(wrap(b), MAX)).containsEntry("rule", BatchRule.READABLE);
    }

    @Test
    void validate_doesNotModifyTheCallersBuffer() {
        MemoryRecords m = batch("a", 4).build();
        byte[] before = bytes(m);
        List<ValidBatch> v = RecordBatches.validate(m, MAX);
        v.get(0).assignBaseOffset(1_000);
        assertThat(bytes(m)).isEqualTo(before);
        MutableRecordBatch stored = only(v.get(0).bytes());
        assertThat(stored.baseOffset()).isEqualTo(1_000);
        assertThat(stored.lastOffset()).isEqualTo(1_003);
        assertThat(stored.isValid()).isTrue();
    }
}
