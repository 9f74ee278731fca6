package io.nereus.metadata.codec;

import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamState;
import java.util.Optional;

/**
 * Binary form of {@link StreamHead}, the value of {@code (STREAM, sid, HEAD)}.
 *
 * <pre>
 * format 1:
 *   u8     format = 1
 *   u8     state (StreamState code)
 *   i64    committedEnd
 *   i64    trimOffset
 *   i64    commitVersion
 *   i64    writerEpoch
 *   i64    cumulativeBytes
 *   string writerId (empty when there is no writer)
 * </pre>
 */
public final class StreamHeadCodec implements ValueCodec<StreamHead> {
    public static final StreamHeadCodec INSTANCE = new StreamHeadCodec();
    public static final int FORMAT_V1 = 1;
    private static final String WHAT = "StreamHead value";

    private StreamHeadCodec() {
    }

    @Override
    public byte[] encode(StreamHead h) {
        return new ValueWriter(64)
                .u8(FORMAT_V1)
                .u8(h.state().code())
                .i64(h.committedEnd())
                .i64(h.trimOffset())
                .i64(h.commitVersion())
                .i64(h.writerEpoch())
                .i64(h.cumulativeBytes())
                .string(h.writerId().orElse(""))
                .toByteArray();
    }

    @Override
    public StreamHead decode(byte[] bytes) {
        ValueReader r = new ValueReader(WHAT, bytes);
        r.formatVersion(FORMAT_V1);
        int state = r.u8("state");
        long committedEnd = r.i64("committedEnd");
        long trimOffset = r.i64("trimOffset");
        long commitVersion = r.i64("commitVersion");
        long writerEpoch = r.i64("writerEpoch");
        long cumulativeBytes = r.i64("cumulativeBytes");
        String writerId = r.string("writerId");
        r.expectEnd();
        return r.build(() -> new StreamHead(StreamState.fromCode(state), committedEnd, trimOffset, commitVersion,
                writerEpoch, writerId.isEmpty() ? Optional.empty() : Optional.of(writerId), cumulativeBytes));
    }
}
