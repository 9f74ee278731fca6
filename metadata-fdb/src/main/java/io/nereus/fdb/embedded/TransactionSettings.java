package io.nereus.fdb.embedded;

import io.nereus.fdb.FdbErrors;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The options of one transaction (codes from fdb-java's {@code TransactionOptions}). Timeout, retry limit and
 * maximum retry delay persist across {@code onError} (API 610 and later); the others reset with it.
 * Guarded by the owning transaction's monitor.
 */
final class TransactionSettings {
    static final long DEFAULT_SIZE_LIMIT = 10_000_000L;
    static final long DEFAULT_MAX_RETRY_DELAY_MS = 1_000L;

    long timeoutMillis;
    long retryLimit = -1;
    long maxRetryDelayMillis = DEFAULT_MAX_RETRY_DELAY_MS;
    long sizeLimit = DEFAULT_SIZE_LIMIT;
    boolean readYourWritesDisabled;
    /** FoundationDB counts enables (600) against disables (601): snapshot reads see own writes while positive. */
    int snapshotReadYourWrites = 1;
    boolean accessSystemKeys;
    boolean readSystemKeys;
    boolean nextWriteNoWriteConflict;

    /** A copy with the persistent options only, for the transaction {@code onError} hands back. */
    TransactionSettings persistent(DatabaseSettings defaults) {
        TransactionSettings s = defaults.newTransaction();
        s.timeoutMillis = timeoutMillis;
        s.retryLimit = retryLimit;
        s.maxRetryDelayMillis = maxRetryDelayMillis;
        return s;
    }

    /** Applies option {@code code}; returns true when the timeout changed. */
    boolean apply(int code, byte[] parameter) {
        switch (code) {
            case 500 -> {
                timeoutMillis = nonNegative(code, parameter, Integer.MAX_VALUE);
                return true;
            }
            case 501 -> retryLimit = Math.max(-1, signed(code, parameter));
            case 502 -> maxRetryDelayMillis = nonNegative(code, parameter, Integer.MAX_VALUE);
            case 503 -> {
                long v = signed(code, parameter);
                if (v < 32 || v > DEFAULT_SIZE_LIMIT) {
                    throw invalid(code);
                }
                sizeLimit = v;
            }
            case 30 -> nextWriteNoWriteConflict = true;
            case 51 -> readYourWritesDisabled = true;
            case 600 -> snapshotReadYourWrites++;
            case 601 -> snapshotReadYourWrites--;
            case 301 -> accessSystemKeys = true;
            case 302 -> readSystemKeys = true;
            default -> {
                // Priorities, causality, durability, lock awareness, tags, tracing, idempotency ids and
                // authorization have no meaning on a single in-process node.
            }
        }
        return false;
    }

    static long signed(int code, byte[] parameter) {
        if (parameter == null || parameter.length != 8) {
            throw invalid(code);
        }
        return ByteBuffer.wrap(parameter).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    static long nonNegative(int code, byte[] parameter, long max) {
        long v = signed(code, parameter);
        if (v < 0 || v > max) {
            throw invalid(code);
        }
        return v;
    }

    static EmbeddedFdbException invalid(int code) {
        return new EmbeddedFdbException(FdbErrors.INVALID_OPTION_VALUE,
                "Option set with an invalid value (option " + code + ")");
    }
}
