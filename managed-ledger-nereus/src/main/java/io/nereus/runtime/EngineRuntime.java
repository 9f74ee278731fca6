package io.nereus.runtime;

import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Where the engine's own threads and randomness come from: every component that runs work of its own (the WAL
 * writer's owner thread and its timer, the materializer, the collector, the compactor) asks this, when it is
 * constructed, for a single-threaded executor or scheduler by thread name, and new object names take their unique
 * part from {@link #uniqueId}. Time comes from the {@link java.time.Clock} the components are given beside it.
 *
 * <p>{@link #THREADS} is what a broker runs on: a daemon thread per executor, named as given. A deterministic
 * simulation passes its own runtime, whose executors are views of one single-threaded event loop on simulated time,
 * so that one seed replays every interleaving.
 *
 * <p>Contract of the executors handed out: tasks run one at a time, in the order they were submitted (scheduled
 * ones once due, in due-time order); after {@code shutdown} new tasks are refused with
 * {@link java.util.concurrent.RejectedExecutionException}, tasks already queued still run (a scheduler's delayed
 * ones too, its periodic ones not); {@code shutdownNow} drops the queued tasks. The caller owns what it asked for
 * and shuts it down. The engine never blocks on them ({@code awaitTermination} is not used).
 */
public interface EngineRuntime {
    /** A new single-threaded executor whose thread is named {@code threadName}. */
    ExecutorService executor(String threadName);

    /** A new single-threaded scheduler whose thread is named {@code threadName}. */
    ScheduledExecutorService scheduler(String threadName);

    /** 32 hexadecimal digits never returned before, by this runtime or any other (the random part of names). */
    String uniqueId();

    /** Daemon threads named as asked, and random UUIDs: the runtime of a broker. */
    EngineRuntime THREADS = new EngineRuntime() {
        @Override
        public ExecutorService executor(String threadName) {
            return new ThreadPoolExecutor(1, 1, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                    daemon(threadName));
        }

        @Override
        public ScheduledExecutorService scheduler(String threadName) {
            return Executors.newSingleThreadScheduledExecutor(daemon(threadName));
        }

        @Override
        public String uniqueId() {
            return UUID.randomUUID().toString().replace("-", "");
        }

        @Override
        public String toString() {
            return "EngineRuntime.THREADS";
        }
    };

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
