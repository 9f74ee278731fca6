package io.nereus.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BandwidthPacerTest {
    private final ScheduledExecutorService exec = Executors.newSingleThreadScheduledExecutor();
    /** A clock that moves only when told, so what is due does not depend on how fast the test runs. */
    private final AtomicLong millis = new AtomicLong(1_000_000);
    private final Clock clock = new Clock() {
        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis.get());
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    };

    @AfterEach
    void stop() {
        exec.shutdownNow();
    }

    @Test
    void bytesWithinTheRateAndBurst_goAtOnce_moreWaitForTheirTime() {
        BandwidthPacer pacer = new BandwidthPacer(1_000, 1_000, clock, exec);

        assertThat(pacer.acquire(1_000)).isDone(); // one second's worth: the burst carried forward
        assertThat(pacer.acquire(60_000)).isNotDone(); // due a minute from now

        millis.addAndGet(61_000);
        assertThat(pacer.acquire(0)).isDone();
        assertThat(pacer.acquire(500)).isDone(); // within the second of burst the minute left over
        assertThat(pacer.acquire(60_000)).isNotDone();
    }

    @Test
    void idleTime_carriesForwardAtMostTheBurst() {
        BandwidthPacer pacer = new BandwidthPacer(1_000, 1_000, clock, exec);
        assertThat(pacer.acquire(1_000)).isDone();

        millis.addAndGet(600_000);
        assertThat(pacer.acquire(1_000)).isDone();
        assertThat(pacer.acquire(1_000)).isNotDone(); // ten idle minutes bought one second of burst, not six hundred
    }

    @Test
    void aWait_endsOnTheExecutor() throws Exception {
        BandwidthPacer pacer = new BandwidthPacer(1_000, 0, clock, exec);
        CompletableFuture<Void> waiting = pacer.acquire(100); // 100 ms
        waiting.get(10, TimeUnit.SECONDS);
        assertThat(waiting).isCompleted();
    }

    @Test
    void badArguments_areRefusedByName() {
        assertThatThrownBy(() -> new BandwidthPacer(0, 0, clock, exec)).hasMessageContaining("bytes per second");
        assertThatThrownBy(() -> new BandwidthPacer(1, -1, clock, exec)).hasMessageContaining("burst");
        assertThat(new BandwidthPacer(1, 0, clock, exec).acquire(-1)).isCompletedExceptionally();
    }
}
