package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Serializability under contention: 8 threads move money between 20 accounts with read-modify-write transactions
 * through {@code db.run}. Conflicts must be detected and retried, and the total must be preserved.
 */
class ContentionConformanceTest extends ConformanceTestBase {
    private static final int THREADS = 8;
    private static final int ACCOUNTS = 20;
    private static final int TRANSFERS_PER_THREAD = 40;
    private static final long INITIAL_BALANCE = 1_000;

    @Test
    void concurrentTransfers_preserveTheTotal_andConflictsAreRetried() throws Exception {
        Subspace accounts = space.get("account");
        try (Transaction tr = db.createTransaction()) {
            for (int i = 0; i < ACCOUNTS; i++) {
                tr.set(accounts.pack(i), le64(INITIAL_BALANCE));
            }
            await(tr.commit());
        }

        AtomicInteger attempts = new AtomicInteger();
        AtomicInteger transactions = new AtomicInteger();
        // Every thread's first transfer reads account 0 and waits until all eight have read it, so at least seven
        // of them must conflict; the remaining transfers are random.
        CyclicBarrier firstReads = new CyclicBarrier(THREADS);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                final int thread = t;
                workers.add(pool.submit(() -> {
                    Random random = new Random(1_000L + thread);
                    for (int n = 0; n < TRANSFERS_PER_THREAD; n++) {
                        int from = n == 0 ? 0 : random.nextInt(ACCOUNTS);
                        int to = n == 0 ? 1 + thread : (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                        long amount = 1 + random.nextInt(100);
                        boolean first = n == 0;
                        AtomicInteger attemptOfThis = new AtomicInteger();
                        db.run(tr -> {
                            attempts.incrementAndGet();
                            long fromBalance = fromLe64(await(tr.get(accounts.pack(from))));
                            long toBalance = fromLe64(await(tr.get(accounts.pack(to))));
                            if (first && attemptOfThis.incrementAndGet() == 1) {
                                awaitBarrier(firstReads);
                            }
                            long moved = Math.min(amount, fromBalance);
                            tr.set(accounts.pack(from), le64(fromBalance - moved));
                            tr.set(accounts.pack(to), le64(toBalance + moved));
                            return null;
                        });
                        transactions.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (Future<?> w : workers) {
                w.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }

        long total = 0;
        try (Transaction tr = db.createTransaction()) {
            List<KeyValue> rows = await(tr.getRange(accounts.range()).asList());
            assertThat(rows).hasSize(ACCOUNTS);
            for (KeyValue kv : rows) {
                long balance = fromLe64(kv.getValue());
                assertThat(balance).isNotNegative();
                total += balance;
            }
        }
        assertThat(total).isEqualTo(ACCOUNTS * INITIAL_BALANCE);
        assertThat(transactions).hasValue(THREADS * TRANSFERS_PER_THREAD);
        assertThat(attempts.get()).as("attempts (conflicts were retried)")
                .isGreaterThanOrEqualTo(transactions.get() + THREADS - 1);
    }

    private static void awaitBarrier(CyclicBarrier barrier) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("threads did not meet at the barrier", e);
        }
    }
}
