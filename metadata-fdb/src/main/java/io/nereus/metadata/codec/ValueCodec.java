package io.nereus.metadata.codec;

import io.nereus.metadata.FdbLimits;
import io.nereus.metadata.MetadataFormatException;

/**
 * A versioned binary encoding of one self-contained stored value. Every encoding starts with a format
 * version byte; decoders refuse versions they do not know, truncated input and trailing bytes with a
 * {@link MetadataFormatException}. Layouts are documented on each implementation using the vocabulary of
 * {@code package-info}.
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
     * @throws MetadataFormatException when they are not a valid encoding
     */
    T decode(byte[] bytes);
}
