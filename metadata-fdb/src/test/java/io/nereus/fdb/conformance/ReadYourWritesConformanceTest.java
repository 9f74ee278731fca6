package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import org.junit.jupiter.api.Test;

/** Reads merge the transaction's own writes over the snapshot (fdb-semantics §4.6 item 6). */
class ReadYourWritesConformanceTest extends ConformanceTestBase {

    @Test
    void get_seesOwnSet_beforeCommit_whileOthersDoNot() {
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("mine"));

        assertThat(str(await(tr.get(k("a"))))).isEqualTo("mine");
        assertThat(get("a")).as("uncommitted writes are invisible to other transactions").isNull();
    }

    @Test
    void get_seesOwnOverwrite_lastSetWins() {
        put("a", "stored");
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("first"));
        tr.set(k("a"), utf8("second"));

        assertThat(str(await(tr.get(k("a"))))).isEqualTo("second");
    }

    @Test
    void get_seesOwnClear_asAbsent() {
        put("a", "stored");
        Transaction tr = newTransaction();
        tr.clear(k("a"));

        assertThat(await(tr.get(k("a")))).isNull();
    }

    @Test
    void getRange_seesOwnSetsAndClears_mergedInKeyOrder() {
        putAll("a", "c", "e");
        Transaction tr = newTransaction();
        tr.set(k("b"), utf8("new-b"));
        tr.clear(k("c"));
        tr.set(k("e"), utf8("new-e"));
        tr.set(k("f"), utf8("new-f"));

        var rows = await(tr.getRange(spaceRange()).asList());
        assertThat(suffixes(rows)).containsExactly("a", "b", "e", "f");
        assertThat(str(rows.get(2).getValue())).isEqualTo("new-e");
    }

    @Test
    void getRange_seesOwnRangeClear_andSetsAfterIt() {
        putAll("a", "b", "c", "d");
        Transaction tr = newTransaction();
        tr.clear(k("b"), k("d"));
        tr.set(k("c"), utf8("re-set"));

        assertThat(suffixes(await(tr.getRange(spaceRange()).asList()))).containsExactly("a", "c", "d");
        assertThat(await(tr.get(k("b")))).isNull();
    }

    @Test
    void getRange_seesClearRangeStartsWith() {
        putAll("pa", "pb", "q");
        Transaction tr = newTransaction();
        tr.clear(Range.startsWith(k("p")));

        assertThat(suffixes(await(tr.getRange(spaceRange()).asList()))).containsExactly("q");
    }

    @Test
    void get_seesOwnAtomicAdd_evaluatedOnTheSnapshotValue() {
        putRaw(k("n"), le64(40));
        Transaction tr = newTransaction();
        tr.mutate(MutationType.ADD, k("n"), le64(1));
        tr.mutate(MutationType.ADD, k("n"), le64(1));

        assertThat(fromLe64(await(tr.get(k("n"))))).isEqualTo(42L);
    }

    @Test
    void get_seesAtomicOpAppliedAfterOwnSet() {
        Transaction tr = newTransaction();
        tr.set(k("n"), le64(5));
        tr.mutate(MutationType.ADD, k("n"), le64(3));
        tr.mutate(MutationType.MAX, k("n"), le64(7));

        assertThat(fromLe64(await(tr.get(k("n"))))).isEqualTo(8L);
    }

    @Test
    void get_seesSetAfterOwnAtomicOp() {
        putRaw(k("n"), le64(1));
        Transaction tr = newTransaction();
        tr.mutate(MutationType.ADD, k("n"), le64(1));
        tr.set(k("n"), le64(100));

        assertThat(fromLe64(await(tr.get(k("n"))))).isEqualTo(100L);
    }

    @Test
    void getRange_seesOwnAtomicOps_includingCompareAndClear() {
        putRaw(k("a"), le64(1));
        putRaw(k("b"), le64(2));
        Transaction tr = newTransaction();
        tr.mutate(MutationType.ADD, k("a"), le64(1));
        tr.mutate(MutationType.COMPARE_AND_CLEAR, k("b"), le64(2));
        tr.mutate(MutationType.BIT_OR, k("c"), bytes(0x0f));

        var rows = await(tr.getRange(spaceRange()).asList());
        assertThat(suffixes(rows)).containsExactly("a", "c");
        assertThat(fromLe64(rows.get(0).getValue())).isEqualTo(2L);
        assertThat(rows.get(1).getValue()).containsExactly(0x0f);
    }

    @Test
    void getKey_resolvesSelectorsOverOwnWrites() {
        putAll("a", "c");
        Transaction tr = newTransaction();
        tr.set(k("b"), utf8("new"));
        tr.clear(k("c"));
        tr.set(k("d"), utf8("new"));

        assertThat(suffix(await(tr.getKey(KeySelector.firstGreaterThan(k("a")))))).isEqualTo("b");
        assertThat(suffix(await(tr.getKey(KeySelector.firstGreaterThan(k("b")))))).isEqualTo("d");
        assertThat(suffix(await(tr.getKey(KeySelector.lastLessThan(k("d")))))).isEqualTo("b");
    }

    @Test
    void snapshotView_seesOwnWritesByDefault() {
        put("a", "stored");
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("mine"));
        tr.set(k("b"), utf8("mine-b"));

        assertThat(str(await(tr.snapshot().get(k("a"))))).isEqualTo("mine");
        assertThat(suffixes(await(tr.snapshot().getRange(spaceRange()).asList()))).containsExactly("a", "b");
    }

    @Test
    void committedWrites_areVisibleToLaterTransactions_exactlyAsTheTransactionSawThem() {
        putAll("a", "b", "c");
        try (Transaction tr = db.createTransaction()) {
            tr.clear(k("a"), k("c"));
            tr.set(k("b"), utf8("kept"));
            tr.mutate(MutationType.APPEND_IF_FITS, k("c"), utf8("+x"));
            await(tr.commit());
        }

        var rows = readSpace();
        assertThat(suffixes(rows)).containsExactly("b", "c");
        assertThat(str(rows.get(0).getValue())).isEqualTo("kept");
        assertThat(str(rows.get(1).getValue())).isEqualTo("v-c+x");
    }
}
