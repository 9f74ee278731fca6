package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.fdb.FdbErrors;
import java.util.Optional;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RetryPolicy} with a fixed jitter: the exact delays and backoff growth that the retry-loop conformance
 * tests can only bound by wall-clock time.
 */
class RetryPolicyTest {
    private static final DoubleSupplier HALF = () -> 0.5;
    private static final DoubleSupplier NEVER = () -> {
        throw new AssertionError("no jitter expected");
    };

    private static TransactionSettings settings(long retryLimit, long maxRetryDelayMillis) {
        TransactionSettings s = new TransactionSettings();
        s.retryLimit = retryLimit;
        s.maxRetryDelayMillis = maxRetryDelayMillis;
        return s;
    }

    private static TransactionSettings defaults() {
        return new TransactionSettings();
    }

    @ParameterizedTest
    @ValueSource(ints = {1020, 1021, 1038, 1042, 1078, 1037, 1051, 1213, 1079, 1223})
    void decide_backoffCode_waitsTheJitteredBackoff_andDoublesIt(int code) {
        Optional<RetryPolicy.Retry> retry = RetryPolicy.decide(code, 0, 40, defaults(), HALF);

        assertThat(retry).contains(new RetryPolicy.Retry(20, 80));
    }

    @ParameterizedTest
    @ValueSource(ints = {FdbErrors.TRANSACTION_TOO_OLD, FdbErrors.FUTURE_VERSION})
    void decide_tooOldOrFutureVersion_waitsTenMilliseconds_withoutJitter_andKeepsTheBackoff(int code) {
        Optional<RetryPolicy.Retry> retry = RetryPolicy.decide(code, 3, 320, defaults(), NEVER);

        assertThat(retry).contains(new RetryPolicy.Retry(RetryPolicy.INITIAL_BACKOFF_MS, 320));
    }

    @ParameterizedTest
    @ValueSource(ints = {1000, 1025, 1031, 1039, 1101, 2000, 2017, 2101})
    void decide_otherCodes_rethrow_withoutDrawingJitter(int code) {
        assertThat(RetryPolicy.decide(code, 0, RetryPolicy.INITIAL_BACKOFF_MS, defaults(), NEVER)).isEmpty();
    }

    @Test
    void decide_backoff_isCappedAtTheMaximumRetryDelay() {
        Optional<RetryPolicy.Retry> retry = RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 5, 600,
                settings(-1, 1_000), HALF);

        assertThat(retry).contains(new RetryPolicy.Retry(300, 1_000));
    }

    @Test
    void decide_jitter_scalesTheCurrentBackoff_roundedToMilliseconds() {
        assertThat(RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 0, 10, defaults(), () -> 0.0))
                .contains(new RetryPolicy.Retry(0, 20));
        assertThat(RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 0, 10, defaults(), () -> 0.96))
                .contains(new RetryPolicy.Retry(10, 20));
    }

    @Test
    void decide_zeroMaximumRetryDelay_retriesAtOnce() {
        TransactionSettings noDelay = settings(-1, 0);

        assertThat(RetryPolicy.decide(FdbErrors.TRANSACTION_TOO_OLD, 0, 10, noDelay, NEVER))
                .contains(new RetryPolicy.Retry(0, 10));
        assertThat(RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 0, 10, noDelay, () -> 0.99))
                .contains(new RetryPolicy.Retry(10, 0));
        assertThat(RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 1, 0, noDelay, () -> 0.99))
                .contains(new RetryPolicy.Retry(0, 0));
    }

    @Test
    void decide_retryLimit_allowsExactlyThatManyRetries() {
        TransactionSettings twoRetries = settings(2, 1_000);

        assertThat(RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 1, 10, twoRetries, HALF)).isPresent();
        assertThat(RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 2, 10, twoRetries, NEVER)).isEmpty();
        assertThat(RetryPolicy.decide(FdbErrors.TRANSACTION_TOO_OLD, 2, 10, twoRetries, NEVER)).isEmpty();
    }

    @Test
    void decide_retryLimitZero_rethrowsTheFirstError_andMinusOneIsUnlimited() {
        assertThat(RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 0, 10, settings(0, 1_000), NEVER)).isEmpty();
        assertThat(RetryPolicy.decide(FdbErrors.NOT_COMMITTED, 1_000_000, 1_000, settings(-1, 1_000), HALF))
                .contains(new RetryPolicy.Retry(500, 1_000));
    }
}
