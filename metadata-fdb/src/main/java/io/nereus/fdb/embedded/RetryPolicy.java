package io.nereus.fdb.embedded;

import io.nereus.fdb.FdbErrors;
import java.util.Optional;
import java.util.function.DoubleSupplier;

/**
 * What {@code Transaction.onError} does with an FDB error code, as in FoundationDB's
 * {@code NativeAPI Transaction::onError} and {@code ReadYourWritesTransaction::onError}:
 * <ul>
 *   <li>1020, 1021, 1038, 1042, 1078, 1037, 1051, 1213, 1079 and 1223 are retried after a jittered exponential
 *       backoff: the delay is {@code random01() * backoff}; the backoff starts at {@value #INITIAL_BACKOFF_MS} ms
 *       and doubles on every such retry, up to the maximum retry delay (option 502, 1 s by default).</li>
 *   <li>1007 and 1009 are retried after {@value #INITIAL_BACKOFF_MS} ms (less if the maximum retry delay is
 *       lower), leaving the backoff as it was.</li>
 *   <li>Every other code is rethrown, and so is every code once the transaction has been retried
 *       {@code retry_limit} times (option 501; {@code -1}, the default, is no limit).</li>
 * </ul>
 *
 * <p>Stateless and thread-safe; the caller passes the attempt's retry count and backoff, and the source of
 * jitter.
 */
final class RetryPolicy {
    static final long INITIAL_BACKOFF_MS = 10;

    /** A retry: wait {@code delayMillis}, then start the next attempt with backoff {@code nextBackoffMillis}. */
    record Retry(long delayMillis, long nextBackoffMillis) {
    }

    private RetryPolicy() {
    }

    /** Whether {@code code} is retried with the growing, jittered backoff. */
    static boolean backsOff(int code) {
        return switch (code) {
            case FdbErrors.NOT_COMMITTED, FdbErrors.COMMIT_UNKNOWN_RESULT, FdbErrors.DATABASE_LOCKED,
                 FdbErrors.COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED, FdbErrors.GRV_PROXY_MEMORY_LIMIT_EXCEEDED,
                 FdbErrors.PROCESS_BEHIND, FdbErrors.BATCH_TRANSACTION_THROTTLED, FdbErrors.TAG_THROTTLED,
                 FdbErrors.BLOB_GRANULE_REQUEST_FAILED, FdbErrors.PROXY_TAG_THROTTLED -> true;
            default -> false;
        };
    }

    /** Whether {@code code} is retried after the short fixed delay. */
    static boolean shortDelay(int code) {
        return code == FdbErrors.TRANSACTION_TOO_OLD || code == FdbErrors.FUTURE_VERSION;
    }

    /**
     * The retry for error {@code code} of an attempt that has been retried {@code retries} times and would next
     * back off up to {@code backoffMillis}; empty when {@code onError} must rethrow the error. {@code random01}
     * (uniform in {@code [0, 1)}) is drawn once, only for a backoff.
     */
    static Optional<Retry> decide(int code, int retries, long backoffMillis, TransactionSettings settings,
                                  DoubleSupplier random01) {
        boolean backoff = backsOff(code);
        if ((!backoff && !shortDelay(code)) || (settings.retryLimit >= 0 && retries >= settings.retryLimit)) {
            return Optional.empty();
        }
        long delayMillis;
        long nextBackoff = backoffMillis;
        if (backoff) {
            delayMillis = Math.round(random01.getAsDouble() * backoffMillis);
            nextBackoff = Math.min(backoffMillis * 2, Math.max(settings.maxRetryDelayMillis, 0));
        } else {
            delayMillis = Math.min(INITIAL_BACKOFF_MS, settings.maxRetryDelayMillis);
        }
        return Optional.of(new Retry(delayMillis, Math.max(nextBackoff, 0)));
    }
}
