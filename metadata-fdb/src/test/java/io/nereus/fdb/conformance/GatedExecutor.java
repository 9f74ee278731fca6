package io.nereus.fdb.conformance;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An executor that holds every task until {@link #open()}, then runs them (and all later ones) on one thread of
 * its own. A future completed through it cannot complete before the gate opens, so a test can attach a callback
 * and know it was attached before completion.
 */
final class GatedExecutor implements Executor, AutoCloseable {
    private final AtomicReference<Thread> workerThread = new AtomicReference<>();
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "conformance-gated-executor");
        t.setDaemon(true);
        workerThread.set(t);
        return t;
    });
    private final List<Runnable> held = new ArrayList<>();
    private boolean open;
    private int submitted;

    @Override
    public synchronized void execute(Runnable task) {
        submitted++;
        if (open) {
            worker.execute(task);
        } else {
            held.add(task);
        }
    }

    /** Releases the held tasks in submission order and lets later tasks through. */
    synchronized void open() {
        open = true;
        for (Runnable r : held) {
            worker.execute(r);
        }
        held.clear();
    }

    /** How many tasks were handed to this executor so far. */
    synchronized int submitted() {
        return submitted;
    }

    /** The executor's own thread, once it has started. */
    Thread thread() {
        return workerThread.get();
    }

    @Override
    public void close() {
        worker.shutdownNow();
    }
}
