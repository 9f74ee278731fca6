package io.nereus.metadata.codec;

import static io.nereus.metadata.codec.CodecAssertions.rejectsEveryTruncation;
import static io.nereus.metadata.codec.CodecAssertions.rejectsTrailingBytes;
import static io.nereus.metadata.codec.CodecAssertions.rejectsUnknownVersion;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FormatVersionTest {
    @Test
    void current_roundTripsAndIsAccepted() {
        byte[] stored = FormatVersion.encodeCurrent();
        assertThat(FormatVersion.decode(stored)).isEqualTo(FormatVersion.CURRENT);
        assertThat(FormatVersion.check(stored)).isEqualTo(FormatVersion.CURRENT);
        assertThat(stored).containsExactly(1, 0, 0, 0, 1);
    }

    @Test
    void unknownLayout_isRefusedWithClearMessage() {
        byte[] stored = FormatVersion.encode(FormatVersion.CURRENT + 1);
        assertThatThrownBy(() -> FormatVersion.check(stored))
                .isInstanceOf(FormatVersion.UnsupportedFormatVersionException.class)
                .hasMessage("Nereus metadata layout version 2 is not supported by this build, which reads only version 1;"
                        + " refusing to open the metadata root")
                .extracting(e -> ((FormatVersion.UnsupportedFormatVersionException) e).storedVersion()).isEqualTo(2);
        assertThatThrownBy(() -> FormatVersion.encode(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void malformedValue_isRefused() {
        byte[] stored = FormatVersion.encodeCurrent();
        rejectsEveryTruncation(stored, FormatVersion::decode);
        rejectsTrailingBytes(stored, FormatVersion::decode);
        rejectsUnknownVersion(stored, FormatVersion::decode, "metadata format value");
    }
}
