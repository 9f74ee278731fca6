package io.nereus.fdb.embedded;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

/**
 * The watches a transaction has set but not yet committed. Until the commit they fire only on the
 * transaction's own writes; a successful commit hands them to the engine's {@link WatchRegistry}; a failed
 * commit, a cancel or a reset fails them. Each holds one reservation of the database's watch limit, given
 * back exactly once: when it settles here, or by the registry after the hand-over.
 *
 * <p>Threading: guarded by this object's monitor; futures are completed on the transaction's executor.
 */
final class TransactionWatches {
    private static final class Pending {
        final byte[] key;
        final byte[] seen;
        final CompletableFuture<Void> future = new CompletableFuture<>();
        boolean settled;

        Pending(byte[] key, byte[] seen) {
            this.key = key;
            this.seen = seen;
        }
    }

    private final EmbeddedEngine engine;
    private final Executor executor;
    private final List<Pending> pending = new ArrayList<>();

    TransactionWatches(EmbeddedEngine engine, Executor executor) {
        this.engine = engine;
        this.executor = executor;
    }

    /** Adds a watch on {@code key}, whose value the transaction sees as {@code seen}; the caller reserved it. */
    synchronized CompletableFuture<Void> add(byte[] key, byte[] seen) {
        Pending w = new Pending(key, seen);
        pending.add(w);
        w.future.whenComplete((v, t) -> settle(w));
        return w.future;
    }

    private void settle(Pending w) {
        boolean release;
        synchronized (this) {
            release = !w.settled;
            w.settled = true;
            pending.remove(w);
        }
        if (release) {
            engine.watches().release();
        }
    }

    /**
     * The transaction wrote {@code [begin, end)}: its watches there fire when {@code pendingWrite} shows a
     * value other than the one they saw (or one not known until commit).
     */
    /** Whether a watch of this transaction still waits for its hand-over. */
    synchronized boolean hasPending() {
        return !pending.isEmpty();
    }

    synchronized void ownWrite(byte[] begin, byte[] end, Function<byte[], WriteMap.Entry> pendingWrite) {
        for (Pending w : pending) {
            if (!w.future.isDone() && Bytes.compare(w.key, begin) >= 0 && Bytes.compare(w.key, end) < 0) {
                WriteMap.Entry e = pendingWrite.apply(w.key);
                if (e == null || !e.baseKnown() || e.unreadable() || !Arrays.equals(e.base(), w.seen)) {
                    complete(w, null);
                }
            }
        }
    }

    /** The transaction committed at {@code version} ({@code -1}: read-only): the engine now watches for it. */
    void handOver(long version) {
        List<Pending> list;
        synchronized (this) {
            if (pending.isEmpty()) {
                return;
            }
            list = List.copyOf(pending);
            pending.clear();
        }
        for (Pending w : list) {
            synchronized (this) {
                if (w.settled) {
                    continue;
                }
                w.settled = true;
            }
            if (w.future.isDone()) {
                engine.watches().release();
                continue;
            }
            byte[] seen = version < 0 ? w.seen : engine.get(w.key, version);
            engine.watches().register(w.key, seen, w.future, k -> engine.get(k, engine.visibleVersion()));
        }
    }

    /** Fails every watch not handed over with {@code reason}. */
    void failAll(Throwable reason) {
        List<Pending> list;
        synchronized (this) {
            if (pending.isEmpty()) {
                return;
            }
            list = List.copyOf(pending);
        }
        for (Pending w : list) {
            complete(w, reason);
        }
    }

    private void complete(Pending w, Throwable error) {
        Runnable r = () -> {
            if (error == null) {
                w.future.complete(null);
            } else {
                w.future.completeExceptionally(error);
            }
        };
        try {
            executor.execute(r);
        } catch (RejectedExecutionException e) {
            r.run();
        }
    }
}
