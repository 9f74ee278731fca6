package io.nereus.metadata.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.MetadataFormatException;
import java.util.Arrays;
import java.util.function.Function;

/** Rejection checks shared by the codec tests. */
final class CodecAssertions {
    private CodecAssertions() {
    }

    /** Every proper prefix of a valid encoding, including the empty one, is refused. */
    static void rejectsEveryTruncation(byte[] valid, Function<byte[], ?> decode) {
        for (int len = 0; len < valid.length; len++) {
            byte[] prefix = Arrays.copyOf(valid, len);
            assertThatThrownBy(() -> decode.apply(prefix))
                    .as("prefix of %d of %d bytes", len, valid.length)
                    .isInstanceOf(MetadataFormatException.class)
                    .hasMessageMatching(len == 0 ? ".*empty value.*" : ".*(truncated|invalid|violate|not terminated).*");
        }
    }

    static void rejectsTrailingBytes(byte[] valid, Function<byte[], ?> decode) {
        byte[] longer = Arrays.copyOf(valid, valid.length + 2);
        assertThatThrownBy(() -> decode.apply(longer))
                .isInstanceOf(MetadataFormatException.class)
                .hasMessageContaining("2 trailing bytes");
    }

    static void rejectsUnknownVersion(byte[] valid, Function<byte[], ?> decode, String what) {
        for (int version : new int[] {0, 2, 255}) {
            byte[] other = valid.clone();
            other[0] = (byte) version;
            assertThatThrownBy(() -> decode.apply(other))
                    .isInstanceOf(MetadataFormatException.class)
                    .hasMessageContaining(what)
                    .hasMessageContaining("unknown format version " + version);
        }
    }

    static <T> void roundTrips(ValueCodec<T> codec, T value) {
        byte[] bytes = codec.encode(value);
        assertThat(bytes[0]).as("format byte").isEqualTo((byte) 1);
        assertThat(bytes.length).isLessThanOrEqualTo(FdbLimits.MAX_VALUE_BYTES);
        assertThat(codec.decode(bytes)).isEqualTo(value);
        rejectsEveryTruncation(bytes, codec::decode);
        rejectsTrailingBytes(bytes, codec::decode);
    }
}
