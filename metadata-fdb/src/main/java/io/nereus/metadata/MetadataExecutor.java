package io.nereus.metadata;

import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor that completes metadata transactions' callbacks ({@link MetadataStore#open}): a fixed pool of daemon
 * threads on which a task submitted from one of the pool's own threads runs on that same thread as soon as the task
 * that submitted it returns, instead of waking another thread. A transaction's steps (its function, each read's
 * result, the caller's continuations) mostly submit their successor from the thread running them, so a commit's
 * chain of callbacks runs on one thread with one wake-up instead of one per step. A task submitted from any other
 * thread (the durable log completing a commit, BookKeeper, the broker) goes to the pool as usual.
 *
 * <p>Precondition: nothing run here blocks waiting for work it submitted itself, which would now be queued behind
 * it on its own thread. Nereus code never blocks on these threads (STYLE §6), and the facade hands every result to
 * Pulsar on the ledger's executor ({@code io.nereus.pulsar.Callbacks}), so Pulsar's code, which may block, never
 * runs here; a blocking facade call made here anyway fails at once ({@link #isPoolThread}) instead of waiting for
 * ever.
 *
 * <p>One thread runs at most {@value #FOLLOW_UP_LIMIT} follow-ups in a row; what is queued beyond that goes back to
 * the pool, so a long chain cannot keep the pool's queue waiting on one thread. A task that throws is logged and the
 * follow-ups after it still run.
 */
public final class MetadataExecutor implements Executor {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataExecutor.class);
    /** Follow-ups one thread runs in a row before handing the rest back to the pool. */
    static final int FOLLOW_UP_LIMIT = 64;

    private final ExecutorService pool;

    private MetadataExecutor(int threads, String namePrefix) {
        AtomicInteger n = new AtomicInteger();
        this.pool = Executors.newFixedThreadPool(threads, r -> {
            Worker w = new Worker(this, r, namePrefix + "-" + n.incrementAndGet());
            w.setDaemon(true);
            return w;
        });
    }

    /** A pool of {@code threads} daemon threads named {@code namePrefix-1}, {@code namePrefix-2}, ... */
    public static MetadataExecutor create(int threads, String namePrefix) {
        if (threads < 1) {
            throw new IllegalArgumentException("metadata executor threads must be at least 1: " + threads);
        }
        return new MetadataExecutor(threads, namePrefix);
    }

    /** True on a thread of any {@code MetadataExecutor}'s pool. */
    public static boolean isPoolThread() {
        return Thread.currentThread() instanceof Worker;
    }

    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (Thread.currentThread() instanceof Worker w && w.owner == this && w.followUps != null) {
            w.followUps.add(task);
        } else {
            ArrayDeque<Runnable> tasks = new ArrayDeque<>();
            tasks.add(task);
            pool.execute(() -> runWithFollowUps(tasks));
        }
    }

    /** Stops taking tasks from other threads; tasks submitted already, and their follow-ups, still run. */
    public void shutdown() {
        pool.shutdown();
    }

    /** Waits up to {@code timeout} for the pool to finish after {@link #shutdown()}; true when it has. */
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return pool.awaitTermination(timeout, unit);
    }

    /**
     * Runs {@code tasks} and then each follow-up they and their follow-ups submit, on this thread; after
     * {@value #FOLLOW_UP_LIMIT} of them the rest go back to the pool as one task (or run on here once the pool is shut
     * down and refuses them).
     */
    private void runWithFollowUps(ArrayDeque<Runnable> tasks) {
        Worker w = (Worker) Thread.currentThread();
        w.followUps = tasks;
        boolean handedBack = false;
        try {
            int ran = 0;
            Runnable next;
            while (!handedBack && (next = tasks.poll()) != null) {
                try {
                    next.run();
                } catch (RuntimeException e) {
                    LOG.warn("a metadata callback failed", e);
                }
                // the deque belongs to the pool's next thread once handed back: not touched here again
                handedBack = ++ran >= FOLLOW_UP_LIMIT && !tasks.isEmpty() && handBack(tasks);
            }
        } finally {
            w.followUps = null;
            if (!handedBack && !tasks.isEmpty() && !handBack(tasks)) { // only after an Error thrown by a task
                LOG.error("{} metadata callbacks dropped: the executor is shut down", tasks.size());
            }
        }
    }

    /** Hands {@code tasks} to the pool as one task; false when the pool refuses (it is shut down). */
    private boolean handBack(ArrayDeque<Runnable> tasks) {
        try {
            pool.execute(() -> runWithFollowUps(tasks));
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** A pool thread; {@code followUps} is the queue of the tasks it is running, null between them. */
    private static final class Worker extends Thread {
        final MetadataExecutor owner;
        ArrayDeque<Runnable> followUps;

        Worker(MetadataExecutor owner, Runnable r, String name) {
            super(r, name);
            this.owner = owner;
        }
    }
}
