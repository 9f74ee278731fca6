package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.FDBException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TransactionFuturesTest {

    @Test
    void aBurstOfResults_isHandedOutOnTheExecutor_inDeliveryOrder_withFewTasks() throws Exception {
        AtomicInteger tasks = new AtomicInteger();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            TransactionFutures futures = new TransactionFutures(r -> {
                tasks.incrementAndGet();
                pool.execute(r);
            });
            CompletableFuture<Void> gate = new CompletableFuture<>();
            pool.execute(gate::join); // hold the executor while the burst is delivered
            List<Integer> seen = new ArrayList<>();
            List<CompletableFuture<Void>> done = new ArrayList<>();
            Thread caller = Thread.currentThread();
            for (int i = 0; i < 1_000; i++) {
                int n = i;
                done.add(futures.deliver(n, null).thenAccept(v -> {
                    assertThat(Thread.currentThread()).isNotSameAs(caller);
                    seen.add(v);
                }));
            }
            gate.complete(null);
            CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
            assertThat(seen).hasSize(1_000).isSorted();
            assertThat(tasks.get()).as("one hand-off for the whole burst").isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aCallbackBlockingOnALaterResult_doesNotHoldItBack() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        try {
            // drains wait for the gate, so the callback below is attached before the first result is delivered
            TransactionFutures futures = new TransactionFutures(r -> pool.execute(() -> {
                gate.join();
                r.run();
            }));
            CompletableFuture<String> later = new CompletableFuture<>();
            CompletableFuture<String> first = futures.<String>deliver("first", null).thenApply(v -> {
                try {
                    return v + "+" + later.get(10, TimeUnit.SECONDS); // blocks its drain task, never for ever
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            gate.complete(null);
            Thread.sleep(50); // the first drain runs and blocks in its callback
            futures.<String>deliver("second", null).thenAccept(later::complete);
            assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("first+second");
        } finally {
            gate.complete(null);
            pool.shutdownNow();
        }
    }

    @Test
    void aRejectingExecutor_failsTheResultWithOperationFailed1000() {
        TransactionFutures futures = new TransactionFutures(r -> {
            throw new RejectedExecutionException("shut down");
        });
        assertThatThrownBy(() -> futures.deliver("x", null).join()).cause().isInstanceOfSatisfying(FDBException.class,
                e -> {
                    assertThat(e.getCode()).isEqualTo(1000);
                    assertThat(e.getMessage()).contains("rejected");
                });
        assertThatThrownBy(() -> futures.deliver("y", null).join()).cause().isInstanceOf(FDBException.class);
    }
}
