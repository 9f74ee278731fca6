package io.nereus.wal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class Crc32cTest {
    private static int crc(byte[] data, int from, int to) {
        CRC32C c = new CRC32C();
        c.update(data, from, to - from);
        return (int) c.getValue();
    }

    @Test
    void combine_ofTwoParts_isTheCrcOfTheWhole_atEverySplitAndLength() {
        Random random = new Random(3);
        for (int round = 0; round < 500; round++) {
            byte[] data = new byte[round < 20 ? round : random.nextInt(round < 400 ? 300 : 70_000)];
            random.nextBytes(data);
            int split = data.length == 0 ? 0 : random.nextInt(data.length + 1);
            int combined = Crc32c.combine(crc(data, 0, split), crc(data, split, data.length), data.length - split);
            assertThat(combined).as("length %s split %s", data.length, split).isEqualTo(crc(data, 0, data.length));
        }
    }

    @Test
    void update_readsTheReadableBytesOfHeapDirectAndCompositeBuffers_withoutMovingIndices() {
        byte[] data = new byte[1000];
        new Random(5).nextBytes(data);
        int expected = crc(data, 10, 990);
        ByteBuf heap = Unpooled.wrappedBuffer(data).setIndex(10, 990);
        ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(1000).writeBytes(data).setIndex(10, 990);
        CompositeByteBuf composite = Unpooled.compositeBuffer();
        composite.addComponent(true, Unpooled.wrappedBuffer(data, 0, 400));
        composite.addComponent(true, PooledByteBufAllocator.DEFAULT.directBuffer(600).writeBytes(data, 400, 600));
        composite.setIndex(10, 990);
        try {
            for (ByteBuf b : new ByteBuf[] {heap, direct, composite}) {
                assertThat(Crc32c.update(0, b)).as(b.getClass().getSimpleName()).isEqualTo(expected);
                // going on from the CRC32C of a first part gives the whole's
                int first = Crc32c.update(0, b.slice(10, 300));
                assertThat(Crc32c.update(first, b.slice(310, 680))).as(b.getClass().getSimpleName() + ", in two parts")
                        .isEqualTo(expected);
                assertThat(b.readerIndex()).isEqualTo(10);
                assertThat(b.writerIndex()).isEqualTo(990);
            }
        } finally {
            direct.release();
            composite.release();
        }
    }
}
