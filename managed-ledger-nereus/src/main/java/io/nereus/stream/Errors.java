package io.nereus.stream;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.StreamId;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * The one place where the failures of the layers below (WAL, resolver, metadata) become the stream's
 * {@link NereusException}s: the codes a stream's append or read reports, with the stream (and offset) in the
 * context and the lower failure as the cause.
 */
final class Errors {
    /** What an append of the stream fails with; every other failure of an append is RETRIABLE_COMMIT_FAILED. */
    private static final Set<ErrorCode> APPEND_FAILURES = EnumSet.of(ErrorCode.FENCED, ErrorCode.NOT_WRITABLE,
            ErrorCode.NOT_FOUND, ErrorCode.CLOSED, ErrorCode.RETRIABLE_WRITE_FAILED, ErrorCode.RETRIABLE_COMMIT_FAILED,
            ErrorCode.RETRIABLE_ABANDONED);

    private Errors() {
    }

    static NereusException of(ErrorCode code, StreamId stream) {
        return new NereusException(code, Map.of("stream", stream));
    }

    static NereusException of(ErrorCode code, StreamId stream, long offset) {
        return new NereusException(code, ErrorContext.of("stream", stream, "offset", offset));
    }

    /**
     * Maps an append failure: the WAL writer's failures already carry the stream's codes (see
     * {@link io.nereus.wal.WalWriter#append}) and pass unchanged.
     */
    static NereusException append(Throwable failure, StreamId stream) {
        Throwable t = Failures.unwrap(failure);
        if (t instanceof NereusException n && APPEND_FAILURES.contains(n.code())) {
            return n;
        }
        return new NereusException(ErrorCode.RETRIABLE_COMMIT_FAILED, Map.of("stream", stream), t);
    }

    /**
     * Maps a read failure at {@code offset} (the resolver's, or the last failure of an unreadable offset): when no
     * representation serves it, its last one being corrupt is CHECKSUM_MISMATCH and being gone DATA_LOSS; a transient
     * read failure, an incomplete repair and the stream gone keep their codes; metadata that cannot be decoded, like
     * any other failure of the read, is RETRIABLE_READ_FAILED.
     */
    static NereusException read(Throwable failure, StreamId stream, long offset) {
        Throwable t = Failures.unwrap(failure);
        ErrorCode code = t instanceof NereusException n ? readFailure(n.code()) : ErrorCode.RETRIABLE_READ_FAILED;
        return new NereusException(code, ErrorContext.of("stream", stream, "offset", offset), t);
    }

    private static ErrorCode readFailure(ErrorCode lower) {
        return switch (lower) {
            case CORRUPT_DATA -> ErrorCode.CHECKSUM_MISMATCH;
            case TARGET_MISSING -> ErrorCode.DATA_LOSS;
            case RETRIABLE_READ_FAILED, RETRIABLE_REPAIR_INCOMPLETE, NOT_FOUND -> lower;
            default -> ErrorCode.RETRIABLE_READ_FAILED;
        };
    }
}
