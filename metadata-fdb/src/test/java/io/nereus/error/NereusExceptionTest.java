package io.nereus.error;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NereusExceptionTest {

    @Test
    void message_isTheCodesStaticMessagePlusTheContextInOrder() {
        NereusException e = new NereusException(ErrorCode.OFFSET_TRIMMED, ErrorContext.of("stream", "s-1", "offset", 7L));
        assertThat(e.getMessage()).isEqualTo("offset is below the trim point {stream=s-1, offset=7}");
        assertThat(e.context()).containsExactly(Map.entry("stream", "s-1"), Map.entry("offset", 7L));
        assertThat(new NereusException(ErrorCode.CLOSED, Map.of()).getMessage()).isEqualTo("storage is closed");
    }

    @Test
    void context_isACopyAndUnmodifiable() {
        Map<String, Object> given = ErrorContext.of("stream", "s-1");
        NereusException e = new NereusException(ErrorCode.NOT_FOUND, given);
        given.put("offset", 3L);
        assertThat(e.context()).containsOnlyKeys("stream");
        assertThatThrownBy(() -> e.context().put("x", 1)).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void retriable_isTheCodes() {
        assertThat(new NereusException(ErrorCode.RETRIABLE_READ_FAILED, Map.of()).retriable()).isTrue();
        assertThat(new NereusException(ErrorCode.FENCED, Map.of()).retriable()).isFalse();
    }

    @Test
    void errorContext_refusesOddOrRepeatedOrNonStringKeysAndKeepsNullValues() {
        assertThatThrownBy(() -> ErrorContext.of("stream")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ErrorContext.of("a", 1, "a", 2)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ErrorContext.of(1, 2)).isInstanceOf(IllegalArgumentException.class);
        assertThat(ErrorContext.of("cause", null)).containsEntry("cause", null);
    }

    @Test
    void unwrap_peelsCompletionAndExecutionWrappers() {
        NereusException e = new NereusException(ErrorCode.FENCED, Map.of());
        assertThat(Failures.unwrap(new CompletionException(new ExecutionException(new CompletionException(e)))))
                .isSameAs(e);
        assertThat(Failures.unwrap(e)).isSameAs(e);
        assertThat(Failures.unwrap(null)).isNull();
    }

    @Test
    void unwrap_keepsAWrapperWithoutCauseAndStopsAtOtherExceptions() {
        CompletionException bare = new CompletionException("no cause", null);
        assertThat(Failures.unwrap(bare)).isSameAs(bare);
        IllegalStateException other = new IllegalStateException(new CompletionException(new RuntimeException()));
        assertThat(Failures.unwrap(new CompletionException(other))).isSameAs(other);
    }

    @Test
    void unwrap_findsTheFailureOfAFuture() throws Exception {
        NereusException e = new NereusException(ErrorCode.NOT_FOUND, Map.of());
        CompletableFuture<Void> f = CompletableFuture.<Void>failedFuture(e).thenApply(v -> v);
        Throwable viaJoin = null;
        try {
            f.join();
        } catch (CompletionException c) {
            viaJoin = c;
        }
        Throwable viaGet = null;
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException x) {
            viaGet = x;
        }
        assertThat(Failures.unwrap(viaJoin)).isSameAs(e);
        assertThat(Failures.unwrap(viaGet)).isSameAs(e);
    }
}
