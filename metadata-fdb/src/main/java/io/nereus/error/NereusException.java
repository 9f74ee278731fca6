package io.nereus.error;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The one exception of Nereus, from the metadata layer up to the facade: an {@link ErrorCode}, the code's static
 * message and key/value context (stream, offset, slice, epoch, reason ...) in the order it was given. Unchecked;
 * delivered as the cause of a failed future, never thrown across an I/O call. The code says what went wrong and
 * whether the same call may succeed if retried ({@link #retriable()}); callers branch on the code and, where the
 * code documents it, on typed context values, never on the message.
 */
public final class NereusException extends RuntimeException {
    private final ErrorCode code;
    private final transient Map<String, Object> context;

    public NereusException(ErrorCode code, Map<String, ?> context, Throwable cause) {
        super(Objects.requireNonNull(code, "code").message() + (context.isEmpty() ? "" : " " + context), cause);
        this.code = code;
        this.context = Collections.unmodifiableMap(new LinkedHashMap<>(context));
    }

    public NereusException(ErrorCode code, Map<String, ?> context) {
        this(code, context, null);
    }

    public ErrorCode code() {
        return code;
    }

    public boolean retriable() {
        return code.retriable();
    }

    /** The context, in the order it was given; unmodifiable. */
    public Map<String, Object> context() {
        return context;
    }
}
