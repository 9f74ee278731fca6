package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.Transaction;
import io.nereus.fdb.FdbErrors;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * onError and the Database retry loops (fdb-semantics §4.6 item 9; FDBDatabase.run/runAsync,
 * NativeAPI Transaction::onError, ReadYourWritesTransaction::onError).
 */
class RetryLoopConformanceTest extends ConformanceTestBase {

    private static FDBException error(int code) {
        return new FDBException("injected by test", code);
    }

    /** Codes NativeAPI Transaction::onError resets and retries (with backoff, or 10 ms for 1007/1009). */
    @ParameterizedTest
    @ValueSource(ints = {1020, 1021, 1007, 1009, 1038, 1037, 1042, 1051, 1078, 1079, 1213, 1223})
    void onError_retryableCode_completesWithAResetTransaction(int code) {
        Transaction tr = newTransaction();
        tr.set(k("dropped"), utf8("by reset"));

        Transaction retry = track(await(tr.onError(error(code))));

        assertThat(await(retry.get(k("dropped")))).isNull();
        retry.set(k("a"), utf8("retried"));
        await(retry.commit());
        assertThat(get("a")).isEqualTo("retried");
        assertThat(get("dropped")).isNull();
    }

    @ParameterizedTest
    @ValueSource(ints = {1000, 1025, 1031, 1036, 1101, 2000, 2004, 2017, 2101, 2102, 2103})
    void onError_nonRetryableCode_failsWithTheSameError(int code) {
        Transaction tr = newTransaction();

        assertFailsWith(code, tr.onError(error(code)));
    }

    @Test
    void onError_nonFdbException_failsWithThatException() {
        Transaction tr = newTransaction();
        IllegalStateException boom = new IllegalStateException("boom");

        assertThatThrownBy(() -> await(tr.onError(boom))).hasCauseReference(boom);
    }

    @Test
    void onError_unwrapsCompletionAndExecutionExceptions() {
        Transaction tr = newTransaction();
        Transaction second = track(await(tr.onError(new CompletionException(error(FdbErrors.NOT_COMMITTED)))));
        Transaction third = track(await(second.onError(new ExecutionException(error(FdbErrors.NOT_COMMITTED)))));

        third.set(k("a"), utf8("1"));
        await(third.commit());
        assertThat(get("a")).isEqualTo("1");
    }

    @Test
    void retryLimit_allowsExactlyThatManyRetries_thenRethrows() {
        Transaction tr = newTransaction();
        tr.options().setRetryLimit(2);

        Transaction first = track(await(tr.onError(error(FdbErrors.NOT_COMMITTED))));
        Transaction second = track(await(first.onError(error(FdbErrors.NOT_COMMITTED))));
        assertFailsWith(FdbErrors.NOT_COMMITTED, second.onError(error(FdbErrors.NOT_COMMITTED)));
    }

    @Test
    void retryLimit_zero_rethrowsTheFirstError() {
        Transaction tr = newTransaction();
        tr.options().setRetryLimit(0);

        assertFailsWith(FdbErrors.TRANSACTION_TOO_OLD, tr.onError(error(FdbErrors.TRANSACTION_TOO_OLD)));
    }

    /** 1007/1009 wait min(FUTURE_VERSION_RETRY_DELAY = 10 ms, max_retry_delay), without jitter. */
    @Test
    void onError_transactionTooOld_waitsTenMillisecondsEachTime() {
        Transaction tr = newTransaction();
        long start = System.nanoTime();
        for (int i = 0; i < 30; i++) {
            tr = track(await(tr.onError(error(FdbErrors.TRANSACTION_TOO_OLD))));
        }
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;

        assertThat(elapsedMs).as("30 retries of 1007 at 10 ms each").isGreaterThanOrEqualTo(250);
    }

    /**
     * 1020 waits random01() x backoff, backoff starting at 10 ms and doubling up to max_retry_delay. With a 50 ms cap,
     * 40 retries take about 0.9 s on average (standard deviation under 0.1 s); 250 ms is far below any plausible sum.
     */
    @Test
    void onError_notCommitted_backsOffWithJitterUpToMaxRetryDelay() {
        Transaction tr = newTransaction();
        tr.options().setMaxRetryDelay(50);
        long start = System.nanoTime();
        for (int i = 0; i < 40; i++) {
            tr = track(await(tr.onError(error(FdbErrors.NOT_COMMITTED))));
        }
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;

        assertThat(elapsedMs).as("40 jittered backoffs capped at 50 ms").isGreaterThanOrEqualTo(250);
    }

    /** With max_retry_delay 1 ms, 40 retries take well under a second; the 1 s default would average ~17 s. */
    @Test
    void maxRetryDelay_capsTheBackoff_andPersistsAcrossOnError() {
        Transaction tr = newTransaction();
        tr.options().setMaxRetryDelay(1);
        long start = System.nanoTime();
        for (int i = 0; i < 40; i++) {
            tr = track(await(tr.onError(error(FdbErrors.NOT_COMMITTED))));
        }
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;

        assertThat(elapsedMs).as("40 backoffs capped at 1 ms").isLessThan(5_000);
    }

    // ---- Database.run / read -----------------------------------------------------------------------------------

    @Test
    void run_retriesAfterAConflict_untilItCommits() {
        put("a", "1");
        AtomicInteger attempts = new AtomicInteger();

        String seen = db.run(tr -> {
            String value = str(await(tr.get(k("a"))));
            if (attempts.incrementAndGet() == 1) {
                put("a", "2");
            }
            tr.set(k("b"), utf8("saw " + value));
            return value;
        });

        assertThat(attempts).hasValue(2);
        assertThat(seen).isEqualTo("2");
        assertThat(get("b")).isEqualTo("saw 2");
    }

    @Test
    void run_retriesRetryableErrorsThrownByTheFunction() {
        AtomicInteger attempts = new AtomicInteger();

        String result = db.run(tr -> {
            if (attempts.incrementAndGet() < 3) {
                throw error(FdbErrors.NOT_COMMITTED);
            }
            tr.set(k("a"), utf8("third"));
            return "done";
        });

        assertThat(result).isEqualTo("done");
        assertThat(attempts).hasValue(3);
        assertThat(get("a")).isEqualTo("third");
    }

    @Test
    void run_nonRetryableError_isRethrownWithoutRetry() {
        AtomicInteger attempts = new AtomicInteger();

        assertFdbError(FdbErrors.TRANSACTION_TIMED_OUT, () -> db.run(tr -> {
            attempts.incrementAndGet();
            tr.set(k("a"), utf8("x"));
            throw error(FdbErrors.TRANSACTION_TIMED_OUT);
        }));
        assertThat(attempts).hasValue(1);
        assertThat(get("a")).isNull();
    }

    @Test
    void run_nonFdbRuntimeException_propagatesWithoutRetry() {
        AtomicInteger attempts = new AtomicInteger();
        IllegalArgumentException boom = new IllegalArgumentException("boom");

        assertThatThrownBy(() -> db.run(tr -> {
            attempts.incrementAndGet();
            throw boom;
        })).satisfies(t -> assertThat(t == boom || t.getCause() == boom).as("the function's exception").isTrue());
        assertThat(attempts).hasValue(1);
    }

    @Test
    void run_retryLimitOption_givesUpAfterTheLimit() {
        AtomicInteger attempts = new AtomicInteger();

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> db.run(tr -> {
            tr.options().setRetryLimit(2);
            attempts.incrementAndGet();
            throw error(FdbErrors.NOT_COMMITTED);
        }));
        assertThat(attempts).hasValue(3);
    }

    @Test
    void read_commitsAndRetriesLikeRun() {
        put("a", "1");
        AtomicInteger attempts = new AtomicInteger();

        String value = db.read(tr -> {
            if (attempts.incrementAndGet() == 1) {
                throw error(FdbErrors.TRANSACTION_TOO_OLD);
            }
            return str(await(tr.get(k("a"))));
        });

        assertThat(value).isEqualTo("1");
        assertThat(attempts).hasValue(2);
    }

    // ---- Database.runAsync / readAsync -------------------------------------------------------------------------

    @Test
    void runAsync_retriesAfterAConflict_untilItCommits() {
        put("a", "1");
        AtomicInteger attempts = new AtomicInteger();

        String seen = await(db.runAsync(tr -> tr.get(k("a")).thenApply(v -> {
            if (attempts.incrementAndGet() == 1) {
                put("a", "2");
            }
            tr.set(k("b"), v);
            return str(v);
        })));

        assertThat(attempts).hasValue(2);
        assertThat(seen).isEqualTo("2");
        assertThat(get("b")).isEqualTo("2");
    }

    @Test
    void runAsync_nonRetryableError_failsTheResultWithoutRetry() {
        AtomicInteger attempts = new AtomicInteger();

        assertFailsWith(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, db.runAsync(tr -> {
            attempts.incrementAndGet();
            return CompletableFuture.failedFuture(error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
        }));
        assertThat(attempts).hasValue(1);
    }

    @Test
    void runAsync_checkedExceptionFailure_abortsTheLoop() {
        AtomicInteger attempts = new AtomicInteger();
        IOException boom = new IOException("boom");

        assertThatThrownBy(() -> await(db.runAsync(tr -> {
            attempts.incrementAndGet();
            return CompletableFuture.failedFuture(boom);
        }))).hasRootCause(boom);
        assertThat(attempts).hasValue(1);
    }

    @Test
    void runAsync_functionThrowingSynchronously_isTreatedAsAFailedAttempt() {
        AtomicInteger attempts = new AtomicInteger();

        String result = await(db.runAsync(tr -> {
            if (attempts.incrementAndGet() == 1) {
                throw error(FdbErrors.NOT_COMMITTED);
            }
            return CompletableFuture.completedFuture("second");
        }));

        assertThat(result).isEqualTo("second");
        assertThat(attempts).hasValue(2);
    }

    @Test
    void readAsync_retriesLikeRunAsync() {
        put("a", "1");
        AtomicInteger attempts = new AtomicInteger();

        String value = await(db.readAsync(tr -> {
            if (attempts.incrementAndGet() == 1) {
                return CompletableFuture.failedFuture(error(FdbErrors.NOT_COMMITTED));
            }
            return tr.get(k("a")).thenApply(ConformanceTestBase::str);
        }));

        assertThat(value).isEqualTo("1");
        assertThat(attempts).hasValue(2);
    }
}
