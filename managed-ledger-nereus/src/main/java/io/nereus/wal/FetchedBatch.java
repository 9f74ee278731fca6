package io.nereus.wal;

import io.nereus.metadata.AppendEntry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCounted;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A WAL batch read back from BookKeeper, with the fetched entry's buffer that its payloads are slices of. Reference
 * counted: the payloads of {@link #batch()} are unretained slices of {@link #buffer()}, valid while a reference is
 * held; whoever keeps a payload longer takes its own ({@code payload().retainedSlice()}), which keeps the buffer's
 * memory alive after this object is released. The last release releases the buffer.
 *
 * <p>Whoever receives a fetched batch from {@link WalReader} owns one reference and releases it exactly once, on
 * every path. A slice of a payload pins the whole fetched entry (every stream's sections, and what BookKeeper's
 * response buffer holds beyond it), so holders that keep entries long copy what they keep instead (the materializer
 * copies each section straight into the object it writes).
 */
public final class FetchedBatch extends AbstractReferenceCounted {
    private final WalBatch batch;
    private final ByteBuf buffer;

    /** Takes over the caller's reference to {@code buffer}, which {@code batch}'s payloads are slices of. */
    FetchedBatch(WalBatch batch, ByteBuf buffer) {
        this.batch = Objects.requireNonNull(batch, "batch");
        this.buffer = Objects.requireNonNull(buffer, "buffer");
    }

    /** Decodes {@code buffer} ({@link WalBatchCodec#decode(ByteBuf)}), taking over the caller's reference to it. */
    static FetchedBatch decode(ByteBuf buffer) {
        try {
            return new FetchedBatch(WalBatchCodec.decode(buffer), buffer);
        } catch (RuntimeException e) {
            buffer.release();
            throw e;
        }
    }

    /** The batch; its payloads are valid while a reference to this object is held. */
    public WalBatch batch() {
        return batch;
    }

    /** The stored bytes of the batch (one BookKeeper entry). */
    public int storedBytes() {
        return buffer.readableBytes();
    }

    ByteBuf buffer() {
        return buffer;
    }

    @Override
    protected void deallocate() {
        buffer.release();
    }

    @Override
    public ReferenceCounted touch(Object hint) {
        buffer.touch(hint);
        return this;
    }
}
