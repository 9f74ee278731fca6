package io.nereus.metadata.codec;

import static io.nereus.error.ErrorAssertions.thrown;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.metadata.AckSet;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.OffsetRange;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class CursorStateCodecTest {
    private static final CursorStateCodec CODEC = CursorStateCodec.INSTANCE;

    private static CursorState small() {
        TreeMap<Long, AckSet> sets = new TreeMap<>();
        sets.put(105L, AckSet.of(0b1011L));
        sets.put(300L, AckSet.of(-1L, Long.MIN_VALUE, 0L));
        return new CursorState(100,
                List.of(OffsetRange.of(101, 103), OffsetRange.of(103, 104), OffsetRange.of(200, 250)),
                sets,
                Map.of("a", -5L, "b", Long.MAX_VALUE, "c", Long.MIN_VALUE),
                Map.of("owner", "broker-1", "ü", ""));
    }

    @Test
    void smallState_roundTripsInOneChunk() {
        CursorState s = small();
        List<byte[]> values = CODEC.encode(s);
        assertThat(values).hasSize(2);
        assertThat(CODEC.chunkCount(values.get(0))).isEqualTo(1);
        assertThat(CODEC.decode(values)).isEqualTo(s);
    }

    @Test
    void emptyState_roundTrips() {
        CursorState s = CursorState.at(0);
        assertThat(CODEC.decode(CODEC.encode(s))).isEqualTo(s);
    }

    @Test
    void millionDisjointRanges_chunkWithinLimitAndReloadExactly() {
        Random random = new Random(20261130L);
        List<OffsetRange> ranges = new ArrayList<>(1_000_000);
        long at = 5_000_000_000L;
        for (int i = 0; i < 1_000_000; i++) {
            long start = at + 1 + random.nextInt(3);
            long end = start + 1 + random.nextInt(2);
            ranges.add(new OffsetRange(start, end));
            at = end;
        }
        TreeMap<Long, AckSet> sets = new TreeMap<>();
        for (int i = 0; i < 1000; i++) {
            sets.put(at + 1 + 3L * i, AckSet.of(random.nextLong(), random.nextLong()));
        }
        CursorState s = new CursorState(5_000_000_000L, ranges, sets, Map.of("x", 1L), Map.of("y", "z"));

        List<byte[]> values = CODEC.encode(s);

        assertThat(values.size()).isGreaterThan(2);
        assertThat(values).allSatisfy(v -> assertThat(v.length).isLessThanOrEqualTo(CursorStateCodec.MAX_CHUNK_BODY_BYTES + 1));
        long total = values.stream().mapToLong(v -> v.length).sum();
        assertThat(total).as("fits one FoundationDB transaction").isLessThan(10_000_000L);
        assertThat(CODEC.chunkCount(values.get(0))).isEqualTo(values.size() - 1);
        CursorState back = CODEC.decode(values);
        assertThat(back.individuallyDeleted()).hasSize(1_000_000);
        assertThat(back).isEqualTo(s);
    }

    private static CursorState multiChunk() {
        List<OffsetRange> ranges = new ArrayList<>();
        for (long i = 0; i < 100_000; i++) {
            ranges.add(new OffsetRange(3 * i + 1, 3 * i + 2));
        }
        return new CursorState(0, ranges, new TreeMap<>(), Map.of(), Map.of());
    }

    @Test
    void missingOrExtraChunk_isRefused() {
        List<byte[]> values = CODEC.encode(multiChunk());
        assertThat(values.size()).isGreaterThanOrEqualTo(3);
        List<byte[]> missing = new ArrayList<>(values.subList(0, values.size() - 1));
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(missing)).context())
                .containsEntry("reason", "data chunks are not those the header announces")
                .containsEntry("announced", values.size() - 1).containsEntry("present", values.size() - 2);
        List<byte[]> extra = new ArrayList<>(values);
        extra.add(values.get(1));
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(extra)).context())
                .containsEntry("reason", "data chunks are not those the header announces")
                .containsEntry("present", values.size());
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(List.of())).context())
                .containsEntry("reason", "no header chunk");
    }

    @Test
    void corruptOrMixedChunks_areRefused() {
        List<byte[]> values = CODEC.encode(multiChunk());
        List<byte[]> corrupt = new ArrayList<>(values);
        byte[] c = values.get(1).clone();
        c[100] ^= 0x10;
        corrupt.set(1, c);
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(corrupt)).context())
                .containsEntry("reason", "body CRC-32C mismatch");

        List<byte[]> truncatedChunk = new ArrayList<>(values);
        truncatedChunk.set(1, Arrays.copyOf(values.get(1), 500));
        Map<String, Object> truncated = thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(truncatedChunk)).context();
        assertThat(truncated).containsEntry("reason", "chunk holds another number of body bytes")
                .containsEntry("holds", 499);
        assertThat((String) truncated.get("value")).contains("chunk 1 of");

        List<byte[]> unknownVersion = new ArrayList<>(values);
        byte[] v = values.get(2).clone();
        v[0] = 9;
        unknownVersion.set(2, v);
        Map<String, Object> chunkVersion =
                thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(unknownVersion)).context();
        assertThat(chunkVersion).containsEntry("reason", "unknown format version").containsEntry("version", 9);
        assertThat((String) chunkVersion.get("value")).contains("chunk 2");

        byte[] header = values.get(0).clone();
        header[0] = 2;
        List<byte[]> unknownHeader = new ArrayList<>(values);
        unknownHeader.set(0, header);
        Map<String, Object> headerVersion =
                thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(unknownHeader)).context();
        assertThat(headerVersion).containsEntry("reason", "unknown format version").containsEntry("version", 2);
        assertThat((String) headerVersion.get("value")).contains("header");

        List<byte[]> mixed = new ArrayList<>(values);
        mixed.set(0, CODEC.encode(small()).get(0));
        thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(mixed));
    }

    @Test
    void truncatedHeader_isRefused() {
        List<byte[]> values = CODEC.encode(small());
        byte[] header = values.get(0);
        for (int len = 0; len < header.length; len++) {
            List<byte[]> v = new ArrayList<>(values);
            v.set(0, Arrays.copyOf(header, len));
            assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(v)).context().get("value"))
                    .as("header prefix %d", len).isEqualTo("CursorState header");
        }
    }

    @Test
    void bodyViolatingInvariants_isRefused() {
        // header + one chunk with a body whose ack set repeats an offset: mark 0, 0 ranges, 2 sets at delta 5 and 0
        byte[] body = {0, 0, 2, 5, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(withBody(body))).context())
                .containsEntry("reason", "ack set repeats an offset").containsEntry("offset", 5L);
        byte[] zeroLength = {0, 1, 3, 0, 0, 0, 0};
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(withBody(zeroLength))).context())
                .containsEntry("reason", "acknowledged range has length 0");
        byte[] trailing = {0, 0, 0, 0, 0, 7};
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> CODEC.decode(withBody(trailing))).context())
                .containsEntry("reason", "trailing bytes after the last field").containsEntry("trailing", 1);
    }

    private static List<byte[]> withBody(byte[] body) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(body);
        long v = crc.getValue();
        byte[] header = {1, 1, (byte) body.length, (byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
        byte[] chunk = new byte[body.length + 1];
        chunk[0] = 1;
        System.arraycopy(body, 0, chunk, 1, body.length);
        return List.of(header, chunk);
    }
}
