package io.nereus.metadata.codec;

import io.nereus.metadata.FdbLimits;

/**
 * A versioned binary encoding of one self-contained stored value. Every encoding starts with a format
 * version byte; decoders refuse versions they do not know, truncated input and trailing bytes with a
 * {@link io.nereus.error.NereusException} of code {@link io.nereus.error.ErrorCode#METADATA_FORMAT}. Layouts
 * are documented on each implementation using the vocabulary of {@code package-info}.
 */
public interface ValueCodec<T> {
    /**
     * Encodes {@code value}.
     *
     * @throws IllegalArgumentException when the encoding would exceed {@link FdbLimits#MAX_VALUE_BYTES}
     */
    byte[] encode(T value);

    /**
     * Decodes bytes written by {@link #encode} of this or an older supported format version.
     *
     * @throws io.nereus.error.NereusException METADATA_FORMAT when they are not a valid encoding
     */
    T decode(byte[] bytes);
}
