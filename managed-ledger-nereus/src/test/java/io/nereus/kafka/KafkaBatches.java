package io.nereus.kafka;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Crc32C;

/** Real record batches built by kafka-clients' {@link MemoryRecords#builder}, and ways to break them, for tests. */
final class KafkaBatches {
    /** Where the CRC-covered part of a v2 batch starts (the attributes, right after the CRC). */
    static final int ATTRIBUTES_OFFSET = DefaultRecordBatch.CRC_OFFSET + 4;

    private KafkaBatches() {
    }

    static List<Compression> compressions() {
        return List.of(Compression.NONE, Compression.gzip().build(), Compression.lz4().build(),
                Compression.zstd().build());
    }

    /** Builder of one batch: {@code count} records "tag-i" with timestamps {@code firstTimestamp + i}. */
    static Spec batch(String tag, int count) {
        return new Spec(tag, count, Compression.NONE, 1_000, RecordBatch.NO_PRODUCER_ID, (short) -1, -1, 16);
    }

    record Spec(String tag, int count, Compression compression, long firstTimestamp, long producerId, short epoch,
            int sequence, int valueBytes) {
        Spec compressed(Compression c) {
            return new Spec(tag, count, c, firstTimestamp, producerId, epoch, sequence, valueBytes);
        }

        Spec at(long timestamp) {
            return new Spec(tag, count, compression, timestamp, producerId, epoch, sequence, valueBytes);
        }

        Spec producer(long id, int producerEpoch, int baseSequence) {
            return new Spec(tag, count, compression, firstTimestamp, id, (short) producerEpoch, baseSequence,
                    valueBytes);
        }

        Spec valueBytes(int bytes) {
            return new Spec(tag, count, compression, firstTimestamp, producerId, epoch, sequence, bytes);
        }

        MemoryRecords build() {
            return build(RecordBatch.MAGIC_VALUE_V2);
        }

        MemoryRecords build(byte magic) {
            ByteBuffer buf = ByteBuffer.allocate(1024 + count * (valueBytes + 64));
            MemoryRecordsBuilder b = MemoryRecords.builder(buf, magic, compression, TimestampType.CREATE_TIME, 0L,
                    RecordBatch.NO_TIMESTAMP, producerId, epoch, sequence);
            for (int i = 0; i < count; i++) {
                b.append(firstTimestamp + i, key(i), value(i));
            }
            return b.build();
        }

        byte[] key(int i) {
            return (tag + "-" + i).getBytes(StandardCharsets.UTF_8);
        }

        byte[] value(int i) {
            byte[] v = new byte[valueBytes];
            byte[] t = (tag + "-" + i + "|").getBytes(StandardCharsets.UTF_8);
            new java.util.Random(tag.hashCode() * 31L + i).nextBytes(v); // incompressible, like real payloads
            System.arraycopy(t, 0, v, 0, Math.min(t.length, v.length));
            return v;
        }
    }

    /** The batches' bytes one after another, as one produce request's records. */
    static MemoryRecords concat(MemoryRecords... parts) {
        int size = 0;
        for (MemoryRecords p : parts) {
            size += p.sizeInBytes();
        }
        ByteBuffer buf = ByteBuffer.allocate(size);
        for (MemoryRecords p : parts) {
            buf.put(p.buffer());
        }
        return MemoryRecords.readableRecords(buf.flip());
    }

    static MemoryRecords concat(List<MemoryRecords> parts) {
        return concat(parts.toArray(new MemoryRecords[0]));
    }

    static byte[] bytes(MemoryRecords r) {
        ByteBuffer b = r.buffer();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** A copy of {@code r}'s bytes (one batch) with the base offset set to {@code base}, as the log stores it. */
    static byte[] rebased(MemoryRecords r, long base) {
        byte[] copy = bytes(r);
        MutableRecordBatch b = MemoryRecords.readableRecords(ByteBuffer.wrap(copy)).batches().iterator().next();
        b.setLastOffset(base + b.lastOffset() - b.baseOffset());
        return copy;
    }

    /** Recomputes a v2 batch's CRC-32C over its bytes from the attributes on, as a producer would. */
    static void fixCrc(byte[] batch, int batchStart, int batchSize) {
        ByteBuffer buf = ByteBuffer.wrap(batch);
        long crc = Crc32C.compute(buf, batchStart + ATTRIBUTES_OFFSET, batchSize - ATTRIBUTES_OFFSET);
        buf.putInt(batchStart + DefaultRecordBatch.CRC_OFFSET, (int) crc);
    }

    /** Every record of {@code records} as "offset:key", in order (decompressing). */
    static List<String> offsetsAndKeys(MemoryRecords records) {
        List<String> out = new ArrayList<>();
        for (RecordBatch b : records.batches()) {
            for (Record r : b) {
                out.add(r.offset() + ":" + StandardCharsets.UTF_8.decode(r.key()));
            }
        }
        return out;
    }
}
