package io.nereus.generation;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the garbage collector ({@link Collector}); immutable and validated.
 *
 * @param interval          pause between the collector's passes
 * @param walDeleteGrace    how long a WAL slice stays COLLECTING (no record targets it any more) before its ledger is
 *                          deleted, so that reads resolved before still find it
 * @param objectDeleteGrace how long an object that only RETIRED records name, or that no record names, is kept
 *                          before it is deleted; an object not published within half of it never is (see
 *                          {@link Materializer})
 */
public record CollectorConfig(Duration interval, Duration walDeleteGrace, Duration objectDeleteGrace) {
    public CollectorConfig {
        Objects.requireNonNull(interval, "interval");
        Objects.requireNonNull(walDeleteGrace, "walDeleteGrace");
        Objects.requireNonNull(objectDeleteGrace, "objectDeleteGrace");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("collector interval must be > 0: " + interval);
        }
        if (walDeleteGrace.isNegative()) {
            throw new IllegalArgumentException("WAL delete grace must be >= 0: " + walDeleteGrace);
        }
        if (objectDeleteGrace.compareTo(Duration.ofSeconds(2)) < 0) {
            throw new IllegalArgumentException("object delete grace must be >= 2 s: " + objectDeleteGrace);
        }
    }

    /** Defaults: a pass every 60 s, WAL ledgers deleted 60 s after they leave service, objects after 10 minutes. */
    public static CollectorConfig defaults() {
        return new CollectorConfig(Duration.ofSeconds(60), Duration.ofSeconds(60), Duration.ofMinutes(10));
    }

    /** Longest time the materializer may take from writing an object to publishing it: half the object grace. */
    public Duration maxPublishDelay() {
        return objectDeleteGrace.dividedBy(2);
    }
}
