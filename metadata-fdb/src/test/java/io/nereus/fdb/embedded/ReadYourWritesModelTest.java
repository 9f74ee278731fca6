package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Randomized, seeded: a transaction's reads (gets, range reads both ways with limits, key selectors) over
 * random committed data and random uncommitted writes agree with a plain sorted-map model, and so does the
 * committed result.
 */
class ReadYourWritesModelTest {
    private static final int KEY_SPACE = 40;

    private static byte[] key(int i) {
        return new byte[] {'k', (byte) (i / 10 + '0'), (byte) (i % 10 + '0')};
    }

    private static byte[] add(byte[] existing, byte[] param) {
        if (existing == null || existing.length == 0) {
            return param;
        }
        byte[] r = new byte[param.length];
        int carry = 0;
        for (int i = 0; i < param.length; i++) {
            int s = (i < existing.length ? existing[i] & 0xff : 0) + (param[i] & 0xff) + carry;
            r[i] = (byte) s;
            carry = s >> 8;
        }
        return r;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
    void randomWritesAndReads_matchModel(long seed) {
        Random random = new Random(seed);
        TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
        try (EmbeddedFdb db = EmbeddedFdb.builder().executor(Runnable::run).build()) {
            db.run(tr -> {
                for (int i = 0; i < KEY_SPACE; i++) {
                    if (random.nextBoolean()) {
                        byte[] v = {(byte) random.nextInt(256)};
                        tr.set(key(i), v);
                        model.put(key(i), v);
                    }
                }
                return null;
            });
            Transaction tr = db.createTransaction();
            for (int step = 0; step < 300; step++) {
                int op = random.nextInt(10);
                int a = random.nextInt(KEY_SPACE);
                int b = a + random.nextInt(8);
                switch (op) {
                    case 0, 1 -> {
                        byte[] v = {(byte) random.nextInt(256), 1};
                        tr.set(key(a), v);
                        model.put(key(a), v);
                    }
                    case 2 -> {
                        tr.clear(key(a));
                        model.remove(key(a));
                    }
                    case 3 -> {
                        tr.clear(key(a), key(b));
                        model.subMap(key(a), key(b)).clear();
                    }
                    case 4 -> {
                        byte[] p = {(byte) random.nextInt(256), 0};
                        tr.mutate(MutationType.ADD, key(a), p);
                        model.put(key(a), add(model.get(key(a)), p));
                    }
                    case 5 -> assertThat(tr.get(key(a)).join()).as("get %d at step %d", a, step)
                            .isEqualTo(model.get(key(a)));
                    case 6, 7 -> {
                        boolean reverse = random.nextBoolean();
                        int limit = random.nextInt(5);
                        List<KeyValue> rows = tr.getRange(key(a), key(b), limit, reverse).asList().join();
                        List<Map.Entry<byte[], byte[]>> expected = new ArrayList<>(
                                (reverse ? model.subMap(key(a), true, key(b), false).descendingMap() : model.subMap(key(a), true, key(b), false))
                                        .entrySet());
                        if (limit > 0 && expected.size() > limit) {
                            expected = expected.subList(0, limit);
                        }
                        assertThat(rows).hasSize(expected.size());
                        for (int i = 0; i < rows.size(); i++) {
                            assertThat(rows.get(i).getKey()).isEqualTo(expected.get(i).getKey());
                            assertThat(rows.get(i).getValue()).isEqualTo(expected.get(i).getValue());
                        }
                    }
                    case 8 -> {
                        int offset = random.nextInt(5) - 2;
                        boolean orEqual = random.nextBoolean();
                        byte[] got = tr.getKey(new KeySelector(key(a), orEqual, offset)).join();
                        assertThat(got).as("selector (%d, %s, %d) at step %d", a, orEqual, offset, step)
                                .isEqualTo(resolve(model, key(a), orEqual, offset));
                    }
                    default -> {
                        List<KeyValue> rows = new ArrayList<>();
                        var it = tr.getRange(key(a), key(b + 10)).iterator();
                        while (it.hasNext()) {
                            rows.add(it.next());
                        }
                        assertThat(rows).hasSize(model.subMap(key(a), key(b + 10)).size());
                    }
                }
            }
            tr.commit().join();
            tr.close();
            List<KeyValue> all = db.read(t -> t.getRange(new byte[0], new byte[] {(byte) 0xff}).asList().join());
            assertThat(all).hasSize(model.size());
            int i = 0;
            for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
                assertThat(all.get(i).getKey()).isEqualTo(e.getKey());
                assertThat(all.get(i++).getValue()).isEqualTo(e.getValue());
            }
        }
    }

    private static byte[] resolve(TreeMap<byte[], byte[]> model, byte[] ref, boolean orEqual, int offset) {
        List<byte[]> keys = new ArrayList<>(model.keySet());
        int base = -1;
        for (int i = 0; i < keys.size(); i++) {
            int c = Arrays.compareUnsigned(keys.get(i), ref);
            if (c < 0 || (orEqual && c == 0)) {
                base = i;
            }
        }
        int target = base + offset;
        if (target < 0) {
            return new byte[0];
        }
        if (target >= keys.size()) {
            return new byte[] {(byte) 0xff};
        }
        return keys.get(target);
    }

    @Test
    void conflictHistory_pointAndRangeWrites() {
        ConflictHistory h = new ConflictHistory();
        h.record(List.of(KeyRange.single(key(5))), 10);
        h.record(List.of(new KeyRange(key(20), key(30))), 20);
        assertThat(h.conflicts(List.of(KeyRange.single(key(5))), 9)).isTrue();
        assertThat(h.conflicts(List.of(KeyRange.single(key(5))), 10)).isFalse();
        assertThat(h.conflicts(List.of(new KeyRange(key(0), key(5))), 0)).isFalse();
        assertThat(h.conflicts(List.of(new KeyRange(key(0), key(6))), 0)).isTrue();
        assertThat(h.conflicts(List.of(new KeyRange(key(29), key(35))), 19)).isTrue();
        assertThat(h.conflicts(List.of(new KeyRange(key(30), key(35))), 0)).isFalse();
        h.record(List.of(new KeyRange(key(0), key(40))), 30);
        assertThat(h.conflicts(List.of(KeyRange.single(key(35))), 29)).isTrue();
        assertThat(h.conflicts(List.of(KeyRange.single(key(45))), 0)).isFalse();
    }
}
