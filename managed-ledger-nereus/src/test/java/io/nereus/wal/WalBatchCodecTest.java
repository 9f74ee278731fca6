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

    @Test
    void encodeBuffer_wrapsThePayloadArraysWithoutCopying_betweenHeaderAndTrailer() {
        WalBatch batch = sample();
        io.netty.buffer.CompositeByteBuf out = (io.netty.buffer.CompositeByteBuf) WalBatchCodec.encodeBuffer(batch);
        try {
            List<AppendEntry> entries = batch.sections().stream().flatMap(s -> s.entries().stream()).toList();
            assertThat(out.numComponents()).isEqualTo(entries.size() + 2);
            for (int i = 0; i < entries.size(); i++) {
                byte[] payload = entries.get(i).payload();
                if (payload.length > 0) { // an empty payload is Netty's shared empty buffer: nothing to copy
                    assertThat(out.component(i + 1).array()).as("payload %s", i).isSameAs(payload);
                }
            }
            assertThat(out.readableBytes()).isEqualTo(WalBatchCodec.encodedSize(batch));
            assertThat(out.isDirect()).as("heap only: nothing pooled to leak").isFalse();
        } finally {
            out.release();
        }
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
        assertThat(a.entries().get(1).payload()).isEqualTo(bytes("ranged-entry"));
        assertThat(a.entries().get(2).payload()).isEmpty();
        assertThat(a.checksum()).isEqualTo(batch.sections().get(0).checksum());
        assertThat(WalBatchCodec.verifySection(a, a.checksum())).isTrue();
        assertThat(back.sections().get(1).entries().get(0).payload()).isEqualTo(bytes("b0"));
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
                    assertThat(back.sections().get(s).entries().get(e).payload())
                            .isEqualTo(sections.get(s).entries().get(e).payload());
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
