package io.nereus.fdb.embedded;

import io.nereus.fdb.FdbErrors;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * How an {@link EmbeddedTransaction} hands out results: every future it returns is completed on the
 * transaction's executor, never on the calling thread, as fdb-java's are.
 *
 * <p>Threading: any thread may call it, with or without the transaction's monitor; results are queued and handed
 * out by drain tasks on the executor, each in delivery order. Lifecycle: one per transaction, created with it.
 */
final class TransactionFutures {
    private final Executor executor;
    /** Completions delivered and not yet run, in delivery order. */
    private final ConcurrentLinkedQueue<Delivery<?>> pending = new ConcurrentLinkedQueue<>();
    /** Whether a drain task is scheduled and has not yet taken the queue. */
    private final AtomicBoolean draining = new AtomicBoolean();

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
        pending.add(new Delivery<>(f, value, error));
        if (draining.compareAndSet(false, true)) {
            schedule();
        }
        return f;
    }

    /** A result waiting to be handed to its future on the executor. */
    private record Delivery<T>(CompletableFuture<T> future, T value, Throwable error) {
        void complete() {
            if (error != null) {
                future.completeExceptionally(error);
            } else {
                future.complete(value);
            }
        }
    }

    /** Schedules a drain (the caller set {@code draining}); a rejecting executor fails what is queued with 1000. */
    private void schedule() {
        try {
            executor.execute(this::drain);
        } catch (RejectedExecutionException e) {
            EmbeddedFdbException rejected = new EmbeddedFdbException(FdbErrors.OPERATION_FAILED,
                    "The transaction's executor rejected the operation: " + e.getMessage());
            Delivery<?> d;
            while ((d = pending.poll()) != null) {
                d.future().completeExceptionally(rejected);
            }
            draining.set(false);
            if (!pending.isEmpty() && draining.compareAndSet(false, true)) {
                schedule(); // delivered while the queue was being failed
            }
        }
    }

    /**
     * Completes, in delivery order, the futures queued when this task starts, on the executor: one task serves a
     * burst of deliveries (a transaction issuing a thousand reads costs a few hand-offs, not a thousand). What is
     * delivered meanwhile goes to the next task, which may run beside this one on another thread, so a callback
     * that blocks waiting for another result of the same transaction does not hold that result back.
     */
    private void drain() {
        ArrayList<Delivery<?>> batch = new ArrayList<>();
        Delivery<?> d;
        while ((d = pending.poll()) != null) {
            batch.add(d);
        }
        draining.set(false);
        if (!pending.isEmpty() && draining.compareAndSet(false, true)) {
            schedule();
        }
        for (Delivery<?> delivery : batch) {
            delivery.complete();
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
