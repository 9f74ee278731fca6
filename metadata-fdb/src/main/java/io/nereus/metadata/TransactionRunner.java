package io.nereus.metadata;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one runner of Nereus metadata transactions: every store of a {@link MetadataStore} runs its transactions
 * through the same instance, so all of them use one {@link Database} and one executor for their callbacks.
 *
 * <p>Retries belong to the database's retry loop ({@link Database#runAsync(Function, Executor)}): a body is
 * re-run after a conflict or another retriable error, including a commit whose result is unknown (1021), so
 * every body must read what it depends on in its own transaction and be idempotent. A non-retriable error, or
 * an exception thrown by the body, fails the returned future. Thread-safe; its only mutable state is the count of
 * re-runs.
 */
final class TransactionRunner {
    private final Database db;
    private final Executor executor;
    private final LongAdder retries = new LongAdder();

    TransactionRunner(Database db, Executor executor) {
        this.db = Objects.requireNonNull(db, "db");
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    /** The executor that completes every transaction's callbacks. */
    Executor executor() {
        return executor;
    }

    /**
     * Runs {@code body} in a read-write transaction, retried by the database until it commits or fails; every re-run
     * is counted ({@link #retries}).
     */
    <T> CompletableFuture<T> run(Function<? super Transaction, ? extends CompletableFuture<T>> body) {
        // the database runs the attempts of one transaction one after another, each after the previous completed
        boolean[] first = {true};
        return db.runAsync(tr -> {
            if (first[0]) {
                first[0] = false;
            } else {
                retries.increment();
            }
            return body.apply(tr);
        }, executor);
    }

    /**
     * Read-write transaction bodies re-run after a conflict or another retriable error (an unknown commit result
     * included), since this runner was made; any thread.
     */
    long retries() {
        return retries.sum();
    }

    /** Runs {@code body} in a read-only transaction (one snapshot, retried on retriable read errors). */
    <T> CompletableFuture<T> read(Function<? super ReadTransaction, ? extends CompletableFuture<T>> body) {
        return db.readAsync(body, executor);
    }

    /**
     * Runs {@code step} again and again while it completes with {@code true}: for work split into bounded
     * transactions (each step is one transaction of its own, committed before the next starts).
     */
    CompletableFuture<Void> repeat(Supplier<CompletableFuture<Boolean>> step) {
        return AsyncUtil.whileTrue(step, executor);
    }

    /** Runs {@code body}, turning a synchronous exception into a failed future. */
    static <T> CompletableFuture<T> guard(Supplier<CompletableFuture<T>> body) {
        try {
            return body.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
