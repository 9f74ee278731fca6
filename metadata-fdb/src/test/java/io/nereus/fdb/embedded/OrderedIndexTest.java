package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableMap;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class OrderedIndexTest {
    private static byte[] key(int i) {
        // variable lengths and a high bit, so unsigned order differs from signed and from length order
        return i % 3 == 0 ? new byte[] {(byte) (i >>> 8), (byte) i} : new byte[] {(byte) (i >>> 8), (byte) i, (byte) 0x80};
    }

    private static <V> List<V> drain(Iterator<V> it) {
        List<V> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    private static List<String> expected(NavigableMap<byte[], String> model, byte[] begin, byte[] end, boolean reverse) {
        if (end != null && Bytes.compare(begin, end) >= 0) {
            return List.of();
        }
        NavigableMap<byte[], String> sub = end == null ? model.tailMap(begin, true) : model.subMap(begin, true, end, false);
        return new ArrayList<>((reverse ? sub.descendingMap() : sub).values());
    }

    @Test
    void randomPutsAndRemoves_matchASortedMapInBothDirections() {
        SplittableRandom rnd = new SplittableRandom(7);
        OrderedIndex<String> index = new OrderedIndex<>();
        TreeMap<byte[], String> model = new TreeMap<>(Bytes.ORDER);
        for (int step = 0; step < 20_000; step++) {
            int k = rnd.nextInt(3_000);
            byte[] key = key(k);
            if (rnd.nextInt(3) == 0) {
                String current = model.get(key);
                boolean byIdentity = current != null && rnd.nextBoolean();
                String expected = byIdentity ? current : "other";
                boolean removed = index.remove(key, expected);
                assertThat(removed).isEqualTo(byIdentity);
                if (byIdentity) {
                    model.remove(key);
                }
            } else {
                String v = "v" + step;
                index.put(key, v);
                model.put(key, v);
            }
            if (rnd.nextInt(50) == 0) {
                index.publish();
                assertThat(index.size()).isEqualTo(model.size());
            }
            if (step % 500 == 0) {
                byte[] a = key(rnd.nextInt(3_000));
                byte[] b = rnd.nextInt(4) == 0 ? null : key(rnd.nextInt(3_000));
                for (boolean reverse : new boolean[] {false, true}) {
                    assertThat(drain(index.working(a, b, reverse))).isEqualTo(expected(model, a, b, reverse));
                }
            }
        }
        index.publish();
        assertThat(drain(index.published(Bytes.EMPTY, null, false))).isEqualTo(new ArrayList<>(model.values()));
        assertThat(drain(index.published(Bytes.EMPTY, null, true)))
                .isEqualTo(new ArrayList<>(model.descendingMap().values()));
    }

    @Test
    void publishedTree_isUnchangedByLaterWrites_untilTheNextPublish() {
        OrderedIndex<String> index = new OrderedIndex<>();
        String[] values = new String[1_000];
        for (int i = 0; i < 1_000; i++) {
            values[i] = "a" + i;
            index.put(key(i), values[i]);
        }
        index.publish();
        List<String> before = drain(index.published(Bytes.EMPTY, null, false));
        Iterator<String> reading = index.published(Bytes.EMPTY, null, false);
        String first = reading.next();

        for (int i = 0; i < 1_000; i += 2) {
            assertThat(index.remove(key(i), values[i])).isTrue();
        }
        for (int i = 1_000; i < 2_000; i++) {
            index.put(key(i), "b" + i);
        }

        List<String> rest = drain(reading);
        rest.add(0, first);
        assertThat(rest).isEqualTo(before);
        assertThat(drain(index.published(Bytes.EMPTY, null, false))).isEqualTo(before);
        assertThat(index.size()).isEqualTo(1_000);

        index.publish();
        assertThat(index.size()).isEqualTo(1_500);
        assertThat(drain(index.published(Bytes.EMPTY, null, false))).hasSize(1_500).doesNotContain("a0", "a998")
                .contains("a1", "b1999");
    }

    @Test
    void emptyAndInvertedRanges_yieldNothing() {
        OrderedIndex<String> index = new OrderedIndex<>();
        assertThat(drain(index.published(Bytes.EMPTY, null, false))).isEmpty();
        index.put(key(5), "five");
        index.publish();
        assertThat(drain(index.published(key(6), key(5), false))).isEmpty();
        assertThat(drain(index.published(key(5), key(5), true))).isEmpty();
        assertThat(drain(index.published(key(5), Bytes.keyAfter(key(5)), true))).containsExactly("five");
        assertThat(index.remove(key(5), "not five")).isFalse();
        assertThat(index.remove(key(4), "five")).isFalse();
        assertThat(index.remove(key(5), "five")).isTrue();
        index.publish();
        assertThat(index.size()).isZero();
    }

    @Test
    void sequentialInserts_keepTheTreeBalanced() {
        // a degenerate (list-shaped) tree would overflow the stack in the recursive insert long before this
        OrderedIndex<Integer> index = new OrderedIndex<>();
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            index.put(new byte[] {(byte) (i >>> 16), (byte) (i >>> 8), (byte) i}, i);
            if (i % 1_000 == 0) {
                index.publish();
            }
        }
        index.publish();
        List<Integer> all = drain(index.published(Bytes.EMPTY, null, false));
        assertThat(all).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(all.get(i)).isEqualTo(i);
        }
    }
}
