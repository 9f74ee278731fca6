package io.nereus.generation;

import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Spreads a background worker's bytes over time at a fixed rate: {@link #acquire} of n bytes completes once the
 * bytes acquired so far fit, at {@code bytesPerSecond}, into the time since the worker started using it, with at most
 * {@code burstMillis} of unused time carried forward (a worker idle for a minute does not then run a minute at full
 * speed). The materializer acquires every byte it reads from the WAL and every byte it writes to the object store,
 * so neither its bookie reads nor its object writes crowd out appends.
 *
 * <p>Owner: one thread (the materializer's); completions run on {@code exec}.
 */
final class BandwidthPacer {
    private final long bytesPerSecond;
    private final long burstMillis;
    private final Clock clock;
    private final ScheduledExecutorService exec;
    /** The time at which everything acquired so far is within the rate; owner thread only. */
    private long dueMillis = Long.MIN_VALUE;

    BandwidthPacer(long bytesPerSecond, long burstMillis, Clock clock, ScheduledExecutorService exec) {
        if (bytesPerSecond < 1) {
            throw new IllegalArgumentException("bytes per second must be >= 1: " + bytesPerSecond);
        }
        if (burstMillis < 0) {
            throw new IllegalArgumentException("burst must be >= 0 ms: " + burstMillis);
        }
        this.bytesPerSecond = bytesPerSecond;
        this.burstMillis = burstMillis;
        this.clock = clock;
        this.exec = exec;
    }

    /** Completes, on the executor when it has to wait, once {@code bytes} more are within the rate. */
    CompletableFuture<Void> acquire(long bytes) {
        if (bytes < 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("bytes must be >= 0: " + bytes));
        }
        long now = clock.millis();
        long costMillis = (long) Math.ceil(bytes * 1000.0 / bytesPerSecond);
        dueMillis = Math.max(dueMillis, now - burstMillis) + costMillis;
        long wait = dueMillis - now;
        if (wait <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        exec.schedule(() -> f.complete(null), wait, TimeUnit.MILLISECONDS);
        return f;
    }
}
