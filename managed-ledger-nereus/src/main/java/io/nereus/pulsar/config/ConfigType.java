package io.nereus.pulsar.config;

import java.net.URI;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The type of one Nereus broker setting: its name as documented in {@code conf/nereus.conf} and how a
 * non-empty broker.conf value (already trimmed) becomes a Java value.
 *
 * @param name     the documented type name ({@code int}, {@code long}, {@code string}, {@code path},
 *                 {@code boolean}, {@code url})
 * @param expected what a parsable value looks like, for error messages
 * @param parser   turns the text into a value; throws {@link RuntimeException} when it cannot
 * @param secret   the value is a secret: messages about the setting never show it
 * @param <T>      the Java type
 */
public record ConfigType<T>(String name, String expected, Function<String, T> parser, boolean secret) {
    public static final ConfigType<Integer> INT =
            new ConfigType<>("int", "a whole number from -2147483648 to 2147483647", Integer::valueOf);
    public static final ConfigType<Long> LONG =
            new ConfigType<>("long", "a whole number from -9223372036854775808 to 9223372036854775807", Long::valueOf);
    public static final ConfigType<String> STRING = new ConfigType<>("string", "text", Function.identity());
    public static final ConfigType<Path> PATH = new ConfigType<>("path", "a file system path", Path::of);
    /** A path that may be absent: the default of such a key is {@link Optional#empty()}. */
    public static final ConfigType<Optional<Path>> OPTIONAL_PATH =
            new ConfigType<>("path", "a file system path", s -> Optional.of(Path.of(s)));
    /** Text that may be absent: the default of such a key is {@link Optional#empty()}. */
    public static final ConfigType<Optional<String>> OPTIONAL_STRING =
            new ConfigType<>("string", "text", Optional::of);
    /** Like {@link #OPTIONAL_STRING}, for a secret (a password, a secret key) that messages never show. */
    public static final ConfigType<Optional<String>> SECRET =
            new ConfigType<>("string", "text", Optional::of, true);
    /** {@code true} or {@code false}, in any case; anything else is refused (not read as false). */
    public static final ConfigType<Boolean> BOOLEAN = new ConfigType<>("boolean", "true or false",
            ConfigType::parseBoolean);
    /** A URL that may be absent. */
    public static final ConfigType<Optional<URI>> OPTIONAL_URL =
            new ConfigType<>("url", "a URL", s -> Optional.of(URI.create(s)));

    public ConfigType {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(expected, "expected");
        Objects.requireNonNull(parser, "parser");
    }

    /** A type whose values may be shown in messages. */
    public ConfigType(String name, String expected, Function<String, T> parser) {
        this(name, expected, parser, false);
    }

    private static Boolean parseBoolean(String text) {
        if (text.equalsIgnoreCase("true")) {
            return true;
        }
        if (text.equalsIgnoreCase("false")) {
            return false;
        }
        throw new IllegalArgumentException("not a boolean: " + text);
    }

    /** The value of {@code text}, or empty when it cannot be parsed. */
    Optional<T> parse(String text) {
        try {
            return Optional.of(Objects.requireNonNull(parser.apply(text)));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }
}
