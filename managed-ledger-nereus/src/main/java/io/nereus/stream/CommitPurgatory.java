package io.nereus.stream;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Readers waiting for an offset of one stream to become committed, keyed by offset and completed by the
 * commit that passes it (never by polling). Thread-safe.
 */
final class CommitPurgatory {
    private final TreeMap<Long, List<CompletableFuture<Long>>> waiting = new TreeMap<>();
    private long committedEnd;

    /** A future completing with the committed end once it is greater than {@code offset}. */
    CompletableFuture<Long> await(long offset) {
        CompletableFuture<Long> f = new CompletableFuture<>();
        synchronized (this) {
            if (offset < committedEnd) {
                f.complete(committedEnd);
                return f;
            }
            waiting.computeIfAbsent(offset, o -> new ArrayList<>()).add(f);
        }
        f.whenComplete((v, t) -> {
            if (t != null) {
                forget(offset, f);
            }
        });
        return f;
    }

    private synchronized void forget(long offset, CompletableFuture<Long> f) {
        List<CompletableFuture<Long>> l = waiting.get(offset);
        if (l != null && l.remove(f) && l.isEmpty()) {
            waiting.remove(offset);
        }
    }

    /** Records that the committed end reached {@code end}, completing every waiter below it. */
    void advance(long end) {
        List<CompletableFuture<Long>> ready = new ArrayList<>();
        synchronized (this) {
            if (end <= committedEnd) {
                return;
            }
            committedEnd = end;
            Map<Long, List<CompletableFuture<Long>>> head = waiting.headMap(end);
            head.values().forEach(ready::addAll);
            head.clear();
        }
        ready.forEach(f -> f.complete(end));
    }

    /** Fails every waiter (the stream handle closes). */
    void failAll(Throwable t) {
        List<CompletableFuture<Long>> all = new ArrayList<>();
        synchronized (this) {
            waiting.values().forEach(all::addAll);
            waiting.clear();
        }
        all.forEach(f -> f.completeExceptionally(t));
    }

    synchronized long committedEnd() {
        return committedEnd;
    }
}
