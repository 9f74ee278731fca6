package io.nereus.fdb.embedded;

import com.apple.foundationdb.FDBException;
import io.nereus.fdb.FdbErrors;

/**
 * The {@link FDBException} EmbeddedFdb throws. The error predicates of the base class call into the native
 * client; these overrides answer from {@link FdbErrors}' pure-Java table instead.
 */
public final class EmbeddedFdbException extends FDBException {
    private static final long serialVersionUID = 1L;

    public EmbeddedFdbException(int code) {
        this(code, describe(code));
    }

    public EmbeddedFdbException(int code, String message) {
        super(message, code);
    }

    @Override
    public boolean isRetryable() {
        return FdbErrors.isRetryable(getCode());
    }

    @Override
    public boolean isMaybeCommitted() {
        return FdbErrors.isMaybeCommitted(getCode());
    }

    @Override
    public boolean isRetryableNotCommitted() {
        return FdbErrors.isRetryableNotCommitted(getCode());
    }

    /** The message FoundationDB uses for {@code code}. */
    static String describe(int code) {
        return switch (code) {
            case FdbErrors.OPERATION_FAILED -> "Operation failed";
            case FdbErrors.TRANSACTION_TOO_OLD -> "Transaction is too old to perform reads or be committed";
            case FdbErrors.FUTURE_VERSION -> "Request for future version";
            case FdbErrors.NOT_COMMITTED -> "Transaction not committed due to conflict with another transaction";
            case FdbErrors.COMMIT_UNKNOWN_RESULT -> "Transaction may or may not have committed";
            case FdbErrors.TRANSACTION_CANCELLED -> "Operation aborted because the transaction was cancelled";
            case FdbErrors.TRANSACTION_TIMED_OUT -> "Operation aborted because the transaction timed out";
            case FdbErrors.TOO_MANY_WATCHES -> "Too many watches currently set";
            case FdbErrors.WATCHES_DISABLED -> "Watches cannot be set if read your writes is disabled";
            case FdbErrors.ACCESSED_UNREADABLE -> "Read or wrote an unreadable key";
            case FdbErrors.OPERATION_CANCELLED -> "Asynchronous operation cancelled";
            case FdbErrors.KEY_OUTSIDE_LEGAL_RANGE -> "Key outside legal range";
            case FdbErrors.INVERTED_RANGE -> "Range begin key larger than end key";
            case FdbErrors.INVALID_OPTION_VALUE -> "Option set with an invalid value";
            case FdbErrors.INVALID_OPTION -> "Option not valid in this context";
            case FdbErrors.RANGE_LIMITS_INVALID -> "Range request limit is invalid";
            case FdbErrors.USED_DURING_COMMIT -> "Operation issued while a commit was outstanding";
            case FdbErrors.INVALID_MUTATION_TYPE -> "Unrecognized atomic mutation type";
            case FdbErrors.TRANSACTION_INVALID_VERSION -> "Transaction does not have a valid commit version";
            case FdbErrors.NO_COMMIT_VERSION -> "Transaction is read-only and therefore does not have a commit version";
            case FdbErrors.TRANSACTION_TOO_LARGE -> "Transaction exceeds byte limit";
            case FdbErrors.KEY_TOO_LARGE -> "Key length exceeds limit";
            case FdbErrors.VALUE_TOO_LARGE -> "Value length exceeds limit";
            case FdbErrors.EXACT_MODE_WITHOUT_LIMITS -> "EXACT streaming mode requires limits, but none were given";
            case FdbErrors.TENANTS_DISABLED -> "Tenants have been disabled in the cluster";
            default -> "FoundationDB error " + code;
        };
    }
}
