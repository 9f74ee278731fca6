package io.nereus.wal;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendOutcome;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.StreamState;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What an append fails with when the commit refuses its stream: the code follows the refusal. */
class WalCommitterRefusalTest {
    private static final StreamId S = StreamId.of(4);

    @Test
    void fenced_isFencedWithBothEpochs_notRetriable() {
        AppendOutcome.Fenced f = new AppendOutcome.Fenced(3, 2);
        NereusException e = WalCommitter.refusal(S, f);
        assertThat(e.code()).isEqualTo(ErrorCode.FENCED);
        assertThat(e.retriable()).isFalse();
        assertThat(e.context()).containsExactly(Map.entry("stream", S), Map.entry("headEpoch", 3L),
                Map.entry("requestEpoch", 2L), Map.entry("outcome", f));
    }

    @Test
    void notAccepting_isNotWritable() {
        AppendOutcome.NotAccepting n = new AppendOutcome.NotAccepting(StreamState.SEALED);
        NereusException e = WalCommitter.refusal(S, n);
        assertThat(e.code()).isEqualTo(ErrorCode.NOT_WRITABLE);
        assertThat(e.context()).containsEntry("stream", S).containsEntry("outcome", n);
    }

    @Test
    void unexpectedStart_isARetriableCommitFailure() {
        AppendOutcome.UnexpectedStart u = new AppendOutcome.UnexpectedStart(10, 8);
        NereusException e = WalCommitter.refusal(S, u);
        assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_COMMIT_FAILED);
        assertThat(e.retriable()).isTrue();
        assertThat(e.context()).containsEntry("outcome", u);
    }

    @Test
    void unknownStream_isNotFound() {
        NereusException e = WalCommitter.refusal(S, null);
        assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND);
        assertThat(e.context()).containsExactly(Map.entry("stream", S));
    }
}
