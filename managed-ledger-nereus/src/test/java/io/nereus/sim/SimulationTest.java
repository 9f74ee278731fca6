package io.nereus.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.LongStream;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The deterministic simulation of the engine (STYLE §19), in the default test run: {@link #DEFAULT_STEPS} steps
 * over each of {@link #DEFAULT_SEEDS} seeds (10^6 steps), one seed per core at a time. Long mode:
 * {@code -Dnereus.sim.steps=N} steps per seed, {@code -Dnereus.sim.seeds=K} seeds starting at
 * {@code -Dnereus.sim.seed=S} (default: seeds 1..K); {@code -Dnereus.sim.logs=true} keeps the engine's logs (silenced
 * otherwise). A failing seed prints itself with the command that replays it; pin it as a test below.
 *
 * <p><b>What a step is:</b> one operation (an append of 1-3 entries; a group of 2-6 appends handed to the WAL
 * together; a read; a trim; a cursor save; a slice roll; a materializer or collector pass; WAL slice recovery; a tail
 * cache flush; a whole-stream check; an append by a fenced writer), one fault (EmbeddedFdb commit faults 1020, 1007,
 * 1021 applied and not applied; a BookKeeper add that fails, or times out stored or not stored, or reaches the
 * bookies torn so that the WAL must salvage its slice; every bookie gone or back; simulated time moving on up to 20 s,
 * with every timer due meanwhile firing) or one crash or ownership transfer.
 *
 * <p><b>What is deterministic: everything.</b> The steps, faults, payloads and crash points are drawn from the seed;
 * the engine's randomness (reply delays of the simulated bookies, EmbeddedFdb's backoff jitter, the unique part of
 * object names) from a second random seeded from it. Every thread the engine and EmbeddedFdb would start is a lane
 * of one {@link SimLoop} given to them through {@link io.nereus.runtime.EngineRuntime} and EmbeddedFdb's builder: the
 * WAL writer's owner and timer, the materializer, the collector, the compactor, metadata callbacks, EmbeddedFdb's
 * timer (retry backoff, transaction timeouts), the bookies' replies. The loop runs on the test thread, one task at a
 * time in (due time, submission) order, and moves the {@link SimClock} to the next timer when nothing is due, so no
 * step waits on real time (the WAL's flush delay, lease renewal, a timed-out add, a backoff cost no wall time) and a
 * seed gives one interleaving. A run keeps a hash of what it saw (acknowledged ranges and payloads, failures, faults,
 * crash points, the number of tasks run, the final simulated time and heads); {@link #simulation_sameSeedTwice_sameTrace}
 * checks that one seed gives it twice, {@link #simulation_twoSeeds_differentTraces} that two seeds do not. A run
 * fails if the engine started a thread of its own, if a task threw, or if a step can never finish (nothing left to
 * run, or ten simulated minutes without its futures completing).
 *
 * <p><b>Crashes</b> land anywhere in the work in flight: appends handed to the WAL (and sometimes a slice roll, a
 * materializer or a collector pass) run for a number of loop tasks drawn from the seed, then the process's BookKeeper
 * and FoundationDB clients die and nothing of the process runs again (what its lanes had queued is dropped, replies to
 * it included), so what it had sent may or may not have been applied. The next process starts from the simulated
 * bookies' ledgers and the same database, which outlives the broker as a FoundationDB cluster does; the embedded
 * engine's own crash and log replay are not simulated here (its durable-log tests cover them).
 */
class SimulationTest {
    static final long DEFAULT_STEPS = 250_000;
    static final int DEFAULT_SEEDS = 4;
    /** Steps of each run of the replay checks. */
    static final long REPLAY_STEPS = 20_000;

    private static Level engineLevel;

    /** The engine logs every fault it meets; millions of steps of faults are silenced (a violation says enough). */
    @BeforeAll
    static void quietEngineLogs() {
        engineLevel = LogManager.getLogger("io.nereus").getLevel();
        if (!Boolean.getBoolean("nereus.sim.logs")) {
            Configurator.setLevel("io.nereus", Level.OFF);
        }
    }

    @AfterAll
    static void restoreEngineLogs() {
        Configurator.setLevel("io.nereus", engineLevel);
    }

    @Test
    void simulation_seeds_keepEveryInvariant() throws Exception {
        long steps = Long.getLong("nereus.sim.steps", DEFAULT_STEPS);
        int seeds = Integer.getInteger("nereus.sim.seeds", DEFAULT_SEEDS);
        long first = Long.getLong("nereus.sim.seed", 1L);
        long started = System.nanoTime();
        long cpuBefore = Simulation.processCpuNanos();
        List<Simulation.Result> results = runAll(LongStream.range(first, first + seeds).toArray(), steps);
        long total = results.stream().mapToLong(Simulation.Result::steps).sum();
        System.out.printf("simulation: %d steps over %d seeds (%d at a time) in %.1f s, process CPU %.1f s%n", total,
                seeds, threads(seeds), (System.nanoTime() - started) / 1e9,
                (Simulation.processCpuNanos() - cpuBefore) / 1e9);
        assertThat(total).isEqualTo(steps * seeds);
    }

    /** One seed replays exactly: the same operations, faults, interleavings and outcomes, down to the task count. */
    @Test
    void simulation_sameSeedTwice_sameTrace() throws Exception {
        List<Simulation.Result> twice = runAll(new long[] {7, 7}, REPLAY_STEPS);
        Simulation.Result a = twice.get(0);
        Simulation.Result b = twice.get(1);
        assertThat(b.trace()).as("trace hash").isEqualTo(a.trace());
        assertThat(b.tasks()).as("tasks run").isEqualTo(a.tasks());
        assertThat(b.simulatedTime()).as("simulated time").isEqualTo(a.simulatedTime());
        assertThat(List.of(b.appendsAcked(), b.appendsFailed(), b.reads(), b.crashes(), b.fences(), b.faults(),
                b.zombieAppendsRefused(), b.compactionsPublished())).as("counts").isEqualTo(List.of(a.appendsAcked(),
                        a.appendsFailed(), a.reads(), a.crashes(), a.fences(), a.faults(), a.zombieAppendsRefused(),
                        a.compactionsPublished()));
    }

    /** The trace tells runs apart: two seeds give two traces (so the replay check above can fail). */
    @Test
    void simulation_twoSeeds_differentTraces() throws Exception {
        List<Simulation.Result> two = runAll(new long[] {7, 8}, REPLAY_STEPS);
        assertThat(two.get(1).trace()).as("trace hash").isNotEqualTo(two.get(0).trace());
    }

    /** The checks can fail: bookies that lose every ledger mid-run (acknowledged data gone) are caught. */
    @Test
    void simulation_bookiesLosingAcknowledgedData_isCaught() {
        assertThatThrownBy(() -> new Simulation(3).wipingBookiesAt(1_500).run(3_000))
                .isInstanceOf(Simulation.Violation.class).hasMessageContaining("seed 3").hasMessageContaining("unreadable");
    }

    /** Seeds at a time: each simulation is single-threaded, so one per core. */
    private static int threads(int seeds) {
        return Math.max(1, Math.min(seeds, Runtime.getRuntime().availableProcessors()));
    }

    /** Runs {@code seeds} (one per core at a time), each for {@code steps}; results in the order of the seeds. */
    static List<Simulation.Result> runAll(long[] seeds, long steps) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads(seeds.length), r -> {
            Thread t = new Thread(r, "simulation");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<Simulation.Result>> runs = new ArrayList<>();
            for (long seed : seeds) {
                runs.add(pool.submit(() -> run(seed, steps)));
            }
            List<Simulation.Result> results = new ArrayList<>();
            for (Future<Simulation.Result> f : runs) {
                try {
                    results.add(f.get());
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Error err) {
                        throw err;
                    }
                    throw e;
                }
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    static Simulation.Result run(long seed, long steps) {
        try {
            Simulation.Result r = new Simulation(seed).run(steps);
            assertThat(r.appendsAcked()).as("appends acknowledged").isPositive();
            System.out.println("simulation " + r);
            return r;
        } catch (Throwable t) {
            System.out.println("simulation FAILED: seed " + seed + " (replay with -Dnereus.sim.seed=" + seed
                    + " -Dnereus.sim.seeds=1 -Dnereus.sim.steps=" + steps + "): " + t);
            throw t;
        }
    }
}
