package io.nereus.metadata;

import io.netty.buffer.ByteBuf;

/** Reference-counted payload buffers: the one way Nereus takes a reference of its own to a payload's bytes. */
public final class Payloads {
    private Payloads() {
    }

    /**
     * A retained slice of {@code payload}'s readable bytes, with indices of its own. Always with explicit indices:
     * Netty's no-argument {@code retainedSlice()} of a non-retained slice of a pooled derived buffer (what a
     * BookKeeper v2 read returns, and what slicing a pooled network buffer can give) slices from index 0 of the
     * slice, not from its reader index (netty-buffer 4.1.128), so it would hand out other bytes.
     */
    public static ByteBuf retainedSlice(ByteBuf payload) {
        return payload.retainedSlice(payload.readerIndex(), payload.readableBytes());
    }
}
