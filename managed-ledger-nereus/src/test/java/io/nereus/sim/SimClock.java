package io.nereus.sim;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** The simulation's time: it starts at a fixed instant and moves only when the simulation moves it. */
final class SimClock extends Clock {
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private final AtomicLong nanos = new AtomicLong();

    void advance(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("time only moves forward: " + d);
        }
        nanos.addAndGet(d.toNanos());
    }

    @Override
    public Instant instant() {
        return START.plusNanos(nanos.get());
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
