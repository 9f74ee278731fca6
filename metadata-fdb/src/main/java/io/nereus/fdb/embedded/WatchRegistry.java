package io.nereus.fdb.embedded;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Watches of committed transactions: each waits for its key's value to differ from the value its
 * transaction saw. Fired after the commit that changes the key becomes visible. A cancelled watch future
 * leaves the registry.
 */
final class WatchRegistry {
    private record Watch(byte[] key, byte[] seen, CompletableFuture<Void> future) {
    }

    private final ConcurrentSkipListMap<byte[], Set<Watch>> byKey = new ConcurrentSkipListMap<>(Bytes.ORDER);
    private final AtomicInteger outstanding = new AtomicInteger();
    private final Executor executor;

    WatchRegistry(Executor executor) {
        this.executor = executor;
    }

    /** Reserves room for one watch; false when {@code max} watches are outstanding (1032). */
    boolean reserve(int max) {
        while (true) {
            int n = outstanding.get();
            if (n >= max) {
                return false;
            }
            if (outstanding.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    void release() {
        outstanding.decrementAndGet();
    }

    int outstanding() {
        return outstanding.get();
    }

    /**
     * Registers a reserved watch; {@code current} gives the key's value now, so a change that happened
     * between the transaction's read and this call fires at once.
     */
    void register(byte[] key, byte[] seen, CompletableFuture<Void> future, Function<byte[], byte[]> current) {
        Watch w = new Watch(key, seen, future);
        byKey.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(w);
        future.whenComplete((v, t) -> remove(w));
        if (!Arrays.equals(current.apply(key), seen)) {
            fire(w);
        }
    }

    private void remove(Watch w) {
        Set<Watch> set = byKey.get(w.key);
        if (set != null && set.remove(w)) {
            release();
            if (set.isEmpty()) {
                byKey.remove(w.key, set);
            }
        }
    }

    /** Fires the watches whose keys a visible commit changed; {@code valueAt} reads as of that commit. */
    void onCommit(List<Effect> effects, Function<byte[], byte[]> valueAt) {
        if (byKey.isEmpty()) {
            return;
        }
        for (Effect e : effects) {
            Map<byte[], Set<Watch>> hit;
            if (e.kind() == Effect.SET) {
                Set<Watch> s = byKey.get(e.key());
                hit = s == null ? Map.of() : Map.of(e.key(), s);
            } else {
                hit = byKey.subMap(e.key(), e.value());
            }
            for (Set<Watch> set : hit.values()) {
                for (Watch w : set) {
                    if (!Arrays.equals(valueAt.apply(w.key), w.seen)) {
                        fire(w);
                    }
                }
            }
        }
    }

    private void fire(Watch w) {
        try {
            executor.execute(() -> w.future.complete(null));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            w.future.complete(null);
        }
    }

    /** Fails every watch with {@code error}; used when the database closes. */
    void failAll(Throwable error) {
        for (Set<Watch> set : byKey.values()) {
            for (Watch w : set) {
                w.future.completeExceptionally(error);
            }
        }
    }
}
