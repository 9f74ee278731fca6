package io.nereus.fdb.embedded;

import io.nereus.fdb.FdbErrors;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;

/**
 * The asynchronous part of one transaction's commit, once {@link EmbeddedTransaction#commit()} has moved it to
 * COMMITTING and captured the request under its monitor: on the transaction's executor, the size check (2101
 * when the approximate size exceeds the size limit), then the engine's resolver, then, back on the executor,
 * the outcome. A success records the commit version, completes the versionstamp and hands the watches over to
 * the engine; a failure fails the versionstamp (2020) and the watches with the commit's error. A read-only
 * commit skips the engine and succeeds with version {@code -1}.
 *
 * <p>Threading: starts on the calling thread and continues on the executor (or on the engine's completing
 * thread when the executor rejects the task); takes the transaction's monitor, {@code monitor}, only to record
 * the outcome in {@link TransactionLifecycle}, and settles watches and the result outside it. Lifecycle: one
 * per transaction attempt; {@link #start} is called at most once per {@code commit()}.
 */
final class TransactionCommit {
    private final Object monitor;
    private final EmbeddedEngine engine;
    private final TransactionFutures futures;
    private final TransactionLifecycle lifecycle;
    private final TransactionWatches watches;

    TransactionCommit(Object monitor, EmbeddedEngine engine, TransactionFutures futures,
                      TransactionLifecycle lifecycle, TransactionWatches watches) {
        this.monitor = monitor;
        this.engine = engine;
        this.futures = futures;
        this.lifecycle = lifecycle;
        this.watches = watches;
    }

    /**
     * Commits {@code request} ({@code null}: the transaction neither wrote nor added a write conflict range, so
     * it is read-only); {@code size} and {@code sizeLimit} were captured with it.
     */
    CompletableFuture<Void> start(EmbeddedEngine.CommitRequest request, long size, long sizeLimit) {
        if (request == null) {
            return futures.issue(() -> {
                committed(-1);
                return null;
            });
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        Runnable start = () -> {
            if (size > sizeLimit) {
                failed(new EmbeddedFdbException(FdbErrors.TRANSACTION_TOO_LARGE), result);
                return;
            }
            engine.commit(request).whenComplete((version, error) -> futures.runOrInline(() -> {
                if (error != null) {
                    failed(unwrap(error), result);
                } else {
                    committed(version);
                    result.complete(null);
                }
            }));
        };
        try {
            futures.executor().execute(start);
        } catch (RejectedExecutionException rejected) {
            failed(new EmbeddedFdbException(FdbErrors.OPERATION_FAILED,
                    "The transaction's executor rejected the commit"), result);
        }
        return result;
    }

    private void committed(long version) {
        synchronized (monitor) {
            lifecycle.committed(version);
        }
        watches.handOver(version);
    }

    private void failed(Throwable error, CompletableFuture<Void> result) {
        synchronized (monitor) {
            lifecycle.commitFailed();
        }
        watches.failAll(error);
        result.completeExceptionally(error);
    }

    /** {@code t} without the {@link CompletionException} and {@link ExecutionException} wrappers around it. */
    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
