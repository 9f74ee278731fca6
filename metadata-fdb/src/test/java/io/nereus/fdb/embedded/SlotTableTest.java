package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class SlotTableTest {
    private static byte[] key(int i) {
        return new byte[] {0x15, 0x02, (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
    }

    private static VersionedStore.Slot slot(int i) {
        byte[] k = key(i);
        return new VersionedStore.Slot(k, Bytes.hash(k), 1, new byte[] {(byte) i});
    }

    @Test
    void randomAddsAndRemoves_matchAHashMap_throughRebuilds() {
        SplittableRandom rnd = new SplittableRandom(11);
        SlotTable table = new SlotTable();
        Map<Integer, VersionedStore.Slot> model = new HashMap<>();
        for (int step = 0; step < 200_000; step++) {
            // the key space grows and shrinks, so the table both grows and rebuilds to clear tombstones
            int k = rnd.nextInt(step < 100_000 ? 20_000 : 2_000);
            VersionedStore.Slot present = model.get(k);
            if (present == null) {
                VersionedStore.Slot s = slot(k);
                table.add(s);
                model.put(k, s);
            } else if (rnd.nextBoolean()) {
                table.remove(present);
                model.remove(k);
            }
            if (step % 997 == 0) {
                assertThat(table.size()).isEqualTo(model.size());
                for (int q = 0; q < 200; q++) {
                    int probe = rnd.nextInt(20_000);
                    byte[] pk = key(probe);
                    assertThat(table.get(pk, Bytes.hash(pk))).isSameAs(model.get(probe));
                }
            }
        }
        // removing a slot that is not the one held (same key, another object) changes nothing
        int k = model.keySet().iterator().next();
        table.remove(slot(k));
        byte[] pk = key(k);
        assertThat(table.get(pk, Bytes.hash(pk))).isSameAs(model.get(k));
    }

    @Test
    void readersWhileTheWriterAddsRemovesAndRebuilds_findEveryKeyAddedBeforeTheyLooked() throws Exception {
        SlotTable table = new SlotTable();
        AtomicInteger added = new AtomicInteger(); // keys [0, added) are present: the writer never removes them
        AtomicReference<Throwable> failure = new AtomicReference<>();
        int total = 300_000;
        Thread writer = new Thread(() -> {
            for (int i = 0; i < total; i++) {
                table.add(slot(i));
                added.set(i + 1);
                // churn beside them: keys added and removed again, leaving tombstones behind
                VersionedStore.Slot transient_ = slot(10_000_000 + i);
                table.add(transient_);
                table.remove(transient_);
            }
        });
        Thread[] readers = new Thread[2];
        for (int r = 0; r < readers.length; r++) {
            long seed = r;
            readers[r] = new Thread(() -> {
                SplittableRandom rnd = new SplittableRandom(seed);
                try {
                    while (added.get() < total && failure.get() == null) {
                        int n = added.get();
                        if (n == 0) {
                            continue;
                        }
                        int i = rnd.nextInt(n);
                        byte[] k = key(i);
                        VersionedStore.Slot s = table.get(k, Bytes.hash(k));
                        if (s == null || s.first[0] != (byte) i) {
                            throw new AssertionError("key " + i + " added before the lookup was not found: " + s);
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            });
        }
        writer.start();
        for (Thread t : readers) {
            t.start();
        }
        writer.join();
        for (Thread t : readers) {
            t.join();
        }
        assertThat(failure.get()).isNull();
        assertThat(table.size()).isEqualTo(total);
    }
}
