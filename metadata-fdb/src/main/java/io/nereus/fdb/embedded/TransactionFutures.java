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
 * <p>Threading: any thread may call it, with or without the transaction's monitor; completions are queued and run
 * by one drain task at a time on the executor, in delivery order. Lifecycle: one per transaction, created with it.
 */
final class TransactionFutures {
    private final Executor executor;
    /** Completions delivered and not yet run, in delivery order. */
    private final java.util.concurrent.ConcurrentLinkedQueue<Runnable> pending =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Whether a drain task is scheduled or running. */
    private final java.util.concurrent.atomic.AtomicBoolean draining = new java.util.concurrent.atomic.AtomicBoolean();

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
        pending.add(() -> {
            if (error != null) {
                f.completeExceptionally(error);
            } else {
                f.complete(value);
            }
        });
        if (draining.compareAndSet(false, true)) {
            try {
                executor.execute(this::drain);
            } catch (RejectedExecutionException e) {
                draining.set(false);
                Runnable r;
                EmbeddedFdbException rejected = new EmbeddedFdbException(FdbErrors.OPERATION_FAILED,
                        "The transaction's executor rejected the operation: " + e.getMessage());
                while ((r = pending.poll()) != null) {
                    r.run(); // completes normally; the future of this call fails below
                }
                CompletableFuture<T> failed = new CompletableFuture<>();
                failed.completeExceptionally(rejected);
                return failed;
            }
        }
        return f;
    }

    /**
     * Completes, in delivery order, the futures queued when this task starts, on the executor: one task serves a
     * burst of deliveries (a transaction issuing a thousand reads costs a few hand-offs, not a thousand). What is
     * delivered meanwhile goes to the next task, so a callback that blocks waiting for another result of the same
     * transaction does not hold that result back.
     */
    private void drain() {
        java.util.ArrayList<Runnable> batch = new java.util.ArrayList<>();
        Runnable r;
        while ((r = pending.poll()) != null) {
            batch.add(r);
        }
        draining.set(false);
        if (!pending.isEmpty() && draining.compareAndSet(false, true)) {
            try {
                executor.execute(this::drain);
            } catch (RejectedExecutionException e) {
                draining.set(false); // the executor is shutting down; later deliveries fail as rejected
            }
        }
        for (Runnable completion : batch) {
            completion.run();
        }
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
