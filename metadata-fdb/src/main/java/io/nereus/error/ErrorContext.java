package io.nereus.error;

import java.util.LinkedHashMap;
import java.util.Map;

/** Builds the context of a {@link NereusException} from alternating keys and values, keeping their order. */
public final class ErrorContext {
    private ErrorContext() {
    }

    /**
     * {@code of("stream", s, "offset", 5)} as a new, modifiable map: keys are non-null strings, each used once;
     * values may be null (an error report must not fail on a missing detail).
     */
    public static Map<String, Object> of(Object... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("context needs key/value pairs, got " + keysAndValues.length + " items");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            if (!(keysAndValues[i] instanceof String key)) {
                throw new IllegalArgumentException("context key #" + i / 2 + " is not a string: " + keysAndValues[i]);
            }
            if (m.containsKey(key)) {
                throw new IllegalArgumentException("context key '" + key + "' given twice");
            }
            m.put(key, keysAndValues[i + 1]);
        }
        return m;
    }
}
