package io.nereus.metadata;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Objects;

/**
 * One entry to append, before the stream has placed it: an indivisible payload covering {@code recordCount}
 * offsets (1 for a Pulsar entry, {@code lastOffsetDelta + 1} for a Kafka record batch). The stream assigns its
 * offsets when it appends it; read back, the same entry is a {@link StreamEntry}. The WAL stores it as is, as one
 * entry of a stream's section of a WAL batch.
 *
 * <p><b>Ownership.</b> An entry lends its payload: its readable bytes are the payload, and whoever hands it to
 * {@code NereusStream.append} or {@code WalWriter.append} keeps its own reference and may release
 * it once the call returned; every layer that keeps the payload longer (the stream until the append completes, the
 * WAL until the batch holding it has finished, the tail cache until eviction) takes and later releases its own
 * reference. Nobody changes the payload's bytes or indices after the hand-off.
 *
 * @param payload     the bytes, its readable bytes; not copied
 * @param recordCount offsets covered, {@code >= 1}
 */
public record AppendEntry(ByteBuf payload, int recordCount) {
    public AppendEntry {
        Objects.requireNonNull(payload, "payload");
        if (recordCount < 1) {
            throw new IllegalArgumentException("entry record count must be >= 1: " + recordCount);
        }
    }

    /** An entry of a heap array, wrapped (not copied); unpooled, so dropping it without a release leaks nothing. */
    public AppendEntry(byte[] payload, int recordCount) {
        this(Unpooled.wrappedBuffer(Objects.requireNonNull(payload, "payload")), recordCount);
    }

    public static AppendEntry of(byte[] payload) {
        return new AppendEntry(payload, 1);
    }

    public static AppendEntry of(ByteBuf payload) {
        return new AppendEntry(payload, 1);
    }

    /** The payload's length in bytes. */
    public int size() {
        return payload.readableBytes();
    }

    /** This entry's payload as a new retained slice of its readable bytes (indices of its own), same record count. */
    public AppendEntry retainedSlice() {
        return new AppendEntry(Payloads.retainedSlice(payload), recordCount);
    }
}
