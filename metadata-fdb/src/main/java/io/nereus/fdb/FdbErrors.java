package io.nereus.fdb;

import com.apple.foundationdb.FDBException;

/**
 * FoundationDB error codes used by Nereus and the pure-Java classification of them.
 *
 * <p>{@link FDBException#isRetryable()} and its siblings call into the native client; code that must run
 * on both the embedded engine and a real cluster classifies errors with {@link #isRetryable(int)} and the
 * other predicates here instead. The tables follow {@code fdb_error_predicate} of fdb_c 7.3.68.
 */
public final class FdbErrors {
    public static final int OPERATION_FAILED = 1000;
    public static final int TRANSACTION_TOO_OLD = 1007;
    public static final int FUTURE_VERSION = 1009;
    public static final int NOT_COMMITTED = 1020;
    public static final int COMMIT_UNKNOWN_RESULT = 1021;
    public static final int TRANSACTION_CANCELLED = 1025;
    public static final int TRANSACTION_TIMED_OUT = 1031;
    public static final int TOO_MANY_WATCHES = 1032;
    public static final int WATCHES_DISABLED = 1034;
    public static final int ACCESSED_UNREADABLE = 1036;
    public static final int PROCESS_BEHIND = 1037;
    public static final int DATABASE_LOCKED = 1038;
    public static final int CLUSTER_VERSION_CHANGED = 1039;
    public static final int COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED = 1042;
    public static final int BATCH_TRANSACTION_THROTTLED = 1051;
    public static final int GRV_PROXY_MEMORY_LIMIT_EXCEEDED = 1078;
    public static final int BLOB_GRANULE_REQUEST_FAILED = 1079;
    public static final int OPERATION_CANCELLED = 1101;
    public static final int TAG_THROTTLED = 1213;
    public static final int PROXY_TAG_THROTTLED = 1223;
    public static final int BROKEN_PROMISE = 1100;
    public static final int CLIENT_INVALID_OPERATION = 2000;
    public static final int KEY_OUTSIDE_LEGAL_RANGE = 2004;
    public static final int INVERTED_RANGE = 2005;
    public static final int INVALID_OPTION_VALUE = 2006;
    public static final int INVALID_OPTION = 2007;
    public static final int RANGE_LIMITS_INVALID = 2012;
    public static final int INVALID_DATABASE_NAME = 2013;
    public static final int USED_DURING_COMMIT = 2017;
    public static final int INVALID_MUTATION_TYPE = 2018;
    public static final int TRANSACTION_INVALID_VERSION = 2020;
    public static final int NO_COMMIT_VERSION = 2021;
    public static final int TRANSACTION_READ_ONLY = 2023;
    public static final int TRANSACTION_TOO_LARGE = 2101;
    public static final int KEY_TOO_LARGE = 2102;
    public static final int VALUE_TOO_LARGE = 2103;
    public static final int NETWORK_ALREADY_SETUP = 2009;
    public static final int EXACT_MODE_WITHOUT_LIMITS = 2210;
    public static final int TENANTS_DISABLED = 2136;
    public static final int CLIENT_NOT_AVAILABLE = 4100;

    private FdbErrors() {
    }

    /** The transaction certainly did not commit and may be retried. */
    public static boolean isRetryableNotCommitted(int code) {
        return switch (code) {
            case NOT_COMMITTED, TRANSACTION_TOO_OLD, FUTURE_VERSION, DATABASE_LOCKED,
                 GRV_PROXY_MEMORY_LIMIT_EXCEEDED, COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED,
                 BATCH_TRANSACTION_THROTTLED, PROCESS_BEHIND, TAG_THROTTLED, PROXY_TAG_THROTTLED -> true;
            default -> false;
        };
    }

    /** The transaction may have committed: retrying it requires an idempotent body. */
    public static boolean isMaybeCommitted(int code) {
        return code == COMMIT_UNKNOWN_RESULT || code == CLUSTER_VERSION_CHANGED;
    }

    /** Union of {@link #isRetryableNotCommitted(int)} and {@link #isMaybeCommitted(int)}. */
    public static boolean isRetryable(int code) {
        return isMaybeCommitted(code) || isRetryableNotCommitted(code);
    }

    /** The error code carried by {@code t} or one of its causes, or {@code -1} when none is an FDB error. */
    public static int codeOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof FDBException fe) {
                return fe.getCode();
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return -1;
    }
}
