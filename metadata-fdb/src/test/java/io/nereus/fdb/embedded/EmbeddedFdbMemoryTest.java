package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.tuple.Tuple;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Sustained load keeps version history and conflict history bounded by the MVCC window. */
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
            // Conflict history: at most a few boundaries per commit inside the window, pruned by doubling.
            assertThat(maxBoundaries).isLessThan(8L * commitsPerWindow + 2_048);
            assertThat(db.stats().liveKeys()).isLessThan(keys + commitsPerWindow + 1_000);
            byte[] counter = db.read(tr -> tr.get(Tuple.from("k", 0).pack()).join());
            assertThat(counter[0] & 0xff | (counter[1] & 0xff) << 8).isEqualTo(20 * commitsPerWindow / keys);
        }
    }
}
