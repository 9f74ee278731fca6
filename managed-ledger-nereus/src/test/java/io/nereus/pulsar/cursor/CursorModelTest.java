package io.nereus.pulsar.cursor;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.CursorState;
import io.nereus.metadata.CursorStore;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.bookkeeper.mledger.AsyncCallbacks;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A seeded model test of a durable cursor over a real stream: bursts of acknowledgements (individual, grouped and
 * unordered, cumulative, some beyond the end) issued concurrently from several threads while reads run and the
 * (throttled or unthrottled) persistence saves in the background, with resets, clean restarts (close, reopen from
 * the store) and crashes (the cursor abandoned without a flush, reopened from the store).
 *
 * <p>The model is a set of acknowledged offsets. After every step: the cursor's in-memory acknowledgements,
 * mark-delete and backlog equal the model; the stored state never holds an acknowledgement the model lacks and
 * never loses one it held before (between resets); after a clean restart the reopened cursor equals the model
 * exactly; after a crash it equals the model when saves are unthrottled (every acknowledgement was durable when
 * its callback completed) and otherwise holds at least what was stored before the crash.
 *
 * <p>{@code -Dnereus.cursorModel.seeds=N} runs seeds 1..N (default 24). Before the persistence took its own
 * snapshots, 5 of 200 seeds failed (a reopened cursor missing acknowledgements it held in memory).
 */
class CursorModelTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1));
    private static final long L = CursorTestHost.LEDGER_ID;
    private static final int ENTRIES = 300;
    private static final int STEPS = 60;
    private static final int THREADS = 4;

    private static ExecutorService pool;

    @BeforeAll
    static void startPool() {
        pool = Executors.newFixedThreadPool(THREADS);
    }

    @AfterAll
    static void stopPool() {
        pool.shutdownNow();
    }

    static List<Long> seeds() {
        List<Long> seeds = new ArrayList<>();
        for (long s = 1; s <= Long.getLong("nereus.cursorModel.seeds", 24); s++) {
            seeds.add(s);
        }
        return seeds;
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomConcurrentAcksReadsRestartsAndCrashes_matchModel(long seed) throws Exception {
        Random random = new Random(seed);
        try (EngineFixture engine = new EngineFixture(BK, "cursor-model-" + seed)) {
            StreamStorage storage = engine.storage("broker-a", StorageConfig.defaults().withWal(WAL));
            CursorStore store = engine.metadata.cursors();
            NereusStream stream = await(storage.openStream("persistent://tenant/ns/model-" + seed));
            try (CursorTestHost host = new CursorTestHost(stream, store)) {
                host.appendNumbered(ENTRIES);
                // even seeds: every save at once (durable when the callback completes); odd: throttled
                boolean throttled = seed % 2 == 1;
                host.config.setThrottleMarkDelete(throttled ? 50 + random.nextInt(500) : 0);
                new Run(seed, random, host, store, throttled).steps();
            }
        }
    }

    private static final class Run {
        private final long seed;
        private final Random random;
        private final CursorTestHost host;
        private final CursorStore store;
        private final boolean throttled;
        private final BitSet model = new BitSet();
        /** What the store held at the last check; it may only grow until the next reset. */
        private BitSet storedFloor = new BitSet();
        private NereusManagedCursor cursor;
        private int step;

        Run(long seed, Random random, CursorTestHost host, CursorStore store, boolean throttled) {
            this.seed = seed;
            this.random = random;
            this.host = host;
            this.store = store;
            this.throttled = throttled;
        }

        void steps() throws Exception {
            cursor = open();
            for (step = 0; step < STEPS; step++) {
                int kind = random.nextInt(100);
                String what;
                if (kind < 55) {
                    what = burst();
                } else if (kind < 65) {
                    what = read();
                } else if (kind < 72) {
                    what = reset();
                } else if (kind < 86) {
                    what = restart();
                } else {
                    what = crash();
                }
                check(what);
            }
            what("final restart");
            restart();
            check("final restart");
        }

        private String burst() {
            int ops = 1 + random.nextInt(6);
            List<CompletableFuture<Void>> done = new ArrayList<>();
            StringBuilder what = new StringBuilder("burst");
            for (int i = 0; i < ops; i++) {
                if (random.nextInt(5) == 0) {
                    long upTo = random.nextInt(ENTRIES);
                    model.set(0, (int) upTo + 1);
                    what.append(" markDelete(").append(upTo).append(')');
                    done.add(onPool(() -> markDelete(upTo)));
                } else {
                    List<Position> group = new ArrayList<>();
                    int size = 1 + random.nextInt(random.nextBoolean() ? 8 : 120);
                    for (int k = 0; k < size; k++) {
                        long o = random.nextInt(ENTRIES);
                        group.add(PositionFactory.create(L, o));
                        model.set((int) o);
                    }
                    boolean beyond = random.nextInt(8) == 0;
                    if (beyond) {
                        group.add(random.nextInt(group.size() + 1), PositionFactory.create(L, ENTRIES + 5));
                    }
                    what.append(" delete(").append(size).append(beyond ? "+beyond)" : ")");
                    done.add(onPool(() -> delete(group, beyond)));
                }
            }
            if (random.nextBoolean()) {
                done.add(onPool(() -> drain(cursor.readEntries(1 + random.nextInt(50)))));
            }
            await(CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)));
            return what.toString();
        }

        private String read() throws Exception {
            int n = 1 + random.nextInt(100);
            List<Entry> entries = cursor.readEntries(n);
            for (Entry e : entries) {
                assertThat(model.get((int) e.getEntryId())).as(ctx("read returned acknowledged %s", e.getPosition()))
                        .isFalse();
            }
            drain(entries);
            return "read(" + n + ")";
        }

        private String reset() throws Exception {
            long to = random.nextInt(ENTRIES + 1);
            cursor.resetCursor(PositionFactory.create(L, to));
            model.clear();
            model.set(0, (int) to);
            storedFloor = (BitSet) model.clone();
            return "reset(" + to + ")";
        }

        private String restart() throws Exception {
            await(cursor.closeAsync());
            cursor = open();
            assertThat(acked(cursor)).as(ctx("reopened after a clean close")).isEqualTo(model);
            return "restart";
        }

        private String crash() throws Exception {
            BitSet before = stored();
            cursor.ledgerClosed(new ManagedLedgerException.ManagedLedgerAlreadyClosedException("crash"));
            NereusManagedCursor abandoned = cursor;
            cursor = open();
            BitSet reloaded = acked(cursor);
            if (!throttled) {
                assertThat(reloaded).as(ctx("reopened after a crash, unthrottled")).isEqualTo(model);
            } else {
                assertContains(reloaded, before, "reopened after a crash holds what was stored before it");
                assertContains(model, reloaded, "reopened after a crash holds nothing never acknowledged");
            }
            assertThat(abandoned.isClosed()).isTrue();
            // what the crash lost is acknowledged again (as a broker redelivers and the consumer acks again)
            List<Position> again = new ArrayList<>();
            for (int o = model.nextSetBit(0); o >= 0; o = model.nextSetBit(o + 1)) {
                if (!reloaded.get(o)) {
                    again.add(PositionFactory.create(L, o));
                }
            }
            if (!again.isEmpty()) {
                delete(again, false);
            }
            storedFloor = stored();
            return "crash (lost " + again.size() + ")";
        }

        private void check(String what) {
            what(what);
            assertThat(acked(cursor)).as(ctx("in-memory acknowledgements")).isEqualTo(model);
            int md = model.nextClearBit(0);
            assertThat(cursor.getMarkDeletedPosition()).as(ctx("mark-delete"))
                    .isEqualTo(PositionFactory.create(L, md - 1));
            assertThat(cursor.getNumberOfEntriesInBacklog(true)).as(ctx("backlog"))
                    .isEqualTo(ENTRIES - model.cardinality());
            BitSet stored = stored();
            assertContains(model, stored, "the store holds nothing never acknowledged");
            assertContains(stored, storedFloor, "the store never loses what it held");
            storedFloor = stored;
        }

        private String last = "";

        private void what(String what) {
            last = what;
        }

        private String ctx(String message, Object... args) {
            return "seed " + seed + " step " + step + " (" + last + "): " + String.format(message, args);
        }

        private void assertContains(BitSet outer, BitSet inner, String message) {
            BitSet missing = (BitSet) inner.clone();
            missing.andNot(outer);
            assertThat(missing.toString()).as(ctx(message)).isEqualTo("{}");
        }

        private NereusManagedCursor open() {
            return await(NereusManagedCursor.openDurable(host, "sub", InitialPosition.Earliest, Map.of(), Map.of()));
        }

        private BitSet stored() {
            CursorState s = await(store.loadCursor(host.streamId(), "sub")).orElseThrow();
            BitSet b = new BitSet();
            for (int o = 0; o < ENTRIES; o++) {
                if (s.isAcknowledged(o)) {
                    b.set(o);
                }
            }
            return b;
        }

        private static BitSet acked(NereusManagedCursor c) {
            BitSet b = new BitSet();
            for (int o = 0; o < ENTRIES; o++) {
                if (c.isMessageDeleted(PositionFactory.create(L, o))) {
                    b.set(o);
                }
            }
            return b;
        }

        private void delete(List<Position> group, boolean expectRefusal) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            cursor.asyncDelete(group, new AsyncCallbacks.DeleteCallback() {
                @Override
                public void deleteComplete(Object ctx) {
                    f.complete(null);
                }

                @Override
                public void deleteFailed(ManagedLedgerException e, Object ctx) {
                    f.completeExceptionally(e);
                }
            }, null);
            if (expectRefusal) {
                assertThat(f).as(ctx("a delete with a position beyond the end"))
                        .failsWithin(Duration.ofSeconds(30));
            } else {
                await(f);
            }
        }

        private void markDelete(long upTo) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            cursor.asyncMarkDelete(PositionFactory.create(L, upTo), new AsyncCallbacks.MarkDeleteCallback() {
                @Override
                public void markDeleteComplete(Object ctx) {
                    f.complete(null);
                }

                @Override
                public void markDeleteFailed(ManagedLedgerException e, Object ctx) {
                    f.completeExceptionally(e);
                }
            }, null);
            await(f);
        }

        private static void drain(List<Entry> entries) {
            entries.forEach(Entry::release);
        }

        private static CompletableFuture<Void> onPool(ThrowingRunnable r) {
            return CompletableFuture.runAsync(() -> {
                try {
                    r.run();
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            }, pool);
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
