package io.nereus.fdb.embedded;

import io.nereus.fdb.FdbErrors;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
    /**
     * Completions delivered and not yet taken by a drain task, newest first: each links to the one delivered before
     * it, so a delivery costs one object and a compare-and-set (a transaction issues one per read, hundreds per
     * commit of a broker's WAL). {@link #EMPTY} when none waits.
     */
    private final AtomicReference<Delivery<?>> pending = new AtomicReference<>(EMPTY);
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
        Delivery<T> d = new Delivery<>(f, value, error);
        Delivery<?> head;
        do {
            head = pending.get();
            d.earlier = head;
        } while (!pending.compareAndSet(head, d));
        if (draining.compareAndSet(false, true)) {
            schedule();
        }
        return f;
    }

    /** A result waiting to be handed to its future on the executor, linked to the one delivered before it. */
    private static final class Delivery<T> {
        final CompletableFuture<T> future;
        final T value;
        final Throwable error;
        /** Before it is taken: the delivery before it ({@link #EMPTY} at the end); after: the one after it. */
        Delivery<?> earlier;

        Delivery(CompletableFuture<T> future, T value, Throwable error) {
            this.future = future;
            this.value = value;
            this.error = error;
        }

        void complete() {
            if (error != null) {
                future.completeExceptionally(error);
            } else {
                future.complete(value);
            }
        }
    }

    /** The end of the pending list. */
    private static final Delivery<?> EMPTY = new Delivery<>(null, null, null);

    /** Takes every pending delivery, oldest first (linked through {@link Delivery#earlier}, ending in EMPTY). */
    private Delivery<?> takeAll() {
        Delivery<?> newest = pending.getAndSet(EMPTY);
        Delivery<?> oldest = EMPTY;
        while (newest != EMPTY) {
            Delivery<?> before = newest.earlier;
            newest.earlier = oldest;
            oldest = newest;
            newest = before;
        }
        return oldest;
    }

    /** Schedules a drain (the caller set {@code draining}); a rejecting executor fails what is queued with 1000. */
    private void schedule() {
        try {
            executor.execute(this::drain);
        } catch (RejectedExecutionException e) {
            EmbeddedFdbException rejected = new EmbeddedFdbException(FdbErrors.OPERATION_FAILED,
                    "The transaction's executor rejected the operation: " + e.getMessage());
            for (Delivery<?> d = takeAll(); d != EMPTY; d = d.earlier) {
                d.future.completeExceptionally(rejected);
            }
            draining.set(false);
            if (pending.get() != EMPTY && draining.compareAndSet(false, true)) {
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
        Delivery<?> d = takeAll();
        draining.set(false);
        if (pending.get() != EMPTY && draining.compareAndSet(false, true)) {
            schedule();
        }
        while (d != EMPTY) {
            Delivery<?> next = d.earlier;
            d.earlier = null;
            d.complete();
            d = next;
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
