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
 * Sustained load keeps version history bounded by the MVCC window, and conflict history by what live
 * transactions still need.
 */
class EmbeddedFdbMemoryTest {

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
