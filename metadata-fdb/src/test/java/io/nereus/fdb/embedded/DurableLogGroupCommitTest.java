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
            // hold the first fsync until every committer has written a record, so sharing is certain, not likely
            log.testHook = point -> {
                if (point.equals("before-fsync") && firstBatch.getAndSet(false)) {
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
                        log.write(); // by this thread, or by the one writing now
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
            // the committers' first records all went into the first two fsyncs (the second one covering what was
            // written while the first was held), so at least THREADS records shared two fsyncs
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
            log.testHook = point -> { // hold the first fsync until everything is written
                if (point.equals("before-fsync") && firstBatch.getAndSet(false)) {
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
                futures.add(DurableLogTestModel.appendAndWrite(log, r).thenRun(() -> {
                    synchronized (completed) { // runs on the syncer's thread
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

    @Test
    void aRecordQueuedWhileAnotherThreadWrites_isWrittenAndAcknowledgedByThatThread() throws Exception {
        DurableLogOptions written = new DurableLogOptions(DurableLogOptions.DEFAULT_COMPACTION_THRESHOLD_BYTES,
                java.time.Duration.ofSeconds(30)); // acknowledged once written
        CountDownLatch writing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean firstBatch = new AtomicBoolean(true);
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "first-writer"));
        try (DurableLog log = DurableLog.open(dir, written, new DurableLogTestModel())) {
            log.testHook = point -> { // hold the first write until the second record is queued
                if (point.equals("before-write") && firstBatch.getAndSet(false)) {
                    writing.countDown();
                    try {
                        assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            CompletableFuture<Void> first = log.append(DurableLogTestModel.rec(1));
            Future<?> firstWriter = pool.submit(log::write);
            assertThat(writing.await(30, TimeUnit.SECONDS)).isTrue();

            List<String> acknowledgedOn = new ArrayList<>();
            CompletableFuture<Void> second = log.append(DurableLogTestModel.rec(2));
            second.thenRun(() -> acknowledgedOn.add(Thread.currentThread().getName()));
            log.write(); // another thread is writing: it takes this record too, and this call does not wait
            assertThat(second).isNotDone();

            release.countDown();
            firstWriter.get(30, TimeUnit.SECONDS);
            assertThat(first).isCompleted();
            assertThat(second).isCompleted();
            assertThat(acknowledgedOn).containsExactly("first-writer");
            assertThat(log.fsyncCount()).as("written, not yet synced: the interval has not passed").isZero();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void withASyncInterval_theWritingThreadAcknowledgesItsOwnRecord() throws Exception {
        DurableLogOptions written = new DurableLogOptions(DurableLogOptions.DEFAULT_COMPACTION_THRESHOLD_BYTES,
                java.time.Duration.ofSeconds(30));
        try (DurableLog log = DurableLog.open(dir, written, new DurableLogTestModel())) {
            for (long v = 1; v <= 100; v++) {
                CompletableFuture<Void> durable = log.append(DurableLogTestModel.rec(v));
                assertThat(durable).isNotDone();
                log.write();
                assertThat(durable).as("no hand-off to another thread: written and acknowledged by the call")
                        .isCompleted();
            }
        }
    }
}
