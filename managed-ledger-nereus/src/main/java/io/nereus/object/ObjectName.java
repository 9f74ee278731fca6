package io.nereus.object;

import java.util.Objects;
import java.util.Optional;

/**
 * The name of an object, the same in every {@link ObjectStore}: the filesystem store keeps it as a relative path
 * under its directory, the S3 store as a key under its prefix.
 *
 * <p>A name is 1 to {@value #MAX_LENGTH} characters of lowercase ASCII letters, digits, {@code -}, {@code _},
 * {@code .} and {@code /}. {@code /} separates segments: no leading or trailing {@code /}, no empty segment, each
 * segment at most {@value #MAX_SEGMENT_LENGTH} characters and not starting with {@code .} (so no {@code .} or
 * {@code ..}, and stores keep their own files under dot names that no object can have). Lowercase only, so a name
 * means the same file on a case-insensitive filesystem as in S3. The limits keep the S3 key (prefix, {@code /},
 * name) within S3's 1024 bytes and every segment within a filesystem's 255-byte file names.
 *
 * <p>Names order by their text ({@link String#compareTo}), which is S3's listing order for these characters.
 */
public record ObjectName(String value) implements Comparable<ObjectName> {
    public static final int MAX_LENGTH = 512;
    public static final int MAX_SEGMENT_LENGTH = 255;

    public ObjectName {
        Objects.requireNonNull(value, "value");
        Optional<String> problem = problem(value);
        if (problem.isPresent()) {
            throw new IllegalArgumentException("invalid object name '" + printable(value) + "': " + problem.get());
        }
    }

    public static ObjectName of(String value) {
        return new ObjectName(value);
    }

    public static boolean isValid(String value) {
        return value != null && problem(value).isEmpty();
    }

    /**
     * True when some valid name starts with {@code prefix} (the empty prefix, {@code "streams/"}, {@code "str"},
     * a whole name), so that listing by it can find objects; {@code "/a"}, {@code "a//"} or {@code "a/."} cannot.
     */
    public static boolean isValidPrefix(String prefix) {
        return prefix != null && (prefix.isEmpty() || isValid(prefix) || isValid(prefix + "a"));
    }

    /** Why {@code value} is not a valid name, or empty when it is one. */
    static Optional<String> problem(String value) {
        if (value.isEmpty()) {
            return Optional.of("empty");
        }
        if (value.length() > MAX_LENGTH) {
            return Optional.of("longer than " + MAX_LENGTH + " characters");
        }
        int segmentStart = 0;
        for (int i = 0; i <= value.length(); i++) {
            char c = i < value.length() ? value.charAt(i) : '/';
            if (c == '/') {
                int length = i - segmentStart;
                if (length == 0) {
                    return Optional.of(i == 0 ? "starts with '/'" : i == value.length() ? "ends with '/'"
                            : "has an empty segment ('//')");
                }
                if (length > MAX_SEGMENT_LENGTH) {
                    return Optional.of("a segment is longer than " + MAX_SEGMENT_LENGTH + " characters");
                }
                if (value.charAt(segmentStart) == '.') {
                    return Optional.of("a segment starts with '.'");
                }
                segmentStart = i + 1;
            } else if (!allowed(c)) {
                return Optional.of("character '" + printable(String.valueOf(c))
                        + "' is not one of a-z 0-9 - _ . /");
            }
        }
        return Optional.empty();
    }

    public boolean startsWith(String prefix) {
        return value.startsWith(prefix);
    }

    @Override
    public int compareTo(ObjectName other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }

    private static boolean allowed(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    }

    private static String printable(String s) {
        StringBuilder b = new StringBuilder();
        int shown = Math.min(s.length(), 80);
        for (int i = 0; i < shown; i++) {
            char c = s.charAt(i);
            b.append(c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\u%04x", (int) c));
        }
        return shown < s.length() ? b + "..." : b.toString();
    }
}
