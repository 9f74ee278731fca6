package io.nereus.stream;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The one exception of the storage engine: an {@link ErrorCode}, a static message and key/value context
 * (stream, offset, slice ...). Unchecked; delivered as the cause of a failed future.
 */
public final class NereusException extends RuntimeException {
    private final ErrorCode code;
    private final transient Map<String, Object> context;

    public NereusException(ErrorCode code, Map<String, ?> context, Throwable cause) {
        super(code.message() + (context.isEmpty() ? "" : " " + context), cause);
        this.code = Objects.requireNonNull(code, "code");
        this.context = new LinkedHashMap<>(context);
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

    public Map<String, Object> context() {
        return Map.copyOf(context);
    }
}
