package io.nereus.fdb.conformance;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock that follows the system clock plus an offset that tests can move forward.
 *
 * <p>EmbeddedFdb derives its versions from {@link Clock#instant()}, so {@link #advance(Duration)} makes fake time
 * pass (for example past the 5 s MVCC window) without sleeping. Following real time otherwise keeps the engine's
 * versions advancing the way a real cluster's do. Thread-safe.
 */
final class MutableClock extends Clock {
    private final Clock base;
    private final AtomicReference<Duration> offset = new AtomicReference<>(Duration.ZERO);

    MutableClock(Clock base) {
        this.base = base;
    }

    MutableClock() {
        this(Clock.systemUTC());
    }

    /** Moves this clock forward by {@code amount}; never backwards. */
    void advance(Duration amount) {
        if (amount.isNegative()) {
            throw new IllegalArgumentException("a clock only moves forward: " + amount);
        }
        offset.accumulateAndGet(amount, Duration::plus);
    }

    @Override
    public Instant instant() {
        return base.instant().plus(offset.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        if (zone.equals(getZone())) {
            return this;
        }
        throw new UnsupportedOperationException("MutableClock is always UTC");
    }
}
