package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.Transaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * getKey and key selector resolution (fdb-semantics §4.6 item 12): find the last key less than (or equal to) the
 * reference, then move {@code offset} keys; off the beginning is the empty key, off the end is {@code \xff}.
 * All tests stay inside the test's prefix except the off-the-ends cases, which hold on any database.
 */
class KeySelectorConformanceTest extends ConformanceTestBase {

    @Test
    void factories_encodeKeyOrEqualAndOffset() {
        byte[] key = k("x");
        assertSelector(KeySelector.lastLessThan(key), key, false, 0);
        assertSelector(KeySelector.lastLessOrEqual(key), key, true, 0);
        assertSelector(KeySelector.firstGreaterThan(key), key, true, 1);
        assertSelector(KeySelector.firstGreaterOrEqual(key), key, false, 1);
        assertSelector(KeySelector.firstGreaterOrEqual(key).add(3), key, false, 4);
    }

    private static void assertSelector(KeySelector s, byte[] key, boolean orEqual, int offset) {
        assertThat(s.getKey()).isEqualTo(key);
        assertThat(s.orEqual()).isEqualTo(orEqual);
        assertThat(s.getOffset()).isEqualTo(offset);
    }

    /** Keys a, c, e exist; "c" is a present reference, "d" an absent one. */
    @ParameterizedTest(name = "{0}({1}) -> {2}")
    @CsvSource({
            "lastLessThan, c, a", "lastLessOrEqual, c, c", "firstGreaterThan, c, e", "firstGreaterOrEqual, c, c",
            "lastLessThan, d, c", "lastLessOrEqual, d, c", "firstGreaterThan, d, e", "firstGreaterOrEqual, d, e"})
    void getKey_factorySelectors_resolveAsDocumented(String factory, String reference, String expected) {
        putAll("a", "c", "e");
        Transaction tr = newTransaction();

        byte[] resolved = await(tr.getKey(selector(factory, k(reference))));

        assertThat(suffix(resolved)).isEqualTo(expected);
    }

    private static KeySelector selector(String factory, byte[] key) {
        return switch (factory) {
            case "lastLessThan" -> KeySelector.lastLessThan(key);
            case "lastLessOrEqual" -> KeySelector.lastLessOrEqual(key);
            case "firstGreaterThan" -> KeySelector.firstGreaterThan(key);
            case "firstGreaterOrEqual" -> KeySelector.firstGreaterOrEqual(key);
            default -> throw new IllegalArgumentException(factory);
        };
    }

    @Test
    void getKey_positiveAndNegativeOffsets_moveThatManyKeys() {
        putAll("a", "b", "c", "d", "e");
        Transaction tr = newTransaction();

        assertThat(suffix(await(tr.getKey(KeySelector.firstGreaterOrEqual(k("a")).add(2))))).isEqualTo("c");
        assertThat(suffix(await(tr.getKey(KeySelector.firstGreaterThan(k("a")).add(3))))).isEqualTo("e");
        assertThat(suffix(await(tr.getKey(KeySelector.lastLessOrEqual(k("e")).add(-2))))).isEqualTo("c");
        assertThat(suffix(await(tr.getKey(KeySelector.lastLessThan(k("e")).add(-3))))).isEqualTo("a");
        assertThat(suffix(await(tr.getKey(new KeySelector(k("c"), true, -1))))).isEqualTo("b");
        assertThat(suffix(await(tr.getKey(new KeySelector(k("bb"), false, 2))))).isEqualTo("d");
    }

    @Test
    void getKey_offsetsSkipClearedKeys() {
        putAll("a", "b", "c", "d");
        try (Transaction tr = db.createTransaction()) {
            tr.clear(k("b"));
            tr.clear(k("c"));
            await(tr.commit());
        }
        Transaction tr = newTransaction();

        assertThat(suffix(await(tr.getKey(KeySelector.firstGreaterThan(k("a")))))).isEqualTo("d");
        assertThat(suffix(await(tr.getKey(KeySelector.lastLessThan(k("d")))))).isEqualTo("a");
    }

    @Test
    void getKey_offTheBeginning_resolvesToTheEmptyKey() {
        Transaction tr = newTransaction();

        assertThat(await(tr.getKey(KeySelector.lastLessThan(new byte[0])))).isEmpty();
        assertThat(await(tr.getKey(KeySelector.lastLessOrEqual(new byte[0]).add(-3)))).isEmpty();
    }

    @Test
    void getKey_offTheEnd_resolvesToFF() {
        putAll("a");
        Transaction tr = newTransaction();

        assertThat(await(tr.getKey(KeySelector.firstGreaterOrEqual(bytes(0xff))))).containsExactly(0xff);
        assertThat(await(tr.getKey(KeySelector.lastLessOrEqual(bytes(0xff)).add(1)))).containsExactly(0xff);
    }

    @Test
    void getKey_offTheEnd_withReadSystemKeys_resolvesToFFFF() {
        putAll("a");
        Transaction tr = newTransaction();
        tr.options().setReadSystemKeys();

        assertThat(await(tr.getKey(KeySelector.lastLessOrEqual(bytes(0xff, 0xff)).add(1))))
                .containsExactly(0xff, 0xff);
    }

    @Test
    void getKey_snapshotView_resolvesTheSame() {
        putAll("a", "c");
        Transaction tr = newTransaction();

        assertThat(suffix(await(tr.snapshot().getKey(KeySelector.firstGreaterThan(k("a")))))).isEqualTo("c");
    }
}
