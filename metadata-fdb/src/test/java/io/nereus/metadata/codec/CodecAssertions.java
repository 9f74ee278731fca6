package io.nereus.metadata.codec;

import static io.nereus.error.ErrorAssertions.thrown;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.metadata.FdbLimits;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/** Rejection checks shared by the codec tests. */
final class CodecAssertions {
    private CodecAssertions() {
    }

    /** Every proper prefix of a valid encoding, including the empty one, is refused. */
    static void rejectsEveryTruncation(byte[] valid, Function<byte[], ?> decode) {
        for (int len = 0; len < valid.length; len++) {
            byte[] prefix = Arrays.copyOf(valid, len);
            assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> decode.apply(prefix)).context().get("reason"))
                    .as("prefix of %d of %d bytes", len, valid.length)
                    .isIn(len == 0 ? List.of("empty value")
                            : List.of("truncated", "stored fields violate the value's invariants"));
        }
    }

    static void rejectsTrailingBytes(byte[] valid, Function<byte[], ?> decode) {
        byte[] longer = Arrays.copyOf(valid, valid.length + 2);
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> decode.apply(longer)).context())
                .containsEntry("reason", "trailing bytes after the last field").containsEntry("trailing", 2);
    }

    static void rejectsUnknownVersion(byte[] valid, Function<byte[], ?> decode, String what) {
        rejectsUnknownVersion(valid, decode, what, 0, 2, 255);
    }

    /** As {@link #rejectsUnknownVersion(byte[], Function, String)}, for the given unknown versions. */
    static void rejectsUnknownVersion(byte[] valid, Function<byte[], ?> decode, String what, int... versions) {
        for (int version : versions) {
            byte[] other = valid.clone();
            other[0] = (byte) version;
            Map<String, Object> context = thrown(ErrorCode.METADATA_FORMAT, () -> decode.apply(other)).context();
            assertThat(context).containsEntry("reason", "unknown format version").containsEntry("version", version);
            assertThat((String) context.get("value")).contains(what);
        }
    }

    /**
     * Runs {@code decode}, which must refuse a value named {@code what} for violating the value's invariants;
     * returns the violation (the invariant's own message).
     */
    static String violation(ThrowingCallable decode, String what) {
        Map<String, Object> context = thrown(ErrorCode.METADATA_FORMAT, decode).context();
        assertThat(context).containsEntry("reason", "stored fields violate the value's invariants");
        assertThat((String) context.get("value")).contains(what);
        return (String) context.get("violation");
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
