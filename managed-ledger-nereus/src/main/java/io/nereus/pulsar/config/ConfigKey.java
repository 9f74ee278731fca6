package io.nereus.pulsar.config;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.pulsar.broker.ServiceConfiguration;

/**
 * One row of the Nereus settings table (see {@link NereusConfig#keys()}): a broker.conf key, its type, its
 * default, what values it allows and what it means. {@code conf/nereus.conf} and the README document every
 * row in the same words; a test keeps them in step.
 *
 * <p>An absent or empty value means the default, which may come from the broker's own settings (for
 * example the WAL quorums follow {@code managedLedgerDefault*}). A present value that does not parse, or
 * any value that fails {@link #valid()}, is refused with {@code key=value: must be <allowed>}.
 *
 * @param name         the broker.conf key, {@code nereus} + CamelCase
 * @param type         how its text is parsed
 * @param defaultValue the value used when the key is absent or empty, from the broker's configuration
 * @param defaultDoc   the default as documented ({@code empty} when there is none)
 * @param allowed      the allowed values as documented, completing "must be ..."
 * @param valid        the check of a parsed or default value against {@code allowed} (checks across keys
 *                     are made by {@link NereusConfig#from})
 * @param doc          what the setting means
 * @param <T>          the value's Java type
 */
public record ConfigKey<T>(String name, ConfigType<T> type, Function<ServiceConfiguration, T> defaultValue,
        String defaultDoc, String allowed, Predicate<T> valid, String doc) {

    /** Prefix of every Nereus key; any other broker.conf key with it is refused as unknown. */
    public static final String PREFIX = "nereus";
    /** What messages show instead of a secret value. */
    static final String HIDDEN = "(hidden)";

    public ConfigKey {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(defaultValue, "defaultValue");
        Objects.requireNonNull(defaultDoc, "defaultDoc");
        Objects.requireNonNull(allowed, "allowed");
        Objects.requireNonNull(valid, "valid");
        Objects.requireNonNull(doc, "doc");
        if (!name.startsWith(PREFIX) || name.length() == PREFIX.length()
                || !Character.isUpperCase(name.charAt(PREFIX.length()))) {
            throw new IllegalArgumentException("a Nereus key must be nereus + CamelCase: " + name);
        }
    }

    /**
     * This key's setting: the trimmed raw text if present and non-empty, else the default.
     *
     * @throws IllegalArgumentException naming the key, the value and what is allowed, if the text does not
     *         parse or the value is not allowed
     */
    Setting<T> resolve(Optional<String> raw, ServiceConfiguration conf) {
        Optional<String> text = raw.map(String::trim).filter(s -> !s.isEmpty());
        T value;
        if (text.isPresent()) {
            value = type.parse(text.get()).orElseThrow(() -> new IllegalArgumentException(
                    name + "=" + shown(text.get()) + ": must be " + (allowed.equals(type.expected()) ? allowed
                            : type.expected() + ", " + allowed)));
        } else {
            value = defaultValue.apply(conf);
        }
        Setting<T> setting = new Setting<>(this, value, text);
        if (value == null || !valid.test(value)) {
            throw setting.invalid(allowed);
        }
        return setting;
    }

    /** {@code text} as messages show this key's value: {@value #HIDDEN} for a secret. */
    String shown(String text) {
        return type.secret() && !text.isEmpty() ? HIDDEN : text;
    }

    /**
     * A resolved setting.
     *
     * @param key   its key
     * @param value its value (parsed or default); null only for a default the broker does not set
     * @param raw   the text it was parsed from, empty if it is the default
     */
    record Setting<T>(ConfigKey<T> key, T value, Optional<String> raw) {
        /** {@code key=value}, with the default's origin when the value was not set. */
        String describe() {
            String shown = value instanceof Optional<?> o ? o.map(String::valueOf).orElse("")
                    : value == null ? "" : String.valueOf(value);
            return raw.map(r -> key.name() + "=" + key.shown(r))
                    .orElseGet(() -> key.name() + "=" + key.shown(shown) + " (default: " + key.defaultDoc() + ")");
        }

        /** True when the value is the key's default (set to it, or not set). */
        boolean isDefault(ServiceConfiguration conf) {
            return Objects.equals(value, key.defaultValue().apply(conf));
        }

        IllegalArgumentException invalid(String requirement) {
            return new IllegalArgumentException(describe() + ": must be " + requirement);
        }
    }
}
