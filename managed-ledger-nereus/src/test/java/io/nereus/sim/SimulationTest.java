package io.nereus.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.config.Configurator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The deterministic simulation of the engine (STYLE §19), in the default test run: {@link #DEFAULT_STEPS} steps
 * over {@link #DEFAULT_SEEDS} seeds. Long mode: {@code -Dnereus.sim.steps=N} steps per seed, {@code -Dnereus.sim.seeds=K}
 * seeds starting at {@code -Dnereus.sim.seed=S} (default: seeds 1..K). A failing seed prints itself; pin it as a
 * test below.
 *
 * <p><b>What a step is:</b> one operation (an append of 1-3 entries; a group of 2-6 appends handed to the WAL
 * together; a read; a trim; a cursor save; a slice roll; a materializer or collector pass; WAL slice recovery; a tail
 * cache flush; a whole-stream check; an append by a fenced writer), one fault (EmbeddedFdb commit faults 1020, 1007,
 * 1021 applied and not applied; a BookKeeper add that fails, or times out stored or not stored; every bookie gone or
 * back; simulated time moving on) or one crash or ownership transfer.
 *
 * <p><b>What is deterministic:</b> the choice of every operation, fault, payload, crash and time step is drawn from
 * the seed on the test thread; faults are armed, not random (the next add or the next commits fail), the simulated
 * bookies, the object store and EmbeddedFdb (given the calling thread as its executor) answer on the calling thread,
 * time is a {@link SimClock} moved only by the simulation, and every step's futures are awaited before the next step.
 * <b>What is not:</b> the engine still runs its own threads (the WAL writer's owner thread and its timer, the
 * materializer's and collector's schedulers, lease renewal; EmbeddedFdb's timer, which runs a retry after its backoff
 * and transaction timeouts), so inside one step those threads interleave as the JVM schedules them: how a group of
 * appends is cut into WAL batches, and so which batch an armed fault hits, may differ between two runs of one seed.
 * Timers on real time (the flush delay of a busy WAL, lease renewal every 10 s, FoundationDB's retry backoff) are
 * real. A failing seed therefore replays the same operations, faults and crashes, and in practice the same failure;
 * it is not a bit-for-bit replay of the threads.
 *
 * <p><b>Crashes</b> drop the process's storage, writers and caches and stop its threads; its BookKeeper and
 * FoundationDB clients die first, so nothing it had in flight reaches either afterwards (what it had sent may or may
 * not have been applied). The next process starts from the simulated bookies' ledgers and the same database, which
 * outlives the broker as a FoundationDB cluster does; the embedded engine's own crash and log replay are not
 * simulated here (its durable-log tests cover them).
 */
class SimulationTest {
    static final long DEFAULT_STEPS = 15_000;
    static final int DEFAULT_SEEDS = 3;

    private static Level engineLevel;

    /** The engine logs every fault it meets; millions of steps of faults are silenced (a violation says enough). */
    @BeforeAll
    static void quietEngineLogs() {
        engineLevel = LogManager.getLogger("io.nereus").getLevel();
        Configurator.setLevel("io.nereus", Level.OFF);
    }

    @AfterAll
    static void restoreEngineLogs() {
        Configurator.setLevel("io.nereus", engineLevel);
    }

    @Test
    void simulation_seeds_keepEveryInvariant() {
        long steps = Long.getLong("nereus.sim.steps", DEFAULT_STEPS);
        int seeds = Integer.getInteger("nereus.sim.seeds", DEFAULT_SEEDS);
        long first = Long.getLong("nereus.sim.seed", 1L);
        long total = 0;
        long started = System.nanoTime();
        for (long seed = first; seed < first + seeds; seed++) {
            Simulation.Result r = run(seed, steps);
            total += r.steps();
            System.out.println("simulation " + r);
        }
        System.out.printf("simulation: %d steps over %d seeds in %.1f s%n", total, seeds,
                (System.nanoTime() - started) / 1e9);
        assertThat(total).isEqualTo(steps * seeds);
    }

    /** The checks can fail: bookies that lose every ledger mid-run (acknowledged data gone) are caught. */
    @Test
    void simulation_bookiesLosingAcknowledgedData_isCaught() {
        assertThatThrownBy(() -> new Simulation(3).wipingBookiesAt(1_500).run(3_000))
                .isInstanceOf(Simulation.Violation.class).hasMessageContaining("seed 3").hasMessageContaining("unreadable");
    }

    static Simulation.Result run(long seed, long steps) {
        try {
            Simulation.Result r = new Simulation(seed).run(steps);
            assertThat(r.appendsAcked()).as("appends acknowledged").isPositive();
            return r;
        } catch (Throwable t) {
            System.out.println("simulation FAILED: seed " + seed + " (replay with -Dnereus.sim.seed=" + seed
                    + " -Dnereus.sim.seeds=1 -Dnereus.sim.steps=" + steps + ")");
            throw t;
        }
    }
}
