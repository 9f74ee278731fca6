package io.nereus.object;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import java.util.Objects;
import java.util.Optional;

/** The failures both object stores report, built in one place so their codes and context keys agree. */
final class ObjectErrors {
    private ObjectErrors() {
    }

    static NereusException exists(ObjectName name) {
        return new NereusException(ErrorCode.OBJECT_EXISTS, ErrorContext.of("name", name));
    }

    static NereusException exists(ObjectName name, String conflict) {
        return new NereusException(ErrorCode.OBJECT_EXISTS, ErrorContext.of("name", name, "conflict", conflict));
    }

    static NereusException missing(ObjectName name) {
        return new NereusException(ErrorCode.TARGET_MISSING, ErrorContext.of("name", name));
    }

    static NereusException range(ObjectName name, ByteRange range) {
        return new NereusException(ErrorCode.RANGE_NOT_SATISFIABLE,
                ErrorContext.of("name", name, "offset", range.offset(), "length", range.length()));
    }

    static NereusException closed(String store) {
        return new NereusException(ErrorCode.CLOSED, ErrorContext.of("objectStore", store));
    }

    /** What is wrong with the arguments of a get, if anything (the first check every store makes). */
    static Optional<RuntimeException> badGet(ObjectName name, ByteRange range) {
        if (name == null || range == null) {
            return Optional.of(new NullPointerException(name == null ? "name" : "range"));
        }
        if (range.length() > ObjectStore.MAX_GET_LENGTH) {
            return Optional.of(new IllegalArgumentException("a get returns at most " + ObjectStore.MAX_GET_LENGTH
                    + " bytes, asked for " + range.length()));
        }
        return Optional.empty();
    }

    static Optional<RuntimeException> badPut(ObjectName name, ObjectContent content) {
        if (name == null || content == null) {
            return Optional.of(new NullPointerException(name == null ? "name" : "content"));
        }
        return Optional.empty();
    }

    static Optional<RuntimeException> badName(ObjectName name) {
        return name == null ? Optional.of(new NullPointerException("name")) : Optional.empty();
    }

    static Optional<RuntimeException> badPrefix(String prefix) {
        if (prefix == null) {
            return Optional.of(new NullPointerException("prefix"));
        }
        if (!ObjectName.isValidPrefix(prefix)) {
            return Optional.of(new IllegalArgumentException("no valid object name starts with '" + prefix + "'"));
        }
        return Optional.empty();
    }

    static String describe(Throwable t) {
        return Objects.requireNonNullElse(t.getMessage(), t.getClass().getSimpleName());
    }
}
