package io.nereus.wal;

import static io.nereus.testing.StreamTesting.encoded;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.Checksum;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamId;
import io.nereus.wal.WalBatchCodec.Check;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32C;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

class WalBatchCodecTest {

    private static WalBatch sample() {
        WalSection a = WalSection.of(StreamId.of(7), 100, List.of(
                new AppendEntry(bytes("a0"), 1), new AppendEntry(bytes("ranged-entry"), 5), new AppendEntry(new byte[0], 1)));
        WalSection b = WalSection.of(StreamId.of(3), 0, List.of(new AppendEntry(bytes("b0"), 1)));
        return new WalBatch(42, 9, List.of(a, b));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] payload(AppendEntry e) {
        return ByteBufUtil.getBytes(e.payload());
    }

    /** The version-1 layout written the plain way: one array, the trailer computed over every byte before it. */
    private static byte[] referenceEncoding(WalBatch batch) {
        ByteBuffer b = ByteBuffer.allocate(WalBatchCodec.encodedSize(batch));
        b.putInt(WalBatchCodec.MAGIC).putShort(WalBatchCodec.VERSION).putShort((short) 0).putLong(batch.sliceId())
                .putLong(batch.sequence()).putInt(batch.sections().size());
        int start = 0;
        for (WalSection s : batch.sections()) {
            CRC32C sectionCrc = new CRC32C();
            s.entries().forEach(e -> sectionCrc.update(payload(e)));
            b.putLong(s.stream().value()).putLong(s.firstOffset()).putInt(s.entries().size()).putInt(start)
                    .putInt((int) s.payloadBytes()).putInt((int) sectionCrc.getValue());
            s.entries().forEach(e -> b.putInt(e.recordCount()).putInt(e.size()));
            start += (int) s.payloadBytes();
        }
        batch.sections().forEach(s -> s.entries().forEach(e -> b.put(payload(e))));
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putInt((int) crc.getValue());
        return b.array();
    }

    @Test
    void encodeBuffer_isTheVersion1LayoutByteForByte_itsTrailerCombinedFromTheSectionCrcs() {
        Random random = new Random(11);
        for (int round = 0; round < 100; round++) {
            List<WalSection> sections = new java.util.ArrayList<>();
            for (int s = 0, n = random.nextInt(6); s < n; s++) {
                List<AppendEntry> entries = new java.util.ArrayList<>();
                for (int e = 0, m = 1 + random.nextInt(5); e < m; e++) {
                    byte[] p = new byte[random.nextInt(5) == 0 ? 0 : random.nextInt(3000)];
                    random.nextBytes(p);
                    entries.add(new AppendEntry(p, 1 + random.nextInt(3)));
                }
                sections.add(WalSection.of(StreamId.of(s + 1), random.nextInt(1000), entries));
            }
            WalBatch batch = new WalBatch(round, round * 3L, sections);
            assertThat(encoded(batch)).as("round %s", round).isEqualTo(referenceEncoding(batch));
        }
    }

    @Test
    void encodeBuffer_holdsThePayloadBuffersThemselves_directHeaderAndTrailer_andReleasesThemWithIt() {
        ByteBuf p0 = PooledByteBufAllocator.DEFAULT.directBuffer(64).writeBytes(bytes("first payload"));
        ByteBuf p1 = PooledByteBufAllocator.DEFAULT.directBuffer(64).writeBytes(bytes("second"));
        p1.readerIndex(1); // only the readable bytes are the payload
        WalSection s = WalSection.of(StreamId.of(5), 0, List.of(AppendEntry.of(p0), AppendEntry.of(p1)));
        WalBatch batch = new WalBatch(1, 2, List.of(s));
        try {
            CompositeByteBuf out = (CompositeByteBuf) WalBatchCodec.encodeBuffer(batch, PooledByteBufAllocator.DEFAULT);
            try {
                assertThat(out.numComponents()).isEqualTo(4);
                assertThat(out.isDirect()).as("direct throughout: written to a socket without a copy").isTrue();
                assertThat(address(out, 1)).as("the payload's memory, not a copy").isEqualTo(p0.memoryAddress());
                assertThat(address(out, 2)).isEqualTo(p1.memoryAddress() + 1);
                assertThat(p0.refCnt()).isEqualTo(2);
                assertThat(p1.refCnt()).isEqualTo(2);
                assertThat(p1.readerIndex()).isEqualTo(1);
                assertThat(ByteBufUtil.getBytes(out)).isEqualTo(referenceEncoding(batch));
            } finally {
                out.release();
            }
            assertThat(p0.refCnt()).isEqualTo(1);
            assertThat(p1.refCnt()).isEqualTo(1);
            WalBatch back = WalBatchCodec.decode(WalBatchCodec.encode(batch));
            assertThat(payload(back.sections().get(0).entries().get(1))).isEqualTo(bytes("econd"));
        } finally {
            p0.release();
            p1.release();
        }
    }

    /** The memory address of the first readable byte of component {@code i}. */
    private static long address(CompositeByteBuf out, int i) {
        ByteBuf c = out.component(i);
        return c.memoryAddress() + c.readerIndex();
    }

    @Test
    void roundTrip_keepsSectionsEntriesAndChecksums() {
        WalBatch batch = sample();
        byte[] data = encoded(batch);
        assertThat(data).hasSize(WalBatchCodec.encodedSize(batch));

        WalBatch back = WalBatchCodec.decode(data);

        assertThat(back.sliceId()).isEqualTo(42);
        assertThat(back.sequence()).isEqualTo(9);
        assertThat(back.sections()).hasSize(2);
        WalSection a = back.sections().get(0);
        assertThat(a.stream()).isEqualTo(StreamId.of(7));
        assertThat(a.range()).isEqualTo(OffsetRange.of(100, 107));
        assertThat(a.entries()).extracting(AppendEntry::recordCount).containsExactly(1, 5, 1);
        assertThat(payload(a.entries().get(1))).isEqualTo(bytes("ranged-entry"));
        assertThat(a.entries().get(2).size()).isZero();
        assertThat(a.checksum()).isEqualTo(batch.sections().get(0).checksum());
        assertThat(WalBatchCodec.verifySection(a, a.checksum())).isTrue();
        assertThat(payload(back.sections().get(1).entries().get(0))).isEqualTo(bytes("b0"));
    }

    @Test
    void roundTrip_randomBatches() {
        Random random = new Random(4);
        for (int round = 0; round < 50; round++) {
            int streams = random.nextInt(5);
            List<WalSection> sections = new java.util.ArrayList<>();
            for (int s = 0; s < streams; s++) {
                List<AppendEntry> entries = new java.util.ArrayList<>();
                for (int e = 0, n = 1 + random.nextInt(4); e < n; e++) {
                    byte[] p = new byte[random.nextInt(300)];
                    random.nextBytes(p);
                    entries.add(new AppendEntry(p, 1 + random.nextInt(3)));
                }
                sections.add(WalSection.of(StreamId.of(s + 1), random.nextInt(1000), entries));
            }
            WalBatch batch = new WalBatch(round, round * 2L, sections);
            WalBatch back = WalBatchCodec.decode(encoded(batch));
            assertThat(back.sections()).hasSameSizeAs(sections);
            for (int s = 0; s < streams; s++) {
                assertThat(back.sections().get(s).range()).isEqualTo(sections.get(s).range());
                assertThat(back.sections().get(s).checksum()).isEqualTo(sections.get(s).checksum());
                for (int e = 0; e < sections.get(s).entries().size(); e++) {
                    assertThat(payload(back.sections().get(s).entries().get(e)))
                            .isEqualTo(payload(sections.get(s).entries().get(e)));
                }
            }
        }
    }

    @Test
    void decode_truncated_isRefused() {
        byte[] data = encoded(sample());
        assertThat(corrupt(() -> WalBatchCodec.decode(Arrays.copyOf(data, 10))))
                .containsEntry("reason", Check.TRUNCATED).containsEntry("length", 10);
        assertThat(corrupt(() -> WalBatchCodec.decode(Arrays.copyOf(data, data.length - 3))))
                .containsEntry("reason", Check.CHECKSUM_MISMATCH);
    }

    @Test
    void decode_flippedPayloadByte_isAChecksumMismatch() {
        byte[] data = encoded(sample());
        data[data.length - 8] ^= 0x10;
        assertThat(corrupt(() -> WalBatchCodec.decode(data)))
                .containsEntry("reason", Check.CHECKSUM_MISMATCH).containsKeys("stored", "computed");
    }

    @Test
    void decode_unknownVersion_isRefusedByName() {
        byte[] data = encoded(sample());
        ByteBuffer.wrap(data).putShort(4, (short) 2);
        assertThat(corrupt(() -> WalBatchCodec.decode(data)))
                .containsEntry("reason", Check.UNKNOWN_VERSION).containsEntry("version", 2);
    }

    @Test
    void decode_otherBytes_badMagic() {
        byte[] data = new byte[64];
        assertThat(corrupt(() -> WalBatchCodec.decode(data)))
                .containsEntry("reason", Check.BAD_MAGIC);
    }

    @Test
    void decode_inconsistentDirectoryWithValidTrailer_isMalformed() {
        byte[] data = encoded(sample());
        // first section's entryBytes of entry 0: header 28 + section fixed 32 + recordCount 4
        ByteBuffer.wrap(data).putInt(WalBatchCodec.HEADER_BYTES + WalBatchCodec.SECTION_FIXED_BYTES + 4, 999);
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length - 4);
        ByteBuffer.wrap(data).putInt(data.length - 4, (int) crc.getValue());
        assertThat(corrupt(() -> WalBatchCodec.decode(data)))
                .containsEntry("reason", Check.MALFORMED);
    }

    /** Runs {@code decode}, which must fail CORRUPT_DATA; returns the failure's context. */
    private static Map<String, Object> corrupt(ThrowingCallable decode) {
        Throwable t = catchThrowable(decode);
        assertThat(t).isInstanceOf(NereusException.class);
        assertThat(((NereusException) t).code()).isEqualTo(ErrorCode.CORRUPT_DATA);
        return ((NereusException) t).context();
    }

    @Test
    void verifySection_otherChecksum_isFalse() {
        WalSection s = sample().sections().get(0);
        assertThat(WalBatchCodec.verifySection(s, Checksum.crc32c(s.checksum().value() ^ 1))).isFalse();
    }
}
