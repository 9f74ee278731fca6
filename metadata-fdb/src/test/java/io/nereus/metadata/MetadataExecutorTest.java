package io.nereus.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MetadataExecutorTest {
    private final List<MetadataExecutor> executors = new ArrayList<>();

    private MetadataExecutor executor(int threads, String name) {
        MetadataExecutor e = MetadataExecutor.create(threads, name);
        executors.add(e);
        return e;
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        for (MetadataExecutor e : executors) {
            e.shutdown();
            assertThat(e.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void aTaskSubmittedFromAPoolThread_runsOnThatThreadOnceTheSubmitterReturns() throws Exception {
        MetadataExecutor executor = executor(2, "test-metadata");
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<String> followUpThread = new CompletableFuture<>();
        CompletableFuture<String> submitterThread = new CompletableFuture<>();
        executor.execute(() -> {
            submitterThread.complete(Thread.currentThread().getName());
            executor.execute(() -> {
                order.add("follow-up");
                followUpThread.complete(Thread.currentThread().getName());
            });
            order.add("submitter returns");
        });
        assertThat(followUpThread.get(10, TimeUnit.SECONDS)).isEqualTo(submitterThread.get())
                .startsWith("test-metadata-");
        assertThat(order).containsExactly("submitter returns", "follow-up");
    }

    @Test
    void aTaskSubmittedFromElsewhere_runsOnAPoolThread() throws Exception {
        MetadataExecutor executor = executor(1, "test-metadata");
        CompletableFuture<String> ran = new CompletableFuture<>();
        assertThat(MetadataExecutor.isPoolThread()).isFalse();
        executor.execute(() -> ran.complete(Thread.currentThread().getName() + " " + MetadataExecutor.isPoolThread()));
        assertThat(ran.get(10, TimeUnit.SECONDS)).isEqualTo("test-metadata-1 true");
    }

    @Test
    void anotherExecutorsPoolThread_submitsToThePool() throws Exception {
        MetadataExecutor first = executor(1, "first");
        MetadataExecutor second = executor(1, "second");
        CompletableFuture<String> ran = new CompletableFuture<>();
        first.execute(() -> second.execute(() -> ran.complete(Thread.currentThread().getName())));
        assertThat(ran.get(10, TimeUnit.SECONDS)).isEqualTo("second-1");
    }

    @Test
    void aFailingTask_isLoggedAndTheFollowUpsAfterItStillRun() throws Exception {
        MetadataExecutor executor = executor(1, "test-metadata");
        CountDownLatch ran = new CountDownLatch(2);
        executor.execute(() -> {
            executor.execute(() -> {
                throw new IllegalStateException("a failing callback");
            });
            executor.execute(ran::countDown);
            ran.countDown();
        });
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aLongChainOfFollowUps_givesThePoolsQueueATurnAfterTheLimit() throws Exception {
        MetadataExecutor executor = executor(1, "test-metadata");
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch outsideQueued = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        int followUps = MetadataExecutor.FOLLOW_UP_LIMIT * 2;
        CountDownLatch all = new CountDownLatch(followUps + 2);
        executor.execute(() -> {
            started.countDown();
            await(outsideQueued);
            order.add("first");
            all.countDown();
            for (int i = 1; i <= followUps; i++) {
                String name = "follow-up " + i;
                executor.execute(() -> {
                    order.add(name);
                    all.countDown();
                });
            }
        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        executor.execute(() -> {
            order.add("outside");
            all.countDown();
        });
        outsideQueued.countDown();
        assertThat(all.await(10, TimeUnit.SECONDS)).isTrue();
        // the first task and FOLLOW_UP_LIMIT - 1 follow-ups, then the task queued from outside, then the rest
        assertThat(order.indexOf("outside")).isEqualTo(MetadataExecutor.FOLLOW_UP_LIMIT);
        assertThat(order).hasSize(followUps + 2).endsWith("follow-up " + followUps);
    }

    @Test
    void followUpsSubmittedAfterShutdown_stillRun() throws Exception {
        MetadataExecutor executor = executor(1, "test-metadata");
        CountDownLatch shutDown = new CountDownLatch(1);
        CompletableFuture<Boolean> followUp = new CompletableFuture<>();
        executor.execute(() -> {
            await(shutDown);
            executor.execute(() -> followUp.complete(true));
        });
        executor.shutdown();
        shutDown.countDown();
        assertThat(followUp.get(10, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> executor.execute(() -> { }))
                .isInstanceOf(java.util.concurrent.RejectedExecutionException.class);
    }

    @Test
    void zeroThreads_isRefusedNamingTheCount() {
        assertThatThrownBy(() -> MetadataExecutor.create(0, "none")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1: 0");
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("latch not released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
