package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.Transaction;
import io.nereus.fdb.FdbErrors;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Cancellation and use after commit (fdb-semantics §4.6 items 11 and 15).
 *
 * <p>fdb-java at API 730 sets {@code transaction_used_during_commit_protection_disable} on every database
 * (FDBDatabase constructor), so an operation issued after commit() fails with 2017 by itself and the commit is not
 * failed with it; these tests assert only the offending operation.
 */
class MisuseConformanceTest extends ConformanceTestBase {

    @Test
    void cancel_makesLaterReadsFailTransactionCancelled1025() {
        put("a", "1");
        Transaction tr = newTransaction();
        tr.cancel();

        assertFdbError(FdbErrors.TRANSACTION_CANCELLED, () -> await(tr.get(k("a"))));
        assertFdbError(FdbErrors.TRANSACTION_CANCELLED, () -> await(tr.getRange(spaceRange()).asList()));
    }

    @Test
    void cancel_makesCommitFailTransactionCancelled1025_andAppliesNothing() {
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("1"));
        tr.cancel();

        assertFdbError(FdbErrors.TRANSACTION_CANCELLED, () -> await(tr.commit()));
        assertThat(get("a")).isNull();
    }

    @Test
    void onError_ofCancelledTransaction_failsTransactionCancelled1025() {
        Transaction tr = newTransaction();
        tr.cancel();

        assertFailsWith(FdbErrors.TRANSACTION_CANCELLED,
                tr.onError(new com.apple.foundationdb.FDBException("not_committed", FdbErrors.NOT_COMMITTED)));
    }

    @Test
    void readAfterCommitCalled_failsUsedDuringCommit2017() {
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("1"));
        CompletableFuture<Void> commit = tr.commit();

        assertFdbError(FdbErrors.USED_DURING_COMMIT, () -> await(tr.get(k("a"))));
        await(commit);
    }

    @Test
    void secondCommit_failsUsedDuringCommit2017() {
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("1"));
        await(tr.commit());

        assertFdbError(FdbErrors.USED_DURING_COMMIT, () -> await(tr.commit()));
        assertThat(get("a")).isEqualTo("1");
    }

    @Test
    void writeAfterCommit_failsUsedDuringCommit2017_andIsNotApplied() {
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("1"));
        await(tr.commit());

        assertFdbError(FdbErrors.USED_DURING_COMMIT, () -> {
            tr.set(k("b"), utf8("late"));
            await(tr.get(k("b")));
        });
        assertThat(get("b")).isNull();
    }

    /**
     * The spec text (§4.6 item 11) says 2020 here; the 7.3.68 client answers 2017: ReadYourWritesTransaction::
     * getVersionstamp checks checkUsedDuringCommit() before NativeAPI's 2020 check, and commitStarted stays set after
     * commit for API >= 410. This test follows the real client.
     */
    @Test
    void getVersionstamp_calledAfterCommit_failsUsedDuringCommit2017() {
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("1"));
        await(tr.commit());

        assertFailsWith(FdbErrors.USED_DURING_COMMIT, tr.getVersionstamp());
    }

    @Test
    void getCommittedVersion_ofReadOnlyTransaction_isMinusOne() {
        Transaction tr = newTransaction();
        await(tr.get(k("a")));
        await(tr.commit());

        assertThat(tr.getCommittedVersion()).isEqualTo(-1L);
    }

    @Test
    void getCommittedVersion_ofEmptyTransaction_isMinusOne() {
        Transaction tr = newTransaction();
        await(tr.commit());

        assertThat(tr.getCommittedVersion()).isEqualTo(-1L);
    }

    @Test
    void getCommittedVersion_afterCommitWithWrites_isAtLeastTheReadVersion() {
        Transaction tr = newTransaction();
        long readVersion = await(tr.getReadVersion());
        tr.set(k("a"), utf8("1"));
        await(tr.commit());

        assertThat(tr.getCommittedVersion()).isGreaterThan(readVersion);
    }

    @Test
    void closedTransaction_cannotBeUsed() {
        Transaction tr = db.createTransaction();
        tr.close();

        assertThatThrownBy(() -> await(tr.get(k("a")))).isNotNull();
    }

    @Test
    void getDatabase_returnsTheDatabaseThatCreatedTheTransaction() {
        Transaction tr = newTransaction();

        assertThat(tr.getDatabase()).isSameAs(db);
    }

    @Test
    void transactionRunAndRead_justApplyTheFunction_withoutCommitting() {
        Transaction tr = newTransaction();
        String result = tr.run(t -> {
            t.set(k("a"), utf8("1"));
            return "ran";
        });
        String read = tr.read(t -> str(await(t.get(k("a")))));

        assertThat(result).isEqualTo("ran");
        assertThat(read).isEqualTo("1");
        assertThat(get("a")).as("Transaction.run does not commit").isNull();
    }
}
