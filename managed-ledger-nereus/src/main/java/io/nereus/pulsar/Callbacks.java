package io.nereus.pulsar;

import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pulsar's callback style at the facade (STYLE §9): one future-returning core method per operation, delivered to
 * Pulsar's callback on the ledger's executor with the failure mapped by {@link PulsarErrors}. A result the executor
 * refuses (it was shut down with the broker) is never delivered; entries in it are released, since nobody else will.
 *
 * <p>The same holds for the futures the facade returns ({@link #handOff}): Pulsar's code never runs on a metadata
 * thread, where a blocking call would wait for work queued behind itself (the metadata executor runs what a task
 * submits after that task, on the same thread) and would hold up every commit meanwhile.
 */
public final class Callbacks {
    private static final Logger LOG = LoggerFactory.getLogger(Callbacks.class);

    private Callbacks() {
    }

    public static <T> void deliver(CompletableFuture<T> f, Executor executor, Consumer<T> ok,
            Consumer<ManagedLedgerException> failed) {
        whenCompleteOn(f, executor, (v, t) -> {
            try {
                if (t == null) {
                    ok.accept(v);
                } else {
                    failed.accept(PulsarErrors.map(t));
                }
            } catch (RuntimeException e) {
                LOG.warn("a Pulsar callback failed", e); // as before: it does not reach the executor
            }
        }, refused -> { });
    }

    /**
     * {@code f}'s outcome, completed on {@code executor} so that Pulsar's continuations run there, not on the thread
     * that completed {@code f}; {@code f} itself when it is already complete (its continuations then run on the
     * calling thread, Pulsar's own). When the executor refuses (shut down with the broker) the result fails with
     * {@link RejectedExecutionException} and entries in it are released.
     */
    public static <T> CompletableFuture<T> handOff(CompletableFuture<T> f, Executor executor) {
        if (f.isDone()) {
            return f;
        }
        CompletableFuture<T> handed = new CompletableFuture<>();
        whenCompleteOn(f, executor, (v, t) -> {
            if (t == null) {
                handed.complete(v);
            } else {
                handed.completeExceptionally(t);
            }
        }, handed::completeExceptionally);
        return handed;
    }

    /**
     * Runs {@code action} with {@code f}'s outcome on {@code executor} once {@code f} completes; when the executor
     * refuses, releases the entries in the result and tells {@code refused} instead.
     */
    private static <T> void whenCompleteOn(CompletableFuture<T> f, Executor executor,
            BiConsumer<T, Throwable> action, Consumer<RejectedExecutionException> refused) {
        f.whenComplete((v, t) -> {
            try {
                executor.execute(() -> action.accept(v, t));
            } catch (RejectedExecutionException e) {
                releaseEntries(v);
                refused.accept(e);
            }
        });
    }

    /** Releases {@code v} when it is an entry, or each entry of {@code v} when it is a collection. */
    static void releaseEntries(Object v) {
        if (v instanceof Entry e) {
            e.release();
        } else if (v instanceof Collection<?> c) {
            for (Object o : c) {
                if (o instanceof Entry e) {
                    e.release();
                }
            }
        }
    }
}
