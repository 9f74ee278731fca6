package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import io.nereus.fdb.FdbErrors;
import io.nereus.fdb.embedded.CommitFault;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Commit failures a real cluster can produce but an in-process store never does by itself, injected with
 * {@link EmbeddedFdb#injectCommitFaults(CommitFault, int)} (fdb-semantics §4.6 item 9). Embedded only: on a real
 * cluster every test here is skipped with a reason.
 */
class FaultInjectionConformanceTest extends ConformanceTestBase {
    private EmbeddedFdb engine;

    @BeforeEach
    void requireFaultInjection() {
        engine = assumeFaultInjection();
    }

    private Transaction writing(String suffix, String value) {
        Transaction tr = newTransaction();
        tr.set(k(suffix), utf8(value));
        return tr;
    }

    @Test
    void notCommitted_failsTheCommitWith1020_andAppliesNothing() {
        engine.injectCommitFaults(CommitFault.NOT_COMMITTED, 1);

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(writing("a", "1").commit()));
        assertThat(get("a")).isNull();
    }

    @Test
    void transactionTooOld_failsTheCommitWith1007_andAppliesNothing() {
        engine.injectCommitFaults(CommitFault.TRANSACTION_TOO_OLD, 1);

        assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, () -> await(writing("a", "1").commit()));
        assertThat(get("a")).isNull();
    }

    @Test
    void unknownResultApplied_failsTheCommitWith1021_butTheWritesAreVisible() {
        engine.injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);

        assertFdbError(FdbErrors.COMMIT_UNKNOWN_RESULT, () -> await(writing("a", "1").commit()));
        assertThat(get("a")).isEqualTo("1");
    }

    @Test
    void unknownResultNotApplied_failsTheCommitWith1021_andAppliesNothing() {
        engine.injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);

        assertFdbError(FdbErrors.COMMIT_UNKNOWN_RESULT, () -> await(writing("a", "1").commit()));
        assertThat(get("a")).isNull();
    }

    @Test
    void faults_affectExactlyTheNextCountCommitsWithWrites() {
        engine.injectCommitFaults(CommitFault.NOT_COMMITTED, 2);

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(writing("a", "1").commit()));
        assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(writing("a", "2").commit()));
        await(writing("a", "3").commit());
        assertThat(get("a")).isEqualTo("3");
    }

    @Test
    void faults_doNotConsumeReadOnlyCommits() {
        engine.injectCommitFaults(CommitFault.NOT_COMMITTED, 1);
        Transaction readOnly = newTransaction();
        await(readOnly.get(k("a")));
        await(readOnly.commit());

        assertThat(readOnly.getCommittedVersion()).isEqualTo(-1L);
        assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(writing("a", "1").commit()));
    }

    @Test
    void run_retriesInjectedNotCommitted_andAppliesTheBodyOnce() {
        engine.injectCommitFaults(CommitFault.NOT_COMMITTED, 3);
        AtomicInteger attempts = new AtomicInteger();

        db.run(tr -> {
            attempts.incrementAndGet();
            tr.mutate(MutationType.ADD, k("n"), le64(1));
            return null;
        });

        assertThat(attempts).hasValue(4);
        assertThat(fromLe64(getRaw(k("n")))).isEqualTo(1L);
    }

    /** A retried commit_unknown_result applies a non-idempotent body twice: why transaction bodies must be idempotent. */
    @Test
    void run_retriesUnknownResultApplied_soANonIdempotentBodyIsAppliedTwice() {
        engine.injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        AtomicInteger attempts = new AtomicInteger();

        db.run(tr -> {
            attempts.incrementAndGet();
            tr.mutate(MutationType.ADD, k("n"), le64(1));
            return null;
        });

        assertThat(attempts).hasValue(2);
        assertThat(fromLe64(getRaw(k("n")))).isEqualTo(2L);
    }

    @Test
    void run_idempotentBodyWithMarker_survivesUnknownResultApplied() {
        engine.injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);

        db.run(tr -> {
            if (await(tr.get(k("applied-marker"))) == null) {
                tr.mutate(MutationType.ADD, k("n"), le64(1));
                tr.set(k("applied-marker"), utf8("1"));
            }
            return null;
        });

        assertThat(fromLe64(getRaw(k("n")))).isEqualTo(1L);
    }

    @Test
    void onError_afterInjectedUnknownResult_retries() {
        engine.injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);
        Transaction tr = writing("a", "1");
        var failure = assertFdbError(FdbErrors.COMMIT_UNKNOWN_RESULT, () -> await(tr.commit()));

        Transaction retry = track(await(tr.onError(failure)));
        retry.set(k("a"), utf8("2"));
        await(retry.commit());
        assertThat(get("a")).isEqualTo("2");
    }

    @Test
    void watch_ofTransactionWhoseCommitHasUnknownResult_failsWith1021() {
        engine.injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        Transaction tr = writing("a", "1");
        CompletableFuture<Void> watch = tr.watch(k("w"));

        assertFdbError(FdbErrors.COMMIT_UNKNOWN_RESULT, () -> await(tr.commit()));
        assertFailsWith(FdbErrors.COMMIT_UNKNOWN_RESULT, watch);
    }

    @Test
    void getVersionstamp_ofInjectedFailedCommit_failsTransactionInvalidVersion2020() {
        engine.injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);
        Transaction tr = writing("a", "1");
        CompletableFuture<byte[]> stamp = tr.getVersionstamp();

        assertFdbError(FdbErrors.COMMIT_UNKNOWN_RESULT, () -> await(tr.commit()));
        assertFailsWith(FdbErrors.TRANSACTION_INVALID_VERSION, stamp);
    }

    @Test
    void stats_countLiveKeysAndAdvanceTheCommittedVersion() {
        long before = engine.stats().committedVersion();
        long version = put("a", "1");
        put("b", "2");

        EmbeddedFdb.EmbeddedStats stats = engine.stats();
        assertThat(stats.liveKeys()).isGreaterThanOrEqualTo(2L);
        assertThat(stats.committedVersion()).isGreaterThan(before).isGreaterThan(version);
    }
}
