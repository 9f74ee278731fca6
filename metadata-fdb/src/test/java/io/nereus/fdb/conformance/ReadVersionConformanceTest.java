package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.Transaction;
import io.nereus.fdb.FdbErrors;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Read versions, MVCC snapshots and the 5-second window (fdb-semantics §4.6 items 1 and 8).
 */
class ReadVersionConformanceTest extends ConformanceTestBase {

    @Test
    void readVersion_isTakenLazilyAtFirstRead_soCommitsAfterCreationAreVisible() {
        Transaction tr = newTransaction();
        put("a", "committed-after-creation");

        assertThat(str(await(tr.get(k("a"))))).isEqualTo("committed-after-creation");
    }

    @Test
    void getReadVersion_isAtLeastEveryAcknowledgedCommitVersion() {
        long committed = put("a", "1");

        Transaction tr = newTransaction();
        assertThat(await(tr.getReadVersion())).isGreaterThanOrEqualTo(committed);
        assertThat(str(await(tr.get(k("a"))))).isEqualTo("1");
    }

    @Test
    void getReadVersion_isStableForTheWholeTransaction() {
        Transaction tr = newTransaction();
        long first = await(tr.getReadVersion());
        put("a", "1");

        assertThat(await(tr.getReadVersion())).isEqualTo(first);
    }

    @Test
    void committedVersions_areStrictlyIncreasing() {
        long v1 = put("a", "1");
        long v2 = put("b", "2");
        long v3 = put("a", "3");

        assertThat(v1).isPositive();
        assertThat(v2).isGreaterThan(v1);
        assertThat(v3).isGreaterThan(v2);
    }

    @Test
    void reads_seeTheSnapshotAtTheReadVersion_notLaterCommits() {
        put("a", "old");
        Transaction tr = newTransaction();
        assertThat(str(await(tr.get(k("a"))))).isEqualTo("old");

        try (Transaction other = db.createTransaction()) {
            other.set(k("a"), utf8("new"));
            other.set(k("b"), utf8("inserted"));
            other.clear(k("nothing"));
            await(other.commit());
        }

        assertThat(str(await(tr.get(k("a"))))).isEqualTo("old");
        assertThat(await(tr.get(k("b")))).isNull();
        assertThat(suffixes(await(tr.getRange(spaceRange()).asList()))).containsExactly("a");
        assertThat(get("a")).isEqualTo("new");
    }

    @Test
    void setReadVersion_readsTheSnapshotAtThatVersion() {
        long v1 = put("a", "first");
        put("a", "second");

        Transaction tr = newTransaction();
        tr.setReadVersion(v1);

        assertThat(await(tr.getReadVersion())).isEqualTo(v1);
        assertThat(str(await(tr.get(k("a"))))).isEqualTo("first");
    }

    @Test
    void setReadVersion_olderThanMvccWindow_failsTransactionTooOld1007() {
        long v1 = put("a", "1");
        letMvccWindowPass();
        put("b", "2");

        Transaction tr = newTransaction();
        tr.setReadVersion(v1);
        assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, () -> await(tr.get(k("a"))));
    }

    @Test
    void read_afterMvccWindowPassed_failsTransactionTooOld1007() {
        put("a", "1");
        Transaction tr = newTransaction();
        await(tr.getReadVersion());

        letMvccWindowPass();

        assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, () -> await(tr.get(k("a"))));
    }

    @Test
    void rangeRead_afterMvccWindowPassed_failsTransactionTooOld1007() {
        put("a", "1");
        Transaction tr = newTransaction();
        await(tr.get(k("a")));

        letMvccWindowPass();

        assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, () -> await(tr.getRange(spaceRange()).asList()));
    }

    @Test
    void commitWithWrites_afterMvccWindowPassed_failsTransactionTooOld1007_andAppliesNothing() {
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        tr.set(k("a"), utf8("late"));

        letMvccWindowPass();

        assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, () -> await(tr.commit()));
        assertThat(get("a")).isNull();
    }

    @Test
    void readOnlyCommit_afterMvccWindowPassed_succeedsWithCommittedVersionMinusOne() {
        put("a", "1");
        Transaction tr = newTransaction();
        assertThat(str(await(tr.get(k("a"))))).isEqualTo("1");

        letMvccWindowPass();

        await(tr.commit());
        assertThat(tr.getCommittedVersion()).isEqualTo(-1L);
    }

    @Test
    void read_withinMvccWindow_stillSucceeds() {
        put("a", "1");
        Transaction tr = newTransaction();
        await(tr.getReadVersion());

        letTimePass(Duration.ofSeconds(2));

        assertThat(str(await(tr.get(k("a"))))).isEqualTo("1");
    }

    @Test
    void onError_afterTransactionTooOld_retriesWithAFreshReadVersion() {
        put("a", "1");
        AtomicInteger attempts = new AtomicInteger();

        String value = db.run(tr -> {
            int attempt = attempts.incrementAndGet();
            await(tr.getReadVersion());
            if (attempt == 1) {
                letMvccWindowPass();
            }
            return str(await(tr.get(k("a"))));
        });

        assertThat(value).isEqualTo("1");
        assertThat(attempts).hasValue(2);
    }
}
