package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import io.nereus.fdb.FdbErrors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * Serializable commits: read conflict ranges against later write conflict ranges (fdb-semantics §4.6 items 2-5).
 *
 * <p>Pattern: transaction {@code tr} reads (taking its read version), another transaction commits a write, then
 * {@code tr} writes something unrelated and commits.
 */
class ConflictConformanceTest extends ConformanceTestBase {

    private void commitUnrelatedWrite(Transaction tr) {
        tr.set(k("unrelated"), utf8("x"));
        await(tr.commit());
    }

    @Test
    void commit_readKeyMeetsLaterWrite_failsNotCommitted1020_andAppliesNothing() {
        put("a", "1");
        Transaction tr = newTransaction();
        await(tr.get(k("a")));
        put("a", "2");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
        assertThat(get("unrelated")).isNull();
    }

    @Test
    void commit_readRangeMeetsLaterWrite_failsNotCommitted1020() {
        putAll("a", "c", "e");
        Transaction tr = newTransaction();
        assertThat(await(tr.getRange(k("a"), k("f")).asList())).hasSize(3);
        put("c", "changed");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
    }

    @Test
    void commit_readRangeMeetsLaterInsertOfNewKey_failsNotCommitted1020() {
        putAll("a", "e");
        Transaction tr = newTransaction();
        assertThat(await(tr.getRange(k("a"), k("f")).asList())).hasSize(2);
        put("b", "phantom");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
    }

    @Test
    void commit_readRangeMeetsLaterRangeClear_failsNotCommitted1020() {
        putAll("m");
        Transaction tr = newTransaction();
        await(tr.get(k("m")));
        try (Transaction other = db.createTransaction()) {
            other.clear(k("a"), k("z"));
            await(other.commit());
        }

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
    }

    @Test
    void commit_readEmptyKeyMeetsLaterWrite_failsNotCommitted1020() {
        Transaction tr = newTransaction();
        assertThat(await(tr.get(k("absent")))).isNull();
        put("absent", "now-present");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
    }

    @Test
    void commit_readOutsideLaterWrite_succeeds() {
        putAll("a", "b");
        Transaction tr = newTransaction();
        await(tr.get(k("a")));
        await(tr.getRange(k("a"), k("b")).asList());
        put("b", "changed");

        commitUnrelatedWrite(tr);
        assertThat(get("unrelated")).isEqualTo("x");
    }

    @Test
    void commit_writeCommittedBeforeReadVersion_doesNotConflict() {
        put("a", "1");
        Transaction tr = newTransaction();
        put("a", "2");
        assertThat(str(await(tr.get(k("a"))))).isEqualTo("2");

        commitUnrelatedWrite(tr);
    }

    @Test
    void commit_blindWrite_neverConflicts_andTheLaterCommitWins() {
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        tr.set(k("a"), utf8("from-tr"));
        put("a", "from-other");

        await(tr.commit());
        assertThat(get("a")).isEqualTo("from-tr");
    }

    @Test
    void commit_writeWriteOverlapWithReadOfOtherKey_isNotAConflict() {
        putAll("a", "b");
        Transaction tr = newTransaction();
        await(tr.get(k("b")));
        tr.set(k("a"), utf8("from-tr"));
        try (Transaction other = db.createTransaction()) {
            other.set(k("a"), utf8("from-other"));
            other.clear(k("a"), k("a\u0001"));
            other.set(k("a"), utf8("from-other-2"));
            await(other.commit());
        }

        await(tr.commit());
        assertThat(get("a")).isEqualTo("from-tr");
    }

    @Test
    void commit_snapshotRead_neverConflicts() {
        putAll("a", "b", "c");
        Transaction tr = newTransaction();
        await(tr.snapshot().get(k("a")));
        await(tr.snapshot().getRange(k("a"), k("d")).asList());
        await(tr.snapshot().getKey(KeySelector.firstGreaterThan(k("a"))));
        put("a", "changed");
        put("b", "changed");
        put("bb", "inserted");

        commitUnrelatedWrite(tr);
    }

    @Test
    void commit_readOnlyTransaction_neverConflicts_andHasCommittedVersionMinusOne() {
        put("a", "1");
        Transaction tr = newTransaction();
        await(tr.get(k("a")));
        await(tr.getRange(spaceRange()).asList());
        put("a", "2");

        await(tr.commit());
        assertThat(tr.getCommittedVersion()).isEqualTo(-1L);
    }

    /**
     * Ten keys k0..k9; {@code tr} reads the range with limit 2 (gets k0, k1). Only [begin, keyAfter(k1)) is a
     * read conflict range (RYWImpl::addConflictRange for a limited forward read).
     */
    @ParameterizedTest(name = "write to {0} conflicts: {1}")
    @CsvSource({"k0, true", "k1, true", "k2, false", "k8, false", "k9, false"})
    void commit_limitedRangeRead_conflictsOnlyWithWritesInTheReturnedPrefix(String written, boolean conflicts) {
        putTenKeys();
        Transaction tr = newTransaction();
        assertThat(suffixes(await(tr.getRange(spaceRange(), 2).asList()))).containsExactly("k0", "k1");
        put(written, "changed");

        if (conflicts) {
            assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
        } else {
            commitUnrelatedWrite(tr);
        }
    }

    /** Reverse read with limit 2 gets k9, k8; its read conflict range is [k8, end). */
    @ParameterizedTest(name = "write to {0} conflicts: {1}")
    @CsvSource({"k9, true", "k8, true", "k7, false", "k0, false"})
    void commit_reverseLimitedRangeRead_conflictsOnlyWithWritesInTheReturnedSuffix(String written, boolean conflicts) {
        putTenKeys();
        Transaction tr = newTransaction();
        assertThat(suffixes(await(tr.getRange(k("k"), k("l"), 2, true).asList()))).containsExactly("k9", "k8");
        put(written, "changed");

        if (conflicts) {
            assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
        } else {
            commitUnrelatedWrite(tr);
        }
    }

    private void putTenKeys() {
        try (Transaction tr = db.createTransaction()) {
            for (int i = 0; i < 10; i++) {
                tr.set(k("k" + i), utf8("v" + i));
            }
            await(tr.commit());
        }
    }

    /**
     * getKey(firstGreaterOrEqual(b)) over keys a, c, e resolves to c; its conflict range is [b, keyAfter(c)), so an
     * insert of "bb" (which would change the answer) conflicts and a write to "d" does not.
     */
    @ParameterizedTest(name = "write to {0} conflicts: {1}")
    @CsvSource({"bb, true", "c, true", "d, false", "a, false"})
    void commit_getKey_conflictsOnlyBetweenReferenceAndResult(String written, boolean conflicts) {
        putAll("a", "c", "e");
        Transaction tr = newTransaction();
        assertThat(suffix(await(tr.getKey(KeySelector.firstGreaterOrEqual(k("b")))))).isEqualTo("c");
        put(written, "changed");

        if (conflicts) {
            assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
        } else {
            commitUnrelatedWrite(tr);
        }
    }

    @Test
    void commit_readOfKeyAlreadySetByThisTransaction_addsNoReadConflict() {
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        tr.set(k("a"), utf8("mine"));
        assertThat(str(await(tr.get(k("a"))))).isEqualTo("mine");
        put("a", "other");

        await(tr.commit());
        assertThat(get("a")).isEqualTo("mine");
    }

    @Test
    void commit_readOfRangeAlreadyClearedByThisTransaction_addsNoReadConflict() {
        putAll("b");
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        tr.clear(k("a"), k("c"));
        assertThat(await(tr.getRange(k("a"), k("c")).asList())).isEmpty();
        assertThat(await(tr.get(k("b")))).isNull();
        put("b", "other");

        await(tr.commit());
        assertThat(get("b")).isNull();
    }

    @Test
    void commit_readAfterAtomicOpOnSameKey_addsReadConflict_failsNotCommitted1020() {
        putRaw(k("n"), le64(1));
        Transaction tr = newTransaction();
        tr.mutate(MutationType.ADD, k("n"), le64(1));
        assertThat(fromLe64(await(tr.get(k("n"))))).isEqualTo(2L);
        putRaw(k("n"), le64(10));

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(tr.commit()));
        assertThat(fromLe64(getRaw(k("n")))).isEqualTo(10L);
    }

    @Test
    void commit_concurrentAtomicAdds_doNotConflict_andBothApply() {
        putRaw(k("n"), le64(1));
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        tr.mutate(MutationType.ADD, k("n"), le64(10));
        try (Transaction other = db.createTransaction()) {
            other.mutate(MutationType.ADD, k("n"), le64(100));
            await(other.commit());
        }

        await(tr.commit());
        assertThat(fromLe64(getRaw(k("n")))).isEqualTo(111L);
    }

    @Test
    void commit_explicitReadConflictKey_conflictsWithLaterWrite() {
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        tr.addReadConflictKey(k("a"));
        put("a", "1");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
    }

    @Test
    void commit_explicitReadConflictKey_coversOnlyThatKey() {
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        tr.addReadConflictKey(k("a"));
        put("a\u0000", "just-after");

        commitUnrelatedWrite(tr);
    }

    @Test
    void commit_explicitReadConflictRange_conflictsWithWriteInside_andIsEndExclusive() {
        Transaction inside = newTransaction();
        Transaction atEnd = newTransaction();
        await(inside.getReadVersion());
        await(atEnd.getReadVersion());
        inside.addReadConflictRange(k("b"), k("d"));
        atEnd.addReadConflictRange(k("d"), k("f"));
        put("c", "1");
        put("f", "1");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(inside));
        commitUnrelatedWrite(atEnd);
    }

    @Test
    void commit_explicitWriteConflictKey_makesConcurrentReaderConflict() {
        Transaction reader = newTransaction();
        await(reader.get(k("a")));
        try (Transaction marker = db.createTransaction()) {
            marker.addWriteConflictKey(k("a"));
            marker.set(k("elsewhere"), utf8("1"));
            await(marker.commit());
        }

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(reader));
        assertThat(get("a")).as("a write conflict range writes nothing").isNull();
    }

    @Test
    void commit_writeConflictRangeOnly_isNotReadOnly_andGetsACommitVersion() {
        Transaction tr = newTransaction();
        tr.addWriteConflictRange(k("a"), k("b"));
        await(tr.commit());

        assertThat(tr.getCommittedVersion()).isPositive();
    }

    @Test
    void addReadConflictIfNotSnapshot_onSnapshotView_returnsFalseAndAddsNothing() {
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        assertThat(tr.snapshot().isSnapshot()).isTrue();
        assertThat(tr.snapshot().addReadConflictKeyIfNotSnapshot(k("a"))).isFalse();
        assertThat(tr.snapshot().addReadConflictRangeIfNotSnapshot(k("b"), k("c"))).isFalse();
        put("a", "1");
        put("b", "1");

        commitUnrelatedWrite(tr);
    }

    @Test
    void addReadConflictIfNotSnapshot_onTransaction_returnsTrueAndConflicts() {
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        assertThat(tr.isSnapshot()).isFalse();
        assertThat(tr.addReadConflictRangeIfNotSnapshot(k("b"), k("c"))).isTrue();
        put("b", "1");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(tr));
    }

    @Test
    void onError_afterNotCommitted_resetsTheTransaction_andTheRetrySucceeds() {
        put("a", "1");
        Transaction tr = newTransaction();
        await(tr.get(k("a")));
        tr.set(k("b"), utf8("from-first-attempt"));
        put("a", "2");
        Throwable failure = assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(tr.commit()));

        Transaction retry = track(await(tr.onError(failure)));
        assertThat(await(retry.get(k("b")))).as("writes are dropped by the reset").isNull();
        assertThat(str(await(retry.get(k("a"))))).isEqualTo("2");
        retry.set(k("b"), utf8("from-retry"));
        await(retry.commit());

        assertThat(get("b")).isEqualTo("from-retry");
    }

    @Test
    void commit_clearRangeWrite_conflictsWithReaderOfAnyKeyInside() {
        Transaction reader = newTransaction();
        await(reader.getRange(Range.startsWith(k("p"))).asList());
        try (Transaction clearer = db.createTransaction()) {
            clearer.clear(Range.startsWith(k("p")));
            await(clearer.commit());
        }

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(reader));
    }

    @Test
    void commit_clearOfAbsentKey_stillConflictsWithItsReader() {
        // the clear changes nothing stored, yet its write conflict range is the key's
        Transaction reader = newTransaction();
        assertThat(await(reader.get(k("absent")))).isNull();
        try (Transaction clearer = db.createTransaction()) {
            clearer.clear(k("absent"));
            clearer.clear(k("also-absent"));
            clearer.set(k("present"), utf8("1"));
            await(clearer.commit());
        }

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(reader));
    }

    @Test
    void commit_keySetThenTakenOverByARangeClear_stillConflictsWithItsReader() {
        put("q1", "stored");
        Transaction reader = newTransaction();
        assertThat(await(reader.get(k("q1")))).isEqualTo(utf8("stored"));
        try (Transaction writer = db.createTransaction()) {
            writer.set(k("q1"), utf8("set first"));
            writer.clear(k("q0"), k("q2"));
            await(writer.commit());
        }

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(reader));
        assertThat(get("q1")).isNull();
    }

    @Test
    void commit_manyKeyWrites_eachConflictsWithItsOwnReaderOnly() {
        Transaction readsWritten = newTransaction();
        Transaction readsOther = newTransaction();
        await(readsWritten.get(k("m17")));
        await(readsOther.get(k("n")));
        try (Transaction writer = db.createTransaction()) {
            for (int i = 0; i < 40; i++) {
                writer.set(k("m" + i), utf8("v" + i));
            }
            writer.clear(k("m3"));
            await(writer.commit());
        }

        commitUnrelatedWrite(readsOther);
        assertFdbError(FdbErrors.NOT_COMMITTED, () -> commitUnrelatedWrite(readsWritten));
        assertThat(get("m3")).isNull();
        assertThat(get("m39")).isEqualTo("v39");
    }
}
