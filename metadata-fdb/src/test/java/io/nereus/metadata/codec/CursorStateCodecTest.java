package io.nereus.metadata.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.metadata.AckSet;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.MetadataFormatException;
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
        assertThatThrownBy(() -> CODEC.decode(missing))
                .isInstanceOf(MetadataFormatException.class)
                .hasMessageContaining("header announces " + (values.size() - 1) + " data chunks, " + (values.size() - 2) + " present");
        List<byte[]> extra = new ArrayList<>(values);
        extra.add(values.get(1));
        assertThatThrownBy(() -> CODEC.decode(extra)).isInstanceOf(MetadataFormatException.class).hasMessageContaining("present");
        assertThatThrownBy(() -> CODEC.decode(List.of())).isInstanceOf(MetadataFormatException.class).hasMessageContaining("no header");
    }

    @Test
    void corruptOrMixedChunks_areRefused() {
        List<byte[]> values = CODEC.encode(multiChunk());
        List<byte[]> corrupt = new ArrayList<>(values);
        byte[] c = values.get(1).clone();
        c[100] ^= 0x10;
        corrupt.set(1, c);
        assertThatThrownBy(() -> CODEC.decode(corrupt)).isInstanceOf(MetadataFormatException.class).hasMessageContaining("CRC-32C mismatch");

        List<byte[]> truncatedChunk = new ArrayList<>(values);
        truncatedChunk.set(1, Arrays.copyOf(values.get(1), 500));
        assertThatThrownBy(() -> CODEC.decode(truncatedChunk))
                .isInstanceOf(MetadataFormatException.class)
                .hasMessageContaining("chunk 1 of").hasMessageContaining("holds 499 body bytes");

        List<byte[]> unknownVersion = new ArrayList<>(values);
        byte[] v = values.get(2).clone();
        v[0] = 9;
        unknownVersion.set(2, v);
        assertThatThrownBy(() -> CODEC.decode(unknownVersion))
                .isInstanceOf(MetadataFormatException.class).hasMessageContaining("chunk 2").hasMessageContaining("unknown format version 9");

        byte[] header = values.get(0).clone();
        header[0] = 2;
        List<byte[]> unknownHeader = new ArrayList<>(values);
        unknownHeader.set(0, header);
        assertThatThrownBy(() -> CODEC.decode(unknownHeader))
                .isInstanceOf(MetadataFormatException.class).hasMessageContaining("header").hasMessageContaining("unknown format version 2");

        List<byte[]> mixed = new ArrayList<>(values);
        mixed.set(0, CODEC.encode(small()).get(0));
        assertThatThrownBy(() -> CODEC.decode(mixed)).isInstanceOf(MetadataFormatException.class);
    }

    @Test
    void truncatedHeader_isRefused() {
        List<byte[]> values = CODEC.encode(small());
        byte[] header = values.get(0);
        for (int len = 0; len < header.length; len++) {
            List<byte[]> v = new ArrayList<>(values);
            v.set(0, Arrays.copyOf(header, len));
            assertThatThrownBy(() -> CODEC.decode(v)).as("header prefix %d", len).isInstanceOf(MetadataFormatException.class);
        }
    }

    @Test
    void bodyViolatingInvariants_isRefused() {
        // header + one chunk with a body whose ack set repeats an offset: mark 0, 0 ranges, 2 sets at delta 5 and 0
        byte[] body = {0, 0, 2, 5, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
        assertThatThrownBy(() -> CODEC.decode(withBody(body)))
                .isInstanceOf(MetadataFormatException.class).hasMessageContaining("repeats offset 5");
        byte[] zeroLength = {0, 1, 3, 0, 0, 0, 0};
        assertThatThrownBy(() -> CODEC.decode(withBody(zeroLength)))
                .isInstanceOf(MetadataFormatException.class).hasMessageContaining("length 0");
        byte[] trailing = {0, 0, 0, 0, 0, 7};
        assertThatThrownBy(() -> CODEC.decode(withBody(trailing)))
                .isInstanceOf(MetadataFormatException.class).hasMessageContaining("1 trailing bytes");
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
