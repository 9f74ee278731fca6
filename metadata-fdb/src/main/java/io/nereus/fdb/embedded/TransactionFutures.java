package io.nereus.fdb.embedded;

import io.nereus.fdb.FdbErrors;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/**
 * How an {@link EmbeddedTransaction} hands out results: every future it returns is completed on the
 * transaction's executor, never on the calling thread, as fdb-java's are.
 *
 * <p>Threading: stateless apart from the executor; any thread may call it, with or without the transaction's
 * monitor. Lifecycle: one per transaction, created with it.
 */
final class TransactionFutures {
    private final Executor executor;

    TransactionFutures(Executor executor) {
        this.executor = executor;
    }

    Executor executor() {
        return executor;
    }

    /**
     * Performs {@code body} now, on the calling thread, and delivers its outcome through a future completed
     * on the executor. Reads are therefore ordered with the writes around them exactly as issued: a read
     * sees the writes issued before it and none issued after, as FoundationDB's read-your-writes layer does.
     */
    <T> CompletableFuture<T> issue(Supplier<T> body) {
        T value = null;
        Throwable error = null;
        try {
            value = body.get();
        } catch (RuntimeException e) {
            error = e;
        }
        return deliver(value, error);
    }

    /**
     * A future completed on the executor with {@code value}, or with {@code error} when that is not null; an
     * executor that rejects the task fails it with 1000 {@code operation_failed}.
     */
    <T> CompletableFuture<T> deliver(T value, Throwable error) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                if (error != null) {
                    f.completeExceptionally(error);
                } else {
                    f.complete(value);
                }
            });
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(new EmbeddedFdbException(FdbErrors.OPERATION_FAILED,
                    "The transaction's executor rejected the operation: " + e.getMessage()));
        }
        return f;
    }

    <T> CompletableFuture<T> failed(Throwable t) {
        return deliver(null, t);
    }

    /** Runs {@code task} on the executor, or on the calling thread when the executor rejects it. */
    void runOrInline(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException rejected) {
            task.run();
        }
    }
}
