package io.nereus.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What a broker runs on ({@link EngineRuntime#THREADS}): daemon threads named as asked, random unique ids. */
class EngineRuntimeTest {
    @Test
    void executor_runsOnADaemonThreadOfItsName_refusesAfterShutdown() throws Exception {
        ExecutorService e = EngineRuntime.THREADS.executor("nereus-test-executor");
        try {
            CompletableFuture<Thread> ran = new CompletableFuture<>();
            e.execute(() -> ran.complete(Thread.currentThread()));
            Thread t = ran.get(5, TimeUnit.SECONDS);
            assertThat(t.getName()).isEqualTo("nereus-test-executor");
            assertThat(t.isDaemon()).isTrue();
        } finally {
            e.shutdown();
        }
        assertThatThrownBy(() -> e.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
    }

    @Test
    void scheduler_runsDelayedTasksOnADaemonThreadOfItsName() throws Exception {
        ScheduledExecutorService s = EngineRuntime.THREADS.scheduler("nereus-test-timer");
        try {
            CompletableFuture<Thread> ran = new CompletableFuture<>();
            s.schedule(() -> ran.complete(Thread.currentThread()), 1, TimeUnit.MILLISECONDS);
            Thread t = ran.get(5, TimeUnit.SECONDS);
            assertThat(t.getName()).isEqualTo("nereus-test-timer");
            assertThat(t.isDaemon()).isTrue();
        } finally {
            s.shutdownNow();
        }
    }

    @Test
    void uniqueId_is32HexDigits_neverTheSame() {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            String id = EngineRuntime.THREADS.uniqueId();
            assertThat(id).matches("[0-9a-f]{32}");
            ids.add(id);
        }
        assertThat(ids).hasSize(1000);
    }
}
