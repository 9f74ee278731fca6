package io.nereus.metadata;

/**
 * Stored metadata could not be decoded: an unknown format version, truncated or trailing bytes, or
 * content that violates the value's invariants. The message names the value type, the field and the
 * byte position. Not retriable: the bytes will not change by reading them again.
 */
public final class MetadataFormatException extends RuntimeException {
    public MetadataFormatException(String message) {
        super(message);
    }

    public MetadataFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
