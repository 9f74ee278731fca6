package io.nereus.stream;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.FDBException;
import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.StreamId;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * How a lower layer's failure becomes the failure of a stream's append or read ({@link Errors}): the decisions
 * the old exception types took, now taken on codes.
 */
class StreamErrorsTest {
    private static final StreamId S = StreamId.of(12);

    private static NereusException lower(ErrorCode code) {
        return new NereusException(code, Map.of("slice", 3L));
    }

    @Test
    void append_theWalWritersCodes_passUnchanged() {
        for (ErrorCode code : new ErrorCode[] {ErrorCode.FENCED, ErrorCode.NOT_WRITABLE, ErrorCode.NOT_FOUND,
                ErrorCode.CLOSED, ErrorCode.RETRIABLE_WRITE_FAILED, ErrorCode.RETRIABLE_COMMIT_FAILED,
                ErrorCode.RETRIABLE_ABANDONED}) {
            NereusException n = lower(code);
            assertThat(Errors.append(new CompletionException(n), S)).as("%s", code).isSameAs(n);
        }
    }

    @Test
    void append_anyOtherFailure_isARetriableCommitFailureOfTheStream() {
        for (Throwable t : new Throwable[] {lower(ErrorCode.METADATA_FORMAT), lower(ErrorCode.CORRUPT_DATA),
                new FDBException("commit_unknown_result", 1021), new IllegalArgumentException("empty append")}) {
            NereusException e = Errors.append(new CompletionException(t), S);
            assertThat(e.code()).as("%s", t).isEqualTo(ErrorCode.RETRIABLE_COMMIT_FAILED);
            assertThat(e.context()).containsExactly(Map.entry("stream", S));
            assertThat(e.getCause()).isSameAs(t);
        }
    }

    @Test
    void read_lastRepresentationCorruptOrGone_isChecksumMismatchOrDataLoss() {
        assertRead(lower(ErrorCode.CORRUPT_DATA), ErrorCode.CHECKSUM_MISMATCH);
        assertRead(lower(ErrorCode.TARGET_MISSING), ErrorCode.DATA_LOSS);
    }

    @Test
    void read_transientIncompleteOrStreamGone_keepTheirCode() {
        assertRead(lower(ErrorCode.RETRIABLE_READ_FAILED), ErrorCode.RETRIABLE_READ_FAILED);
        assertRead(lower(ErrorCode.RETRIABLE_REPAIR_INCOMPLETE), ErrorCode.RETRIABLE_REPAIR_INCOMPLETE);
        assertRead(lower(ErrorCode.NOT_FOUND), ErrorCode.NOT_FOUND);
    }

    @Test
    void read_undecodableMetadataOrAnyOtherFailure_isRetriableReadFailed() {
        assertRead(lower(ErrorCode.METADATA_FORMAT), ErrorCode.RETRIABLE_READ_FAILED);
        assertRead(lower(ErrorCode.FENCED), ErrorCode.RETRIABLE_READ_FAILED);
        assertRead(new FDBException("transaction_too_old", 1007), ErrorCode.RETRIABLE_READ_FAILED);
        NereusException none = Errors.read(null, S, 5);
        assertThat(none.code()).isEqualTo(ErrorCode.RETRIABLE_READ_FAILED);
        assertThat(none.getCause()).isNull();
    }

    private static void assertRead(Throwable lower, ErrorCode expected) {
        NereusException e = Errors.read(new CompletionException(lower), S, 5);
        assertThat(e.code()).as("%s", lower).isEqualTo(expected);
        assertThat(e.context()).containsExactly(Map.entry("stream", S), Map.entry("offset", 5L));
        assertThat(e.getCause()).isSameAs(lower);
    }
}
