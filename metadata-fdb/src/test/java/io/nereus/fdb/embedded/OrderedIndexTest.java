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
    /** A value that can die, as a pruned slot does. */
    private static final class Val {
        final String name;
        boolean dead;

        Val(String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static OrderedIndex<Val> index() {
        return new OrderedIndex<>(v -> !v.dead);
    }

    /** Kills {@code v} and tells the index, as the store's prune does. */
    private static void kill(OrderedIndex<Val> index, Val v) {
        v.dead = true;
        index.retire();
    }

    private static List<String> names(Iterator<Val> it) {
        List<String> out = new ArrayList<>();
        it.forEachRemaining(v -> out.add(v.name));
        return out;
    }
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
        OrderedIndex<Val> index = index();
        TreeMap<byte[], String> model = new TreeMap<>(Bytes.ORDER);
        java.util.Map<String, Val> byName = new java.util.HashMap<>();
        int rebuilds = 0;
        for (int step = 0; step < 60_000; step++) {
            int k = rnd.nextInt(3_000);
            byte[] key = key(k);
            String current = model.get(key);
            if (rnd.nextInt(3) == 0) {
                if (current != null) {
                    long deadBefore = index.deadNodes();
                    kill(index, byName.get(current));
                    model.remove(key);
                    if (index.deadNodes() < deadBefore) {
                        rebuilds++;
                    }
                }
            } else {
                String v = "v" + step;
                if (current != null && rnd.nextBoolean()) {
                    // replacing a live value; otherwise (below) the key is put only once its value died
                    index.put(key, remember(byName, v));
                    model.put(key, v);
                } else if (current == null) {
                    index.put(key, remember(byName, v));
                    model.put(key, v);
                }
            }
            if (rnd.nextInt(50) == 0) {
                index.publish();
                assertThat(index.size()).isEqualTo(model.size());
            }
            if (step % 500 == 0) {
                byte[] a = key(rnd.nextInt(3_000));
                byte[] b = rnd.nextInt(4) == 0 ? null : key(rnd.nextInt(3_000));
                for (boolean reverse : new boolean[] {false, true}) {
                    assertThat(names(index.working(a, b, reverse))).isEqualTo(expected(model, a, b, reverse));
                }
            }
        }
        assertThat(rebuilds).as("dead nodes were dropped by rebuilds").isPositive();
        index.publish();
        assertThat(index.size()).isEqualTo(model.size());
        assertThat(names(index.published(Bytes.EMPTY, null, false))).isEqualTo(new ArrayList<>(model.values()));
        assertThat(names(index.published(Bytes.EMPTY, null, true)))
                .isEqualTo(new ArrayList<>(model.descendingMap().values()));
    }

    private static Val remember(java.util.Map<String, Val> byName, String name) {
        Val v = new Val(name);
        byName.put(name, v);
        return v;
    }

    @Test
    void publishedTree_seesNoLaterPuts_andSkipsDeadValues_throughARebuild() {
        OrderedIndex<Val> index = index();
        Val[] values = new Val[3_000];
        for (int i = 0; i < values.length; i++) {
            values[i] = new Val("a" + i);
            index.put(key(i), values[i]);
        }
        index.publish();
        List<String> before = names(index.published(Bytes.EMPTY, null, false));
        Iterator<Val> reading = index.published(Bytes.EMPTY, null, false);
        String first = reading.next().name;

        // half of them die: enough for the working tree to be rebuilt without them
        for (int i = 0; i < values.length; i += 2) {
            kill(index, values[i]);
        }
        assertThat(index.deadNodes()).as("rebuilt once dead nodes outnumbered half the live ones")
                .isLessThan(values.length / 2);
        for (int i = 3_000; i < 4_000; i++) {
            index.put(key(i), new Val("b" + i));
        }

        List<String> live = before.stream().filter(n -> Integer.parseInt(n.substring(1)) % 2 != 0).toList();
        List<String> rest = names(reading);
        assertThat(rest).isEqualTo(live.subList(live.indexOf(first) + 1, live.size()));
        assertThat(names(index.published(Bytes.EMPTY, null, false))).isEqualTo(live);
        assertThat(index.size()).isEqualTo(3_000);

        index.publish();
        assertThat(index.size()).isEqualTo(2_500);
        assertThat(names(index.published(Bytes.EMPTY, null, false))).hasSize(2_500).doesNotContain("a0", "a2998")
                .contains("a1", "b3999");
        assertThat(names(index.published(Bytes.EMPTY, null, true))).hasSize(2_500).startsWith("b3999");
    }

    @Test
    void emptyAndInvertedRanges_yieldNothing_andAPutReusesADeadKey() {
        OrderedIndex<Val> index = index();
        assertThat(names(index.published(Bytes.EMPTY, null, false))).isEmpty();
        Val five = new Val("five");
        index.put(key(5), five);
        index.publish();
        assertThat(names(index.published(key(6), key(5), false))).isEmpty();
        assertThat(names(index.published(key(5), key(5), true))).isEmpty();
        assertThat(names(index.published(key(5), Bytes.keyAfter(key(5)), true))).containsExactly("five");
        kill(index, five);
        index.publish();
        assertThat(index.size()).isZero();
        assertThat(names(index.published(Bytes.EMPTY, null, false))).isEmpty();
        assertThat(index.deadNodes()).isEqualTo(1);

        index.put(key(5), new Val("again"));
        index.publish();
        assertThat(index.size()).isEqualTo(1);
        assertThat(index.deadNodes()).isZero();
        assertThat(names(index.published(Bytes.EMPTY, null, true))).containsExactly("again");
    }

    @Test
    void keysAlikeInTheirFirstSixteenBytes_orZeroPadded_sortAsUnsignedBytes() {
        // the nodes compare keys by their first sixteen bytes first: keys that differ only past them, keys that are
        // prefixes of each other, and keys ending in zeros (which the words pad with) must still sort as bytes
        SplittableRandom rnd = new SplittableRandom(11);
        byte[] alphabet = {0, 1, 0x7f, (byte) 0x80, (byte) 0xff};
        OrderedIndex<Val> index = index();
        TreeMap<byte[], String> model = new TreeMap<>(Bytes.ORDER);
        for (int i = 0; i < 5_000; i++) {
            byte[] key = new byte[rnd.nextInt(25)];
            for (int j = 0; j < key.length; j++) {
                key[j] = j < 14 && rnd.nextInt(4) != 0 ? 0 : alphabet[rnd.nextInt(alphabet.length)];
            }
            if (!model.containsKey(key)) {
                index.put(key, new Val("k" + i));
                model.put(key, "k" + i);
            }
        }
        index.publish();
        assertThat(names(index.published(Bytes.EMPTY, null, false))).isEqualTo(new ArrayList<>(model.values()));
        for (int i = 0; i < 200; i++) {
            byte[] a = model.keySet().stream().skip(rnd.nextInt(model.size())).findFirst().orElseThrow();
            byte[] b = rnd.nextBoolean() ? Bytes.keyAfter(a) : new byte[] {(byte) 0xff};
            for (boolean reverse : new boolean[] {false, true}) {
                assertThat(names(index.published(a, b, reverse))).isEqualTo(expected(model, a, b, reverse));
            }
        }
        assertThat(OrderedIndex.word(new byte[] {1, 2}, 0)).isEqualTo(0x0102000000000000L);
        assertThat(OrderedIndex.word(new byte[] {1, 2}, 8)).isZero();
    }

    @Test
    void sequentialInserts_keepTheTreeBalanced() {
        // a degenerate (list-shaped) tree would overflow the stack in the recursive insert long before this
        OrderedIndex<Integer> index = new OrderedIndex<>(v -> true);
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
