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

    /**
     * The writer id encoded last, with its UTF-8 bytes: every commit encodes the head of each stream it advances, and
     * a broker's streams share one writer id, so it is encoded once, not once per stream and commit.
     */
    private volatile EncodedId lastId = new EncodedId("", new byte[0]);

    private record EncodedId(String id, byte[] utf8) {
    }

    @Override
    public byte[] encode(StreamHead h) {
        String id = h.writerId().orElse("");
        EncodedId e = lastId;
        if (!e.id().equals(id)) {
            e = new EncodedId(id, id.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            lastId = e;
        }
        // sized exactly, so the writer's buffer is the value
        int size = 2 + 5 * 8 + ValueWriter.varintSize(e.utf8().length) + e.utf8().length;
        return new ValueWriter(size)
                .u8(FORMAT_V1)
                .u8(h.state().code())
                .i64(h.committedEnd())
                .i64(h.trimOffset())
                .i64(h.commitVersion())
                .i64(h.writerEpoch())
                .i64(h.cumulativeBytes())
                .utf8(e.utf8())
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
