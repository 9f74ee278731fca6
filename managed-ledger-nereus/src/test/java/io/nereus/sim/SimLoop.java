package io.nereus.sim;

import io.nereus.runtime.EngineRuntime;
import java.time.Duration;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The simulation's only thread of execution: one event loop on simulated time ({@link SimClock}). Every executor and
 * scheduler the engine, EmbeddedFdb and the simulated bookies are given is a {@link Lane} of this loop, so that a task
 * runs when the loop takes it: in the order of (due time, submission number), one at a time, on the thread that
 * called {@link #runUntil}. When no task is due the loop moves the clock to the next timer. Nothing waits on real
 * time and nothing runs concurrently, so one seed gives one interleaving, every time.
 *
 * <p>A {@link Process} is one simulated broker process: the lanes its engine asked for. {@link Process#kill} drops
 * everything queued on them and everything submitted later, as a process that died runs nothing again.
 *
 * <p>A step that can never finish is detected: {@link #runUntil} throws {@link Stuck} when nothing is queued while
 * the awaited future is not done, or when simulated time moved on by more than the limit while waiting (only timers
 * keep firing), or after too many tasks at one instant (a livelock). A task that throws is an engine bug (a broker's
 * executor would swallow it or lose its thread): it is kept and reported by {@link #takeUncaught}.
 *
 * <p>Confined to one thread: a call from any other thread fails (an engine thread that the seam missed).
 */
final class SimLoop {
    /** A step waited in vain: the message says why. */
    static final class Stuck extends Exception {
        Stuck(String message) {
            super(message);
        }
    }

    private static final long MAX_TASKS_AT_ONE_INSTANT = 5_000_000;

    private final SimClock clock;
    private final PriorityQueue<Slot> queue = new PriorityQueue<>();
    private final Thread thread = Thread.currentThread();
    private long sequence;
    private long tasksRun;
    private Throwable uncaught;

    SimLoop(SimClock clock) {
        this.clock = clock;
    }

    /** Tasks run so far (part of the run's trace: two runs of one seed run the same tasks). */
    long tasksRun() {
        return tasksRun;
    }

    /** Simulated nanoseconds since the start. */
    long nanos() {
        return clock.nanos();
    }

    /** A lane of no process (the metadata database's timer, which outlives every broker). */
    Lane lane(String name) {
        return new Lane(name, null);
    }

    /** A new simulated process, whose lanes die with it; {@code random} draws the unique part of its object names. */
    Process process(String name, Random random) {
        return new Process(name, random);
    }

    /**
     * Runs tasks until {@code f} is done; waits at most {@code limit} of simulated time.
     *
     * @throws Stuck when {@code f} can never complete (nothing left to run) or did not within {@code limit}
     */
    void runUntil(CompletableFuture<?> f, Duration limit) throws Stuck {
        confined();
        long deadline = clock.nanos() + limit.toNanos();
        long atInstant = 0;
        long instant = clock.nanos();
        while (!f.isDone()) {
            Slot t = queue.poll();
            if (t == null) {
                throw new Stuck("nothing left to run and the awaited operation is not done (it can never finish)");
            }
            if (t.due > deadline) {
                queue.add(t);
                throw new Stuck("the awaited operation did not finish within " + limit + " of simulated time; next "
                        + "task due on " + t.task.lane.name);
            }
            if (t.due > instant) {
                instant = t.due;
                atInstant = 0;
            } else if (++atInstant > MAX_TASKS_AT_ONE_INSTANT) {
                throw new Stuck("more than " + MAX_TASKS_AT_ONE_INSTANT + " tasks without time moving (a livelock)");
            }
            run(t);
        }
    }

    /** Moves time on by {@code d}, running every task due meanwhile at its due time. */
    void advance(Duration d) {
        confined();
        long target = clock.nanos() + d.toNanos();
        while (!queue.isEmpty() && queue.peek().due <= target) {
            run(queue.poll());
        }
        clock.advanceTo(target);
    }

    /**
     * Runs up to {@code n} tasks due within {@code within} from now, in order: a crash then lands at an arbitrary
     * point of the work in flight.
     */
    void runTasks(int n, Duration within) {
        confined();
        long until = clock.nanos() + within.toNanos();
        for (int i = 0; i < n && !queue.isEmpty() && queue.peek().due <= until; i++) {
            run(queue.poll());
        }
    }

    /** The first exception a task threw since the last call, or null. */
    Throwable takeUncaught() {
        Throwable t = uncaught;
        uncaught = null;
        return t;
    }

    private void run(Slot s) {
        if (s.due > clock.nanos()) {
            clock.advanceTo(s.due);
        }
        s.task.lane.queued--;
        if (!s.task.runnable()) {
            return;
        }
        tasksRun++;
        s.task.run();
    }

    private void confined() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("the simulation's loop used from thread " + Thread.currentThread().getName()
                    + ": an engine thread the runtime seam does not cover");
        }
    }

    private void enqueue(Task<?> t) {
        confined();
        t.lane.queued++;
        queue.add(new Slot(t.due, sequence++, t));
    }

    /** A task's place in the queue: by due time, then by submission (a periodic task gets a new place each time). */
    private record Slot(long due, long seq, Task<?> task) implements Comparable<Slot> {
        @Override
        public int compareTo(Slot o) {
            return due != o.due ? Long.compare(due, o.due) : Long.compare(seq, o.seq);
        }
    }

    // ------------------------------------------------------------------ processes and lanes

    /** One simulated broker process: its engine's lanes and its randomness; all of it dies with {@link #kill}. */
    final class Process implements EngineRuntime {
        private final String name;
        private final Random random;
        private boolean killed;

        private Process(String name, Random random) {
            this.name = name;
            this.random = random;
        }

        /** A lane of this process for work that is not the engine's own (its clients' callbacks). */
        Lane lane(String laneName) {
            return new Lane(name + "/" + laneName, this);
        }

        @Override
        public Lane executor(String threadName) {
            return lane(threadName);
        }

        @Override
        public Lane scheduler(String threadName) {
            return lane(threadName);
        }

        @Override
        public String uniqueId() {
            return String.format("%016x%016x", random.nextLong(), random.nextLong());
        }

        /** The process dies: nothing queued on its lanes runs, nothing submitted to them later either. */
        void kill() {
            killed = true;
        }
    }

    /**
     * A single-threaded executor and scheduler on this loop (see {@link EngineRuntime} for the contract it keeps):
     * after {@code shutdown} new tasks are refused, queued one-shot tasks still run and periodic ones stop; after
     * {@code shutdownNow} nothing queued runs. On a killed process, tasks are neither run nor refused.
     */
    final class Lane extends AbstractExecutorService implements ScheduledExecutorService {
        private final String name;
        private final Process process;
        /** Tasks of this lane in the loop's queue (cancelled ones until they are taken out). */
        private int queued;
        /** Moves on at {@code shutdownNow}: tasks submitted before never run. */
        private int epoch;
        private boolean shutdown;

        private Lane(String name, Process process) {
            this.name = name;
            this.process = process;
        }

        private boolean dead() {
            return process != null && process.killed;
        }

        private <V> Task<V> submitTask(Task<V> t) {
            if (dead()) {
                return t; // never runs: the process is gone
            }
            if (shutdown) {
                throw new RejectedExecutionException(name + " is shut down");
            }
            enqueue(t);
            return t;
        }

        private long dueIn(long delay, TimeUnit unit) {
            return clock.nanos() + Math.max(0, unit.toNanos(delay));
        }

        @Override
        public void execute(Runnable command) {
            submitTask(new Task<Void>(this, clock.nanos(), 0, command, null));
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            return submitTask(new Task<Void>(this, dueIn(delay, unit), 0, command, null));
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            return submitTask(new Task<>(this, dueIn(delay, unit), 0, null, callable));
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period,
                TimeUnit unit) {
            if (period <= 0) {
                throw new IllegalArgumentException("period must be > 0: " + period);
            }
            return submitTask(new Task<Void>(this, dueIn(initialDelay, unit), unit.toNanos(period), command, null));
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
                TimeUnit unit) {
            if (delay <= 0) {
                throw new IllegalArgumentException("delay must be > 0: " + delay);
            }
            return submitTask(new Task<Void>(this, dueIn(initialDelay, unit), -unit.toNanos(delay), command, null));
        }

        @Override
        public void shutdown() {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shutdown = true;
            epoch++;
            return List.of();
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown && queued == 0;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException("the simulation never blocks: " + name);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    // ------------------------------------------------------------------ tasks

    /** A task submitted to a lane (a periodic one is the same task every time it runs). */
    private final class Task<V> implements ScheduledFuture<V> {
        private final Lane lane;
        private final int epoch;
        private boolean cancelled;
        private long due;
        /** 0: once; above 0: at a fixed rate; below 0: with a fixed delay. */
        private final long period;
        private final Runnable runnable;
        private final Callable<V> callable;
        private final CompletableFuture<V> result = new CompletableFuture<>();

        private Task(Lane lane, long due, long period, Runnable runnable, Callable<V> callable) {
            this.lane = lane;
            this.epoch = lane.epoch;
            this.due = due;
            this.period = period;
            this.runnable = runnable;
            this.callable = callable;
        }

        /**
         * Still meant to run: not cancelled, its lane not shut down now since it was submitted (nor shut down at all
         * for a periodic task), its process alive.
         */
        boolean runnable() {
            return !cancelled && epoch == lane.epoch && !(period != 0 && lane.shutdown) && !lane.dead();
        }

        void run() {
            try {
                if (callable != null) {
                    result.complete(callable.call());
                    return;
                }
                runnable.run();
            } catch (Throwable e) {
                result.completeExceptionally(e);
                if (callable == null && uncaught == null) {
                    uncaught = new AssertionError("task on " + lane.name + " threw", e);
                }
                return;
            }
            if (period == 0) {
                result.complete(null);
            } else if (!lane.shutdown) {
                due = period > 0 ? due + period : clock.nanos() - period;
                enqueue(this);
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (cancelled || result.isDone()) {
                return false;
            }
            cancelled = true;
            result.cancel(false);
            return true;
        }

        @Override
        public boolean isCancelled() {
            return result.isCancelled();
        }

        @Override
        public boolean isDone() {
            return result.isDone();
        }

        @Override
        public V get() throws InterruptedException, ExecutionException {
            if (!result.isDone()) {
                throw new IllegalStateException("a blocking wait in the simulation (task on " + lane.name + ")");
            }
            return result.get();
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException {
            return get();
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - clock.nanos(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }
    }
}
