package io.nereus.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The system clock plus an offset that tests move forward, to let fake time pass without sleeping. It reads the wall
 * clock once, at creation, and moves on from there by {@link System#nanoTime}, so it never steps back when the
 * machine's wall clock is adjusted: a test that advances it by exactly a grace period must find that period passed.
 * Thread-safe.
 */
public final class MutableClock extends Clock {
    private final Instant start = Clock.systemUTC().instant();
    private final long startNanos = System.nanoTime();
    private final AtomicReference<Duration> offset = new AtomicReference<>(Duration.ZERO);

    /** Moves this clock forward by {@code amount}; never backwards. */
    public void advance(Duration amount) {
        if (amount.isNegative()) {
            throw new IllegalArgumentException("a clock only moves forward: " + amount);
        }
        offset.accumulateAndGet(amount, Duration::plus);
    }

    @Override
    public Instant instant() {
        return start.plusNanos(System.nanoTime() - startNanos).plus(offset.get());
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
