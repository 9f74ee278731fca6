package io.nereus.metadata.codec;

import io.nereus.metadata.MetadataFormatException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Reads the primitive fields of the stored-value vocabulary (see {@code package-info}); every failure is a
 * {@link MetadataFormatException} naming the value, the field and the byte position.
 */
final class ValueReader {
    /** What is being decoded, for error messages; built only when an error is raised. */
    private final Supplier<String> what;
    private final byte[] buf;
    private final int limit;
    private int pos;

    ValueReader(String what, byte[] buf) {
        this(() -> what, buf, 0, buf.length);
    }

    ValueReader(Supplier<String> what, byte[] buf) {
        this(what, buf, 0, buf.length);
    }

    ValueReader(String what, byte[] buf, int offset, int limit) {
        this(() -> what, buf, offset, limit);
    }

    ValueReader(Supplier<String> what, byte[] buf, int offset, int limit) {
        this.what = what;
        this.buf = Objects.requireNonNull(buf, what);
        this.pos = offset;
        this.limit = limit;
    }

    /** Reads the format byte and refuses it unless it is one of {@code supported}. */
    int formatVersion(int... supported) {
        if (pos >= limit) {
            throw new MetadataFormatException(what.get() + ": empty value, expected a format version byte");
        }
        int v = buf[pos++] & 0xFF;
        for (int s : supported) {
            if (s == v) {
                return v;
            }
        }
        throw new MetadataFormatException(what.get() + ": unknown format version " + v + " (this reader supports "
                + java.util.Arrays.toString(supported) + ")");
    }

    private void need(int n, String field) {
        if (limit - pos < n) {
            throw new MetadataFormatException(what.get() + ": truncated reading " + field + " at byte " + pos
                    + ": needs " + n + " bytes, " + (limit - pos) + " remain");
        }
    }

    int u8(String field) {
        need(1, field);
        return buf[pos++] & 0xFF;
    }

    int i32(String field) {
        need(4, field);
        int v = ((buf[pos] & 0xFF) << 24) | ((buf[pos + 1] & 0xFF) << 16) | ((buf[pos + 2] & 0xFF) << 8)
                | (buf[pos + 3] & 0xFF);
        pos += 4;
        return v;
    }

    long i64(String field) {
        need(8, field);
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (buf[pos++] & 0xFF);
        }
        return v;
    }

    long unsigned(String field, int width) {
        need(width, field);
        long v = 0;
        for (int i = 0; i < width; i++) {
            v = (v << 8) | (buf[pos++] & 0xFF);
        }
        return v;
    }

    private long rawVarint(String field) {
        long v = 0;
        int start = pos;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos >= limit) {
                throw new MetadataFormatException(what.get() + ": truncated reading " + field + " at byte " + start
                        + ": varint not terminated");
            }
            byte b = buf[pos++];
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw new MetadataFormatException(what.get() + ": malformed " + field + " at byte " + start
                + ": varint longer than 10 bytes");
    }

    /** A non-negative long in unsigned LEB128. */
    long varint(String field) {
        int start = pos;
        long v = rawVarint(field);
        if (v < 0) {
            throw new MetadataFormatException(what.get() + ": malformed " + field + " at byte " + start
                    + ": varint exceeds Long.MAX_VALUE");
        }
        return v;
    }

    /** A varint that must be at most {@code max}, e.g. a count or a length. */
    int varintInt(String field, int max) {
        int start = pos;
        long v = varint(field);
        if (v > max) {
            throw new MetadataFormatException(what.get() + ": " + field + " at byte " + start + " is " + v
                    + ", more than the maximum " + max);
        }
        return (int) v;
    }

    /**
     * A varint count of items that take at least {@code minBytesEach} bytes each; a count the remaining bytes
     * cannot hold is refused as truncation before anything is allocated for it.
     */
    int count(String field, int minBytesEach) {
        int start = pos;
        long v = varint(field);
        long needs = v * minBytesEach;
        if (v > Integer.MAX_VALUE || needs > remaining()) {
            throw new MetadataFormatException(what.get() + ": truncated: " + field + " at byte " + start + " is " + v
                    + ", needing at least " + (v > Integer.MAX_VALUE ? "more" : Long.toString(needs))
                    + " bytes, " + remaining() + " remain");
        }
        return (int) v;
    }

    long zigzag(String field) {
        long z = rawVarint(field);
        return (z >>> 1) ^ -(z & 1);
    }

    String string(String field) {
        int len = varintInt(field + " length", Integer.MAX_VALUE);
        need(len, field);
        try {
            String s = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(buf, pos, len))
                    .toString();
            pos += len;
            return s;
        } catch (CharacterCodingException e) {
            throw new MetadataFormatException(what.get() + ": " + field + " at byte " + pos + " is not valid UTF-8", e);
        }
    }

    int position() {
        return pos;
    }

    int remaining() {
        return limit - pos;
    }

    /** Refuses bytes after the last field. */
    void expectEnd() {
        if (pos != limit) {
            throw new MetadataFormatException(what.get() + ": " + (limit - pos) + " trailing bytes after the last field"
                    + " at byte " + pos);
        }
    }

    /** Builds a value from decoded fields, turning invariant violations into format errors. */
    <T> T build(java.util.function.Supplier<T> constructor) {
        try {
            return constructor.get();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new MetadataFormatException(what.get() + ": stored fields violate the value's invariants: "
                    + e.getMessage(), e);
        }
    }

    MetadataFormatException invalid(String message) {
        return new MetadataFormatException(what.get() + ": " + message);
    }
}
