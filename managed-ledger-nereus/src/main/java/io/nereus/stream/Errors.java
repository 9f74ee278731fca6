package io.nereus.stream;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.generation.PhysicalReadException;
import io.nereus.generation.RepairIncompleteException;
import io.nereus.metadata.AppendOutcome;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.UnknownStreamException;
import io.nereus.wal.WalAppendException;
import java.util.Map;

/** The one place where lower-layer failures become {@link NereusException}s. */
final class Errors {
    private Errors() {
    }

    static NereusException of(ErrorCode code, StreamId stream) {
        return new NereusException(code, Map.of("stream", stream));
    }

    static NereusException of(ErrorCode code, StreamId stream, long offset) {
        return new NereusException(code, Map.of("stream", stream, "offset", offset));
    }

    /** Maps an append failure. */
    static NereusException append(Throwable failure, StreamId stream) {
        Throwable t = Failures.unwrap(failure);
        if (t instanceof NereusException n) {
            return n;
        }
        if (t instanceof WalAppendException w) {
            ErrorCode code = switch (w.kind()) {
                case WRITE_FAILED -> ErrorCode.RETRIABLE_WRITE_FAILED;
                case COMMIT_UNKNOWN -> ErrorCode.RETRIABLE_COMMIT_FAILED;
                case ABANDONED -> ErrorCode.RETRIABLE_ABANDONED;
                case CLOSED -> ErrorCode.CLOSED;
                case COMMIT_REJECTED -> rejected(w.outcome().orElse(null));
            };
            return new NereusException(code, Map.of("stream", stream), w);
        }
        if (t instanceof UnknownStreamException) {
            return new NereusException(ErrorCode.NOT_FOUND, Map.of("stream", stream), t);
        }
        return new NereusException(ErrorCode.RETRIABLE_COMMIT_FAILED, Map.of("stream", stream), t);
    }

    private static ErrorCode rejected(AppendOutcome outcome) {
        if (outcome instanceof AppendOutcome.Fenced) {
            return ErrorCode.FENCED;
        }
        if (outcome instanceof AppendOutcome.NotAccepting) {
            return ErrorCode.NOT_WRITABLE;
        }
        if (outcome == null) {
            return ErrorCode.NOT_FOUND;
        }
        return ErrorCode.RETRIABLE_COMMIT_FAILED;
    }

    /** Maps a read failure at {@code offset}. */
    static NereusException read(Throwable failure, StreamId stream, long offset) {
        Throwable t = Failures.unwrap(failure);
        if (t instanceof NereusException n) {
            return n;
        }
        Map<String, Object> ctx = Map.of("stream", stream, "offset", offset);
        if (t instanceof PhysicalReadException p) {
            ErrorCode code = switch (p.reason()) {
                case CORRUPT -> ErrorCode.CHECKSUM_MISMATCH;
                case MISSING -> ErrorCode.DATA_LOSS;
                case TRANSIENT, UNSUPPORTED -> ErrorCode.RETRIABLE_READ_FAILED;
            };
            return new NereusException(code, ctx, p);
        }
        if (t instanceof RepairIncompleteException) {
            return new NereusException(ErrorCode.RETRIABLE_REPAIR_INCOMPLETE, ctx, t);
        }
        if (t instanceof UnknownStreamException) {
            return new NereusException(ErrorCode.NOT_FOUND, ctx, t);
        }
        return new NereusException(ErrorCode.RETRIABLE_READ_FAILED, ctx, t);
    }
}
