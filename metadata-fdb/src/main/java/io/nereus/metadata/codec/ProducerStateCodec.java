package io.nereus.metadata.codec;

import io.nereus.metadata.ProducerBatch;
import io.nereus.metadata.ProducerState;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary form of a {@link ProducerState}, the value of {@code (STREAM, sid, PRODUCER, producerId)}. The producer id
 * is in the key, not in the value; {@link #decode(long, byte[])} takes it from there.
 *
 * <pre>
 * format 1:
 *   u8     format = 1
 *   u16    epoch                        0..32767
 *   u8     batch count                  1..5
 *   count * { i32 firstSequence | i32 lastSequence | i64 firstOffset | i64 lastOffset | i64 maxTimestamp }
 *                                       oldest first, offsets strictly increasing
 * </pre>
 */
public final class ProducerStateCodec {
    public static final ProducerStateCodec INSTANCE = new ProducerStateCodec();
    public static final int FORMAT_V1 = 1;
    private static final String WHAT = "ProducerState value";

    private ProducerStateCodec() {
    }

    public byte[] encode(ProducerState s) {
        ValueWriter w = new ValueWriter(4 + 32 * s.batches().size()).u8(FORMAT_V1).unsigned(s.epoch(), 2)
                .u8(s.batches().size());
        for (ProducerBatch b : s.batches()) {
            w.i32(b.firstSequence()).i32(b.lastSequence()).i64(b.firstOffset()).i64(b.lastOffset())
                    .i64(b.maxTimestamp());
        }
        return w.toByteArray();
    }

    /** Decodes the state of producer {@code producerId} (from the key). */
    public ProducerState decode(long producerId, byte[] bytes) {
        ValueReader r = new ValueReader(WHAT, bytes);
        r.formatVersion(FORMAT_V1);
        int epoch = (int) r.unsigned("epoch", 2);
        int count = r.u8("batch count");
        List<ProducerBatch> batches = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int firstSeq = r.i32("firstSequence");
            int lastSeq = r.i32("lastSequence");
            long firstOffset = r.i64("firstOffset");
            long lastOffset = r.i64("lastOffset");
            long maxTimestamp = r.i64("maxTimestamp");
            batches.add(r.build(() -> new ProducerBatch(firstSeq, lastSeq, firstOffset, lastOffset, maxTimestamp)));
        }
        r.expectEnd();
        return r.build(() -> new ProducerState(producerId, epoch, batches));
    }
}
