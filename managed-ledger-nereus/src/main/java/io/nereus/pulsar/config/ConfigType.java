package io.nereus.pulsar.config;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The type of one Nereus broker setting: its name as documented in {@code conf/nereus.conf} and how a
 * non-empty broker.conf value (already trimmed) becomes a Java value.
 *
 * @param name     the documented type name ({@code int}, {@code long}, {@code string}, {@code path})
 * @param expected what a parsable value looks like, for error messages
 * @param parser   turns the text into a value; throws {@link RuntimeException} when it cannot
 * @param <T>      the Java type
 */
public record ConfigType<T>(String name, String expected, Function<String, T> parser) {
    public static final ConfigType<Integer> INT =
            new ConfigType<>("int", "a whole number from -2147483648 to 2147483647", Integer::valueOf);
    public static final ConfigType<Long> LONG =
            new ConfigType<>("long", "a whole number from -9223372036854775808 to 9223372036854775807", Long::valueOf);
    public static final ConfigType<String> STRING = new ConfigType<>("string", "text", Function.identity());
    public static final ConfigType<Path> PATH = new ConfigType<>("path", "a file system path", Path::of);
    /** A path that may be absent: the default of such a key is {@link Optional#empty()}. */
    public static final ConfigType<Optional<Path>> OPTIONAL_PATH =
            new ConfigType<>("path", "a file system path", s -> Optional.of(Path.of(s)));

    public ConfigType {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(expected, "expected");
        Objects.requireNonNull(parser, "parser");
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
