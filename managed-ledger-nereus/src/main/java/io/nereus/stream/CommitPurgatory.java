package io.nereus.stream;

import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Readers of one stream parked until its committed end passes an offset (STYLE §8): completed by the commit that
 * reaches it, or released at once when the stream's owner closes or terminates it (readers then re-check),
 * never by polling. The owner (a ledger, on its ordered executor) calls {@link #advance} on that executor, and
 * the woken readers run there inline; every other completion is handed to the executor. Thread-safe (one
 * monitor, never held while a reader runs).
 */
public final class CommitPurgatory {
    private final Executor executor;
    private final NavigableMap<Long, List<CompletableFuture<Void>>> byOffset = new TreeMap<>();
    private long committedEnd;
    private boolean released;

    public CommitPurgatory(Executor executor, long committedEnd) {
        this.executor = executor;
        this.committedEnd = committedEnd;
    }

    /** Completes once the committed end is beyond {@code offset}, or when the waiters are released. */
    public CompletableFuture<Void> await(long offset) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        synchronized (this) {
            if (!released && offset >= committedEnd) {
                byOffset.computeIfAbsent(offset, o -> new ArrayList<>()).add(f);
                f.whenComplete((v, t) -> forget(offset, f));
                return f;
            }
        }
        executor.execute(() -> f.complete(null));
        return f;
    }

    private synchronized void forget(long offset, CompletableFuture<Void> f) {
        List<CompletableFuture<Void>> l = byOffset.get(offset);
        if (l != null && l.remove(f) && l.isEmpty()) {
            byOffset.remove(offset);
        }
    }

    /**
     * The committed end moved to {@code end}: wakes every waiter below it, inline on the calling thread (the
     * owner's executor).
     */
    public void advance(long end) {
        List<CompletableFuture<Void>> ready;
        synchronized (this) {
            if (end <= committedEnd) {
                return;
            }
            committedEnd = end;
            if (byOffset.isEmpty() || byOffset.firstKey() >= end) {
                return; // nobody waits below the new end: the common case of an append, with nothing to allocate
            }
            ready = new ArrayList<>();
            NavigableMap<Long, List<CompletableFuture<Void>>> head = byOffset.headMap(end, false);
            head.values().forEach(ready::addAll);
            head.clear();
        }
        ready.forEach(f -> f.complete(null));
    }

    /** Wakes every waiter now and every later one at once (closed or terminated ledger: readers re-check). */
    public void releaseAll() {
        List<CompletableFuture<Void>> ready = new ArrayList<>();
        synchronized (this) {
            released = true;
            byOffset.values().forEach(ready::addAll);
            byOffset.clear();
        }
        complete(ready);
    }

    public synchronized int size() {
        return byOffset.values().stream().mapToInt(List::size).sum();
    }

    private void complete(List<CompletableFuture<Void>> ready) {
        if (!ready.isEmpty()) {
            executor.execute(() -> ready.forEach(f -> f.complete(null)));
        }
    }
}
