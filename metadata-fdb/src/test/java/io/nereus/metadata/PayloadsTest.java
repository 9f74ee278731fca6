package io.nereus.metadata;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

class PayloadsTest {
    @Test
    void retainedSlice_ofANonRetainedSliceOfAPooledSlice_startsAtItsReaderIndex() {
        ByteBuf root = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        for (int i = 0; i < 64; i++) {
            root.writeByte(i);
        }
        ByteBuf frame = root.retainedSlice(8, 40); // as a frame decoder hands it out
        ByteBuf entry = frame.slice(2, 30); // as a BookKeeper v2 read hands an entry out: past its digest header
        entry.readerIndex(3);
        ByteBuf mine = Payloads.retainedSlice(entry);
        assertThat(ByteBufUtil.getBytes(mine)).isEqualTo(ByteBufUtil.getBytes(entry));
        assertThat(mine.getByte(0)).isEqualTo((byte) 13);
        assertThat(root.refCnt()).isEqualTo(2); // the frame's reference and the slice's own
        mine.release();
        frame.release();
        assertThat(root.refCnt()).isEqualTo(1);
        root.release();
    }

    @Test
    void streamAndAppendEntries_sliceTheirReadableBytes() {
        ByteBuf root = PooledByteBufAllocator.DEFAULT.directBuffer(16).writeZero(4).writeInt(0x4E57414C).writeZero(8);
        ByteBuf frame = root.retainedSlice(0, 16);
        ByteBuf view = frame.slice(0, 16);
        view.readerIndex(4);
        StreamEntry e = new StreamEntry(OffsetRange.single(0), view).retainedSlice();
        AppendEntry a = AppendEntry.of(view).retainedSlice();
        assertThat(e.payload().getInt(0)).isEqualTo(0x4E57414C);
        assertThat(a.payload().getInt(0)).isEqualTo(0x4E57414C);
        assertThat(e.size()).isEqualTo(12);
        e.release();
        a.payload().release();
        frame.release();
        assertThat(root.release()).isTrue();
    }
}
