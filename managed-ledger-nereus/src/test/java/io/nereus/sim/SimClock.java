package io.nereus.sim;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The simulation's time: it starts at a fixed instant and moves only when the simulation moves it (its
 * {@link SimLoop} when it runs a timer, or a step that lets time pass). Confined to the simulation's thread.
 */
final class SimClock extends Clock {
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private long nanos;

    /** Nanoseconds since the start. */
    long nanos() {
        return nanos;
    }

    void advanceTo(long at) {
        if (at < nanos) {
            throw new IllegalArgumentException("time only moves forward: " + at + " < " + nanos);
        }
        nanos = at;
    }

    void advance(Duration d) {
        advanceTo(nanos + d.toNanos());
    }

    @Override
    public Instant instant() {
        return START.plusNanos(nanos);
    }

    @Override
    public long millis() {
        return START.toEpochMilli() + nanos / 1_000_000;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the simulation's clock is UTC");
    }
}
