package io.nereus.object;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import java.util.Optional;
import software.amazon.awssdk.awscore.exception.AwsServiceException;

/**
 * How the S3 store reports what the AWS SDK failed with. An error response of the server: 408, 409, 429 and 5xx
 * other than 501 are RETRIABLE_OBJECT_STORE_FAILED (timeout, conflicting concurrent write, throttling, server
 * trouble); any other status is OBJECT_STORE_REFUSED (access denied, no such bucket, 501 for a request the server
 * does not implement) unless the operation gave it a meaning first (404 on a get, 412 on a put, 416). A client
 * side failure (connection, timeout, a response that cannot be read) is RETRIABLE_OBJECT_STORE_FAILED. Context:
 * the object {@code name} (or the {@code bucket}), the {@code operation}, and the {@code status}, S3
 * {@code errorCode} and {@code requestId}, or the {@code reason}.
 */
final class S3Errors {
    private S3Errors() {
    }

    static NereusException map(Throwable t, String operation, String what, Object target) {
        Throwable c = Failures.unwrap(t);
        if (c instanceof NereusException n) {
            return n;
        }
        if (c instanceof AwsServiceException s) {
            ErrorCode code = retriable(s.statusCode()) ? ErrorCode.RETRIABLE_OBJECT_STORE_FAILED
                    : ErrorCode.OBJECT_STORE_REFUSED;
            return new NereusException(code, ErrorContext.of(what, target, "operation", operation,
                    "status", s.statusCode(), "errorCode", errorCode(c).orElse(null), "requestId", s.requestId()), c);
        }
        return new NereusException(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED,
                ErrorContext.of(what, target, "operation", operation, "reason", ObjectErrors.describe(c)), c);
    }

    /** The HTTP status of the server's error response {@code t} carries, if it is one. */
    static Optional<Integer> status(Throwable t) {
        return Failures.unwrap(t) instanceof AwsServiceException s ? Optional.of(s.statusCode()) : Optional.empty();
    }

    /** S3's error code ({@code NoSuchKey}, {@code PreconditionFailed} ...) of the error response {@code t}. */
    static Optional<String> errorCode(Throwable t) {
        return Failures.unwrap(t) instanceof AwsServiceException s && s.awsErrorDetails() != null
                ? Optional.ofNullable(s.awsErrorDetails().errorCode()) : Optional.empty();
    }

    /** A 404 about the object rather than the bucket (a HEAD's 404 carries no error code). */
    static boolean noSuchKey(Throwable t) {
        return status(t).orElse(0) == 404 && !errorCode(t).orElse("").equals("NoSuchBucket");
    }

    static boolean retriable(int status) {
        return status == 408 || status == 409 || status == 429 || (status >= 500 && status != 501);
    }
}
