package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurableLogGroupCommitTest {
    private static final int THREADS = 8;
    private static final int PER_THREAD = 250;

    @TempDir
    Path dir;

    @Test
    void concurrentCommittersShareFsyncs() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        ReentrantLock commitLock = new ReentrantLock(); // the engine's commit critical section
        long[] version = {0};
        CountDownLatch everyoneQueued = new CountDownLatch(THREADS);
        AtomicBoolean firstBatch = new AtomicBoolean(true);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            // hold the first batch until every committer has queued a record, so batching is certain, not likely
            log.testHook = point -> {
                if (point.equals("before-write") && firstBatch.getAndSet(false)) {
                    try {
                        assertThat(everyoneQueued.await(30, TimeUnit.SECONDS)).isTrue();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                workers.add(pool.submit(() -> {
                    Random random = new Random(thread);
                    for (int i = 0; i < PER_THREAD; i++) {
                        CompletableFuture<Void> durable;
                        commitLock.lock();
                        try {
                            LogRecord r = DurableLogTestModel.randomRecord(random, ++version[0], 50, 100);
                            model.apply(r);
                            durable = log.append(r);
                        } finally {
                            commitLock.unlock();
                        }
                        if (i == 0) {
                            everyoneQueued.countDown();
                        }
                        durable.get(30, TimeUnit.SECONDS); // like a client waiting for its commit
                    }
                    return null;
                }));
            }
            for (Future<?> w : workers) {
                w.get(60, TimeUnit.SECONDS);
            }
            int records = THREADS * PER_THREAD;
            // the committers' first records all went into the first two batches (the second one queued while the
            // first was held), so at least THREADS records shared two fsyncs
            assertThat(log.fsyncCount()).isLessThanOrEqualTo(records - THREADS + 2).isLessThan(records);
            System.out.printf("group commit: %d records, %d fsyncs%n", records, log.fsyncCount());
        } finally {
            pool.shutdownNow();
        }
        DurableLogTestModel recovered = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), recovered)) {
            assertThat(log.recoveredVersion()).isEqualTo(THREADS * PER_THREAD);
        }
        assertThat(recovered.snapshot()).isEqualTo(model.snapshot());
    }

    @Test
    void futuresCompleteInVersionOrderAndOnlyAfterTheirFsync() throws Exception {
        DurableLogTestModel model = new DurableLogTestModel();
        CountDownLatch allQueued = new CountDownLatch(1);
        AtomicBoolean firstBatch = new AtomicBoolean(true);
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            log.testHook = point -> { // hold the first batch until everything is queued
                if (point.equals("before-write") && firstBatch.getAndSet(false)) {
                    try {
                        assertThat(allQueued.await(30, TimeUnit.SECONDS)).isTrue();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            List<Long> completed = new ArrayList<>();
            List<Long> fsyncsSeen = new ArrayList<>();
            List<CompletableFuture<Void>> futures = new ArrayList<>();
            Random random = new Random(5);
            for (long v = 1; v <= 2000; v++) {
                LogRecord r = DurableLogTestModel.randomRecord(random, v, 50, 100);
                model.apply(r);
                long version = v;
                futures.add(log.append(r).thenRun(() -> {
                    synchronized (completed) { // runs on the flusher thread
                        completed.add(version);
                        fsyncsSeen.add(log.fsyncCount());
                    }
                }));
            }
            allQueued.countDown();
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            synchronized (completed) {
                assertThat(completed).isSorted().hasSize(2000);
                assertThat(fsyncsSeen).isSorted().allMatch(n -> n >= 1);
            }
            assertThat(log.fsyncCount()).isLessThanOrEqualTo(2); // the first record alone, then the other 1999
        }
    }
}
