package io.nereus.metadata.codec;

import static io.nereus.error.ErrorAssertions.thrown;
import static io.nereus.metadata.codec.CodecAssertions.rejectsEveryTruncation;
import static io.nereus.metadata.codec.CodecAssertions.rejectsTrailingBytes;
import static io.nereus.metadata.codec.CodecAssertions.rejectsUnknownVersion;
import static io.nereus.metadata.codec.CodecAssertions.roundTrips;
import static io.nereus.metadata.codec.CodecAssertions.violation;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.metadata.ProducerBatch;
import io.nereus.metadata.ProducerState;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The idempotent-producer values: round trips, the pinned layout, refusals. */
class ProducerStateCodecTest {
    private static final ProducerStateCodec CODEC = ProducerStateCodec.INSTANCE;

    private static ProducerState state(int batches) {
        ProducerState s = ProducerState.first(77, 3, new ProducerBatch(0, 9, 100, 109, 1_000));
        for (int i = 1; i < batches; i++) {
            s = s.with(3, new ProducerBatch(10 * i, 10 * i + 9, 100 + 10 * i, 109 + 10 * i, 1_000 + i));
        }
        return s;
    }

    @Test
    void producerState_roundTripsWithOneToFiveBatches_andWrappedSequences() {
        for (int n = 1; n <= 5; n++) {
            ProducerState s = state(n);
            byte[] bytes = CODEC.encode(s);
            assertThat(CODEC.decode(77, bytes)).isEqualTo(s);
            rejectsEveryTruncation(bytes, b -> CODEC.decode(77, b));
            rejectsTrailingBytes(bytes, b -> CODEC.decode(77, b));
            rejectsUnknownVersion(bytes, b -> CODEC.decode(77, b), "ProducerState");
        }
        ProducerState wrapped = ProducerState.first(0, Short.MAX_VALUE,
                new ProducerBatch(Integer.MAX_VALUE - 1, 3, 0, 5, -1));
        assertThat(CODEC.decode(0, CODEC.encode(wrapped))).isEqualTo(wrapped);
    }

    @Test
    void producerState_layoutIsPinned() {
        ProducerState s = ProducerState.first(5, 2, new ProducerBatch(1, 2, 3, 4, 5));
        assertThat(HexFormat.of().formatHex(CODEC.encode(s))).isEqualTo("01" + "0002" + "01" + "00000001" + "00000002"
                + "0000000000000003" + "0000000000000004" + "0000000000000005");
    }

    @Test
    void producerState_refusesStoredValuesBreakingItsInvariants() {
        byte[] zeroBatches = HexFormat.of().parseHex("01" + "0002" + "00");
        assertThat(violation(() -> CODEC.decode(5, zeroBatches), "ProducerState")).contains("1..5 batches");
        byte[] backwards = CODEC.encode(state(2));
        // the second batch's firstOffset (byte 4 + 32 + 8) rewritten below the first batch's lastOffset
        backwards[4 + 32 + 8 + 7] = 0;
        assertThat(violation(() -> CODEC.decode(77, backwards), "ProducerState")).contains("offset order");
        byte[] negativeEpoch = HexFormat.of().parseHex("01" + "8000" + "01" + "00000001" + "00000002"
                + "0000000000000003" + "0000000000000004" + "0000000000000005");
        assertThat(violation(() -> CODEC.decode(5, negativeEpoch), "ProducerState")).contains("epoch");
    }

    @Test
    void producerState_keepsTheLastFiveBatchesOfTheCurrentEpoch() {
        ProducerState s = state(5).with(3, new ProducerBatch(50, 59, 200, 209, 9));
        assertThat(s.batches()).hasSize(5);
        assertThat(s.batches().get(0).firstSequence()).isEqualTo(10);
        assertThat(s.last().firstOffset()).isEqualTo(200);
        ProducerState bumped = s.with(4, new ProducerBatch(0, 0, 300, 300, 9));
        assertThat(bumped.epoch()).isEqualTo(4);
        assertThat(bumped.batches()).containsExactly(new ProducerBatch(0, 0, 300, 300, 9));
    }

    @Test
    void producerStateEnd_roundTripsAndRefusesNegative() {
        roundTrips(ProducerStateEndCodec.INSTANCE, 0L);
        roundTrips(ProducerStateEndCodec.INSTANCE, 123_456_789_012L);
        rejectsUnknownVersion(ProducerStateEndCodec.INSTANCE.encode(5L), ProducerStateEndCodec.INSTANCE::decode,
                "ProducerStateEnd");
        byte[] negative = HexFormat.of().parseHex("01" + "ffffffffffffffff");
        assertThat(violation(() -> ProducerStateEndCodec.INSTANCE.decode(negative), "ProducerStateEnd"))
                .contains(">= 0");
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> ProducerStateEndCodec.INSTANCE.decode(new byte[0]))
                .context()).containsEntry("reason", "empty value");
        assertThat(List.of(ProducerStateCodec.FORMAT_V1, ProducerStateEndCodec.FORMAT_V1)).containsOnly(1);
    }
}
