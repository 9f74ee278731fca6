package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Sustained load keeps version history bounded by what live transactions read plus the unheld read window (within the
 * MVCC window), and conflict history by what live transactions still need.
 */
class EmbeddedFdbMemoryTest {
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void sustainedOverwrites_versionHistoryStaysWithinTheWindow() {
        MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        int keys = 100;
        int commitsPerWindow = 10_000;
        try (EmbeddedFdb db = EmbeddedFdb.builder().clock(clock).mvccWindow(Duration.ofSeconds(1))
                .executor(Runnable::run).build()) {
            long maxEntries = 0;
            long maxBoundaries = 0;
            for (int i = 0; i < 20 * commitsPerWindow; i++) {
                byte[] key = Tuple.from("k", i % keys).pack();
                byte[] other = Tuple.from("unique", i).pack();
                db.run(tr -> {
                    tr.get(key).join();
                    tr.mutate(MutationType.ADD, key, new byte[] {1, 0, 0, 0});
                    tr.set(other, new byte[8]);
                    tr.clear(other);
                    return null;
                });
                clock.advance(Duration.ofNanos(1_000_000_000L / commitsPerWindow));
                if (i > 2 * commitsPerWindow) {
                    EmbeddedFdb.EmbeddedStats s = db.stats();
                    maxEntries = Math.max(maxEntries, s.versionEntries());
                    maxBoundaries = Math.max(maxBoundaries, s.conflictBoundaries());
                }
            }
            // Each commit leaves two version entries inside the window: the counter and the unique key's
            // deletion; beyond the window only the newest value of each live key remains.
            assertThat(maxEntries).isLessThan(2L * commitsPerWindow + keys + 1_000);
            // Conflict history: no transaction outlives its commit here, so it holds about the last commit's
            // boundaries until the next prune (by doubling), not a window of them.
            assertThat(maxBoundaries).isLessThan(4_096);
            assertThat(db.stats().liveKeys()).isLessThan(keys + commitsPerWindow + 1_000);
            byte[] counter = db.read(tr -> tr.get(Tuple.from("k", 0).pack()).join());
            assertThat(counter[0] & 0xff | (counter[1] & 0xff) << 8).isEqualTo(20 * commitsPerWindow / keys);
        }
    }

    @Test
    void sustainedOverwrites_keepTheUnheldReadWindowOfVersions_notTheMvccWindow() {
        MutableClock clock = new MutableClock(START);
        int keys = 100;
        int commitsPerSecond = 2_000;
        // the default windows: five seconds for live transactions, one for versions none holds
        try (EmbeddedFdb db = EmbeddedFdb.builder().clock(clock).executor(Runnable::run).build()) {
            long maxEntries = 0;
            for (int i = 0; i < 4 * commitsPerSecond; i++) {
                byte[] key = Tuple.from("k", i % keys).pack();
                db.run(tr -> {
                    tr.get(key).join();
                    tr.set(key, new byte[] {1});
                    return null;
                });
                clock.advance(Duration.ofNanos(1_000_000_000L / commitsPerSecond));
                maxEntries = Math.max(maxEntries, db.stats().versionEntries());
            }
            // about a second of versions, up to two between a key's prunes; four seconds (8,000) were all still
            // inside the MVCC window
            assertThat(maxEntries).isLessThan(2L * commitsPerSecond + keys + 1_000);
        }
    }

    @Test
    void aLiveTransaction_readsItsSnapshotForTheWholeMvccWindow_whileOtherVersionsArePruned() {
        MutableClock clock = new MutableClock(START);
        byte[] hot = Tuple.from("hot").pack();
        try (EmbeddedFdb db = EmbeddedFdb.builder().clock(clock).executor(Runnable::run).build()) {
            db.run(tr -> {
                tr.set(hot, new byte[] {0});
                return null;
            });
            Transaction reader = db.createTransaction();
            assertThat(reader.get(hot).join()).containsExactly(0);
            // three seconds of rewrites: past the unheld read window, inside the MVCC window
            for (int i = 1; i <= 300; i++) {
                byte[] value = {(byte) i};
                db.run(tr -> {
                    tr.set(hot, value);
                    return null;
                });
                clock.advance(Duration.ofMillis(10));
            }
            assertThat(reader.get(hot).join()).containsExactly(0);
            assertThat(reader.getRange(hot, Tuple.from("hou").pack()).asList().join()).singleElement()
                    .satisfies(kv -> assertThat(kv.getValue()).containsExactly(0));
            long held = reader.getReadVersion().join();
            reader.close();
            db.run(tr -> {
                tr.set(hot, new byte[] {1});
                return null;
            });
            // released, its version is older than the unheld read window: nothing keeps it any more
            Transaction late = db.createTransaction();
            late.setReadVersion(held);
            assertThatThrownBy(() -> late.get(hot).join()).cause().extracting(e -> ((FDBException) e).getCode())
                    .isEqualTo(1007);
            late.close();
        }
    }

    @Test
    void anExplicitReadVersionNothingHeld_readsInsideTheUnheldReadWindow_andSetToTheMvccWindowAsInFoundationDb() {
        for (Duration unheld : new Duration[] {Duration.ofSeconds(1), Duration.ofSeconds(5)}) {
            MutableClock clock = new MutableClock(START);
            byte[] hot = Tuple.from("hot").pack();
            try (EmbeddedFdb db = EmbeddedFdb.builder().clock(clock).unheldReadWindow(unheld)
                    .executor(Runnable::run).build()) {
                long first = put(db, hot, (byte) 0);
                long[] versionAt = new long[301];
                for (int i = 1; i <= 300; i++) {
                    clock.advance(Duration.ofMillis(10));
                    versionAt[i] = put(db, hot, (byte) i);
                }
                // 0.5 s old: readable either way
                assertThat(readAt(db, versionAt[250], hot)).containsExactly(250);
                // 3 s old: only when the unheld read window is the MVCC window's five seconds
                if (unheld.getSeconds() == 5) {
                    assertThat(readAt(db, first, hot)).containsExactly(0);
                } else {
                    assertThatThrownBy(() -> readAt(db, first, hot)).extracting(e -> ((FDBException) e).getCode())
                            .isEqualTo(1007);
                }
            }
        }
    }

    /** Sets {@code key} to {@code value}; returns the commit's version. */
    private static long put(EmbeddedFdb db, byte[] key, byte value) {
        try (Transaction tr = db.createTransaction()) {
            tr.set(key, new byte[] {value});
            tr.commit().join();
            return tr.getCommittedVersion();
        }
    }

    private static byte[] readAt(EmbeddedFdb db, long version, byte[] key) {
        try (Transaction tr = db.createTransaction()) {
            tr.setReadVersion(version);
            return tr.get(key).join();
        } catch (java.util.concurrent.CompletionException e) {
            throw (FDBException) e.getCause();
        }
    }

    @Test
    void unheldReadWindow_refusesANegativeDuration() {
        assertThatThrownBy(() -> EmbeddedFdb.builder().unheldReadWindow(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unheldReadWindow");
    }

    @Test
    void aLiveTransactionKeepsTheConflictsItsReadVersionNeeds() {
        MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        try (EmbeddedFdb db = EmbeddedFdb.builder().clock(clock).executor(Runnable::run).build()) {
            byte[] watched = Tuple.from("watched").pack();
            byte[] untouched = Tuple.from("untouched").pack();
            Transaction stale = db.createTransaction();
            Transaction clean = db.createTransaction();
            stale.get(watched).join();
            clean.get(untouched).join();
            db.run(tr -> {
                tr.set(watched, new byte[] {1});
                return null;
            });
            // enough later commits to prune the history many times over
            for (int i = 0; i < 20_000; i++) {
                byte[] key = Tuple.from("other", i).pack();
                db.run(tr -> {
                    tr.set(key, new byte[] {2});
                    return null;
                });
                clock.advance(Duration.ofNanos(100_000));
            }
            assertThat(db.stats().conflictBoundaries()).isLessThan(2 * 20_000 + 4_096);
            stale.set(Tuple.from("out", 1).pack(), new byte[] {3});
            assertThatThrownBy(() -> stale.commit().join()).hasCauseInstanceOf(FDBException.class)
                    .cause().extracting(e -> ((FDBException) e).getCode()).isEqualTo(1020);
            clean.set(Tuple.from("out", 2).pack(), new byte[] {4});
            clean.commit().join();
            stale.close();
            clean.close();
            // with both released the history shrinks back to what the next commits need
            for (int i = 0; i < 20_000; i++) {
                byte[] key = Tuple.from("again", i).pack();
                db.run(tr -> {
                    tr.set(key, new byte[] {5});
                    return null;
                });
            }
            assertThat(db.stats().conflictBoundaries()).isLessThan(4_096);
        }
    }

    @Test
    void anExplicitReadVersionTheHistoryForgot_isRefusedAsAConflictAndRetried() {
        MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
        try (EmbeddedFdb db = EmbeddedFdb.builder().clock(clock).executor(Runnable::run).build()) {
            byte[] key = Tuple.from("k").pack();
            long old = db.read(tr -> tr.getReadVersion().join());
            for (int i = 0; i < 5_000; i++) {
                byte[] other = Tuple.from("other", i).pack();
                db.run(tr -> {
                    tr.set(other, new byte[] {1});
                    return null;
                });
            }
            Transaction tr = db.createTransaction();
            tr.setReadVersion(old);
            assertThat(tr.get(key).join()).isNull(); // reads inside the MVCC window still work
            tr.set(key, new byte[] {1});
            assertThatThrownBy(() -> tr.commit().join()).cause().extracting(e -> ((FDBException) e).getCode())
                    .isEqualTo(1020);
            tr.close();
            int[] attempts = {0};
            db.run(t -> {
                if (attempts[0]++ == 0) {
                    t.setReadVersion(old);
                }
                t.get(key).join();
                t.set(key, new byte[] {2});
                return null;
            });
            assertThat(attempts[0]).isEqualTo(2);
            byte[] stored = db.read(t -> t.get(key).join());
            assertThat(stored).containsExactly(2);
        }
    }
}
