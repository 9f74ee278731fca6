package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.tuple.Tuple;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Commits do not publish the ordered index; a range read publishes it when keys changed since. These check that a
 * range read sees every key of every commit acknowledged before it began, whether or not a range read ran between
 * the commits, while commits run beside it.
 */
class RangeReadPublicationTest {
    private final EmbeddedFdb db = EmbeddedFdb.inMemory();

    @AfterEach
    void close() {
        db.close();
    }

    private static byte[] key(int i) {
        return Tuple.from("k", i).pack();
    }

    private static final Range ALL = Range.startsWith(Tuple.from("k").pack());

    @Test
    void manyCommitsWithoutARangeRead_thenOneRangeRead_seesEveryKey_andPointReadsNeverWaitedForIt() {
        for (int i = 0; i < 2_000; i++) {
            int k = i;
            db.run(tr -> {
                tr.set(key(k), new byte[] {(byte) k});
                return null;
            });
            byte[] read = db.run(tr -> tr.get(key(k)).join());
            assertThat(read).containsExactly((byte) k);
        }
        List<KeyValue> all = db.run(tr -> tr.getRange(ALL).asList().join());
        assertThat(all).hasSize(2_000);
        assertThat(db.run(tr -> tr.getRange(ALL, 1, true).asList().join()).get(0).getKey()).isEqualTo(key(1_999));
        assertThat(db.stats().liveKeys()).isEqualTo(2_000);
    }

    @Test
    void rangeReadsBesideCommits_seeEveryKeyAcknowledgedBeforeTheyBegan() throws Exception {
        AtomicInteger acknowledged = new AtomicInteger(); // keys [0, acknowledged) are committed
        AtomicReference<Throwable> failure = new AtomicReference<>();
        int total = 3_000;
        Thread writer = new Thread(() -> {
            for (int i = 0; i < total && failure.get() == null; i++) {
                int k = i;
                db.run(tr -> {
                    tr.set(key(k), new byte[] {1});
                    // a second key of the same commit, cleared again at times, so removals are published too
                    tr.set(Tuple.from("k", k, "x").pack(), new byte[] {2});
                    if (k % 3 == 0 && k > 0) {
                        tr.clear(Tuple.from("k", k - 1, "x").pack());
                    }
                    return null;
                });
                acknowledged.set(k + 1);
            }
        });
        Thread reader = new Thread(() -> {
            try {
                while (acknowledged.get() < total && failure.get() == null) {
                    int before = acknowledged.get();
                    List<KeyValue> kvs = db.run(tr -> tr.getRange(ALL).asList().join());
                    long plain = kvs.stream().filter(kv -> Tuple.fromBytes(kv.getKey()).size() == 2).count();
                    if (plain < before) {
                        throw new AssertionError("range read found " + plain + " keys, " + before
                                + " were acknowledged before it began");
                    }
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        });
        writer.start();
        reader.start();
        writer.join();
        reader.join();
        assertThat(failure.get()).isNull();
        List<KeyValue> all = db.run(tr -> tr.getRange(ALL).asList().join());
        assertThat(all.stream().filter(kv -> Tuple.fromBytes(kv.getKey()).size() == 2)).hasSize(total);
    }
}
