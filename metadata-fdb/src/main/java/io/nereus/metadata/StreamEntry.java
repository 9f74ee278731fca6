package io.nereus.metadata;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.Objects;

/**
 * An entry of a stream as every layer reads it back (the WAL's target reader, the tail cache, the stream objects,
 * the stream's read API, the facade): the offsets it covers and its payload. The one entry value above the append.
 *
 * <p><b>Ownership.</b> The payload is a reference-counted buffer, usually a retained slice of a buffer another
 * layer keeps (a BookKeeper entry fetched by the WAL reader, a tail-cache entry, a stream object's block), so a
 * read hands out no copies. An entry returned by a read holds exactly one reference to its payload, and the
 * receiver owns it: it releases it exactly once ({@link #release}), or hands the entry on to something that does
 * (Pulsar's {@code EntryImpl}, after taking its own reference). That holds on every path: delivered, skipped,
 * filtered, failed, cancelled. Nobody changes the payload's bytes; its indices are the entry's own (a slice), so
 * moving them does not disturb other readers. A caller that needs the bytes past the entry's release asks for
 * them explicitly: {@link #bytes} (a copy) or {@link #heapCopy}.
 *
 * @param range   the entry's offsets, not empty; {@code range.length()} is its record count
 * @param payload the bytes as appended: the buffer's readable bytes
 */
public record StreamEntry(OffsetRange range, ByteBuf payload) {
    public StreamEntry {
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(payload, "payload");
        if (range.isEmpty()) {
            throw new IllegalArgumentException("stream entry range must not be empty");
        }
    }

    /** An entry of a heap array, wrapped (not copied); unpooled, so dropping it without a release leaks nothing. */
    public StreamEntry(OffsetRange range, byte[] payload) {
        this(range, Unpooled.wrappedBuffer(Objects.requireNonNull(payload, "payload")));
    }

    /** The payload's length in bytes. */
    public int size() {
        return payload.readableBytes();
    }

    /** A copy of the payload's bytes; this entry and its reference are untouched. */
    public byte[] bytes() {
        return ByteBufUtil.getBytes(payload);
    }

    /**
     * The same entry with its payload copied into a new unpooled heap buffer (which needs no release); this entry
     * and its reference are untouched. For holders that keep entries long and must not pin the buffer a slice comes
     * from (a WAL batch holds every stream's entries).
     */
    public StreamEntry heapCopy() {
        return new StreamEntry(range, bytes());
    }

    /** The same entry with a reference of its own: a new retained slice of the payload (indices of its own). */
    public StreamEntry retainedSlice() {
        return new StreamEntry(range, Payloads.retainedSlice(payload));
    }

    /** Releases this entry's reference to its payload; the entry must not be used afterwards. */
    public void release() {
        payload.release();
    }

    /** Releases every entry of {@code entries} (each exactly once); null elements are skipped. */
    public static void releaseAll(List<StreamEntry> entries) {
        for (int i = 0; i < entries.size(); i++) {
            StreamEntry e = entries.get(i);
            if (e != null) {
                e.release();
            }
        }
    }

    /** Heap copies of {@code entries} ({@link #heapCopy}), releasing every one of {@code entries}, also on failure. */
    public static List<StreamEntry> heapCopiesReleasing(List<StreamEntry> entries) {
        try {
            StreamEntry[] out = new StreamEntry[entries.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = entries.get(i).heapCopy();
            }
            return List.of(out);
        } finally {
            releaseAll(entries);
        }
    }
}
