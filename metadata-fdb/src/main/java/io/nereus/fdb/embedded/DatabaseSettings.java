package io.nereus.fdb.embedded;

/**
 * Database-wide options (fdb-java {@code DatabaseOptions}): per-transaction defaults (500–503), the watch
 * limit (20) and snapshot read-your-writes (26/27). Other codes concern a networked client and are accepted
 * without effect.
 */
final class DatabaseSettings {
    static final int DEFAULT_MAX_WATCHES = 10_000;

    private volatile long timeoutMillis;
    private volatile long retryLimit = -1;
    private volatile long maxRetryDelayMillis = TransactionSettings.DEFAULT_MAX_RETRY_DELAY_MS;
    private volatile long sizeLimit = TransactionSettings.DEFAULT_SIZE_LIMIT;
    private volatile int snapshotReadYourWrites = 1;
    private volatile int maxWatches = DEFAULT_MAX_WATCHES;

    void apply(int code, byte[] parameter) {
        switch (code) {
            case 500 -> timeoutMillis = TransactionSettings.nonNegative(code, parameter, Integer.MAX_VALUE);
            case 501 -> retryLimit = Math.max(-1, TransactionSettings.signed(code, parameter));
            case 502 -> maxRetryDelayMillis = TransactionSettings.nonNegative(code, parameter, Integer.MAX_VALUE);
            case 503 -> {
                long v = TransactionSettings.signed(code, parameter);
                if (v < 32 || v > TransactionSettings.DEFAULT_SIZE_LIMIT) {
                    throw TransactionSettings.invalid(code);
                }
                sizeLimit = v;
            }
            case 20 -> maxWatches = (int) TransactionSettings.nonNegative(code, parameter, 1_000_000);
            case 26 -> snapshotReadYourWrites++;
            case 27 -> snapshotReadYourWrites--;
            default -> {
                // Location cache, machine/datacenter ids, transaction logging and similar client tuning.
            }
        }
    }

    TransactionSettings newTransaction() {
        TransactionSettings s = new TransactionSettings();
        s.timeoutMillis = timeoutMillis;
        s.retryLimit = retryLimit;
        s.maxRetryDelayMillis = maxRetryDelayMillis;
        s.sizeLimit = sizeLimit;
        s.snapshotReadYourWrites = snapshotReadYourWrites;
        return s;
    }

    int maxWatches() {
        return maxWatches;
    }
}
