package io.nereus.metadata.codec;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Reads the primitive fields of the stored-value vocabulary (see {@code package-info}); every failure is a
 * {@link NereusException} with code {@link ErrorCode#METADATA_FORMAT} whose context names the value
 * ({@code value}), the failed check ({@code reason}, a static phrase) and, where they apply, the field
 * ({@code field}), the byte position ({@code position}) and the numbers the check compared.
 */
final class ValueReader {
    /** Strings longer than this are not remembered by {@link #lastString}. */
    private static final int LAST_STRING_MAX_BYTES = 256;

    /** A decoded string and its UTF-8 bytes; immutable, so any thread may read the one {@link #lastString} holds. */
    private record LastString(byte[] utf8, String value) {
    }

    /**
     * The string decoded last, by any reader: values decode the same few strings over and over (every stream head
     * names its writer), so a decode that finds the same bytes returns the same string without allocating.
     */
    private static volatile LastString lastString;

    /** What is being decoded, for the error context; built only when an error is raised. */
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
            throw error("empty value", "expected", "format version byte");
        }
        int v = buf[pos++] & 0xFF;
        for (int s : supported) {
            if (s == v) {
                return v;
            }
        }
        throw error("unknown format version", "version", v, "supported", Arrays.toString(supported));
    }

    private void need(int n, String field) {
        if (limit - pos < n) {
            throw error("truncated", "field", field, "position", pos, "needs", n, "remaining", limit - pos);
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
                throw error("truncated", "field", field, "position", start, "varint", "not terminated");
            }
            byte b = buf[pos++];
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw error("varint longer than 10 bytes", "field", field, "position", start);
    }

    /** A non-negative long in unsigned LEB128. */
    long varint(String field) {
        int start = pos;
        long v = rawVarint(field);
        if (v < 0) {
            throw error("varint exceeds Long.MAX_VALUE", "field", field, "position", start);
        }
        return v;
    }

    /** A varint that must be at most {@code max}, e.g. a count or a length. */
    int varintInt(String field, int max) {
        int start = pos;
        long v = varint(field);
        if (v > max) {
            throw error("more than the maximum", "field", field, "position", start, "found", v, "max", max);
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
        if (v > Integer.MAX_VALUE) {
            throw error("truncated", "field", field, "position", start, "count", v, "remaining", remaining());
        }
        if (needs > remaining()) {
            throw error("truncated", "field", field, "position", start, "count", v, "needs", needs,
                    "remaining", remaining());
        }
        return (int) v;
    }

    long zigzag(String field) {
        long z = rawVarint(field);
        return (z >>> 1) ^ -(z & 1);
    }

    String string(String field) {
        // a length under 128 is one varint byte: read it without building the field's name for the error context
        int len = pos < limit && buf[pos] >= 0 ? buf[pos++] : varintInt(field + " length", Integer.MAX_VALUE);
        need(len, field);
        LastString last = lastString;
        if (last != null && last.utf8.length == len && Arrays.equals(last.utf8, 0, len, buf, pos, pos + len)) {
            pos += len; // the same bytes as the string decoded last (a stream head's writer id, mostly): no decoding
            return last.value;
        }
        String s;
        if (ascii(buf, pos, len)) {
            s = new String(buf, pos, len, StandardCharsets.US_ASCII);
        } else {
            try {
                s = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(buf, pos, len))
                        .toString();
            } catch (CharacterCodingException e) {
                throw errorCausedBy(e, "not valid UTF-8", "field", field, "position", pos);
            }
        }
        if (len <= LAST_STRING_MAX_BYTES) {
            lastString = new LastString(Arrays.copyOfRange(buf, pos, pos + len), s);
        }
        pos += len;
        return s;
    }

    private static boolean ascii(byte[] b, int from, int len) {
        for (int i = from, end = from + len; i < end; i++) {
            if (b[i] < 0) {
                return false;
            }
        }
        return true;
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
            throw error("trailing bytes after the last field", "trailing", limit - pos, "position", pos);
        }
    }

    /** Builds a value from decoded fields, turning invariant violations into format errors. */
    <T> T build(java.util.function.Supplier<T> constructor) {
        try {
            return constructor.get();
        } catch (IllegalArgumentException | NullPointerException e) {
            throw errorCausedBy(e, "stored fields violate the value's invariants", "violation", e.getMessage());
        }
    }

    /** A failed check of the value's own layout: {@code reason} a static phrase, {@code more} its details. */
    NereusException invalid(String reason, Object... more) {
        return error(reason, more);
    }

    private NereusException error(String reason, Object... more) {
        return formatError(null, what.get(), reason, more);
    }

    private NereusException errorCausedBy(Throwable cause, String reason, Object... more) {
        return formatError(cause, what.get(), reason, more);
    }

    /**
     * The METADATA_FORMAT failure of decoding {@code value} (what was being decoded): context {@code value},
     * {@code reason}, then {@code more} (alternating keys and values).
     */
    static NereusException formatError(Throwable cause, String value, String reason, Object... more) {
        Map<String, Object> context = new LinkedHashMap<>();
        context.put("value", value);
        context.put("reason", reason);
        context.putAll(ErrorContext.of(more));
        return new NereusException(ErrorCode.METADATA_FORMAT, context, cause);
    }
}
