package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.Transaction;
import io.nereus.fdb.FdbErrors;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Transaction options (fdb-semantics §4.3 option table; §4.6 items 4, 5, 6, 7 and 15). */
class OptionsConformanceTest extends ConformanceTestBase {

    private static final byte[] SYSTEM_KEY = bytes(0xff, '/', 'n', 'e', 'r', 'e', 'u', 's', '-', 'a', 'b', 's', 'e',
            'n', 't');

    // ---- timeout (500) ----------------------------------------------------------------------------------------

    /**
     * A 10 ms timeout fails the transaction with 1031. Embedded time is fake, so the clock is moved forward as well;
     * the wait is a condition poll (the engine may fire the timeout from a timer or check it on the next call).
     */
    @Test
    void timeout_expired_failsOperationsAndCommitWithTransactionTimedOut1031() {
        put("a", "1");
        Transaction tr = newTransaction();
        // written before the timeout is set: a 10 ms timeout set first may expire (in real time) before the write
        tr.set(k("b"), utf8("never"));
        tr.options().setTimeout(10);
        letTimePassForTimeout();

        AtomicReference<FDBException> seen = new AtomicReference<>();
        Awaitility.await().atMost(FUTURE_TIMEOUT).pollInterval(Duration.ofMillis(5)).until(() -> {
            try {
                await(tr.get(k("a")));
                return false;
            } catch (RuntimeException e) {
                seen.set(fdbCause(e));
                return true;
            }
        });

        assertThat(seen.get()).as("the read failed with an FDBException").isNotNull();
        assertThat(seen.get().getCode()).isEqualTo(FdbErrors.TRANSACTION_TIMED_OUT);
        assertFdbError(FdbErrors.TRANSACTION_TIMED_OUT, () -> await(tr.commit()));
        assertThat(get("b")).isNull();
    }

    @Test
    void timeout_isNotRetryable_onErrorRethrowsTransactionTimedOut1031() {
        Transaction tr = newTransaction();

        assertFailsWith(FdbErrors.TRANSACTION_TIMED_OUT,
                tr.onError(new FDBException("transaction_timed_out", FdbErrors.TRANSACTION_TIMED_OUT)));
    }

    @Test
    void timeout_zero_meansNoTimeout() {
        Transaction tr = newTransaction();
        tr.options().setTimeout(0);
        letTimePass(Duration.ofMillis(50));

        tr.set(k("a"), utf8("1"));
        await(tr.commit());
        assertThat(get("a")).isEqualTo("1");
    }

    private void letTimePassForTimeout() {
        if (isEmbedded()) {
            letTimePass(Duration.ofSeconds(1));
        }
    }

    // ---- next_write_no_write_conflict_range (30) --------------------------------------------------------------

    @Test
    void nextWriteNoWriteConflictRange_suppressesTheConflictOfTheNextWriteOnly() {
        Transaction readsA = newTransaction();
        Transaction readsB = newTransaction();
        await(readsA.get(k("a")));
        await(readsB.get(k("b")));

        try (Transaction writer = db.createTransaction()) {
            writer.options().setNextWriteNoWriteConflictRange();
            writer.set(k("a"), utf8("no-conflict-range"));
            writer.set(k("b"), utf8("normal"));
            await(writer.commit());
        }

        readsA.set(k("x"), utf8("1"));
        await(readsA.commit());
        readsB.set(k("y"), utf8("1"));
        assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(readsB.commit()));
        assertThat(get("a")).as("the write itself is applied").isEqualTo("no-conflict-range");
    }

    // ---- snapshot read-your-writes (600 / 601) ----------------------------------------------------------------

    @Test
    void snapshotRywDisable_hidesOwnWritesFromSnapshotReadsOnly() {
        put("a", "stored");
        Transaction tr = newTransaction();
        tr.options().setSnapshotRywDisable();
        tr.set(k("a"), utf8("mine"));
        tr.set(k("b"), utf8("mine"));

        assertThat(str(await(tr.snapshot().get(k("a"))))).isEqualTo("stored");
        assertThat(suffixes(await(tr.snapshot().getRange(spaceRange()).asList())))
                .containsExactly("a");
        assertThat(str(await(tr.get(k("a"))))).isEqualTo("mine");
    }

    @Test
    void snapshotRywEnable_afterDisable_showsOwnWritesAgain() {
        Transaction tr = newTransaction();
        tr.options().setSnapshotRywDisable();
        tr.options().setSnapshotRywEnable();
        tr.set(k("a"), utf8("mine"));

        assertThat(str(await(tr.snapshot().get(k("a"))))).isEqualTo("mine");
    }

    /** The options count (ReadYourWritesTransaction: snapshotRywEnabled++ / --, visible while > 0; default 1). */
    @Test
    void snapshotRywDisableTwiceThenEnableOnce_stillHidesOwnWrites() {
        Transaction tr = newTransaction();
        tr.options().setSnapshotRywDisable();
        tr.options().setSnapshotRywDisable();
        tr.options().setSnapshotRywEnable();
        tr.set(k("a"), utf8("mine"));

        assertThat(await(tr.snapshot().get(k("a")))).isNull();
    }

    // ---- read_your_writes_disable (51) ------------------------------------------------------------------------

    @Test
    void readYourWritesDisable_readsIgnoreOwnWrites() {
        put("a", "stored");
        Transaction tr = newTransaction();
        tr.options().setReadYourWritesDisable();
        tr.set(k("a"), utf8("mine"));

        assertThat(str(await(tr.get(k("a"))))).isEqualTo("stored");
        await(tr.commit());
        assertThat(get("a")).isEqualTo("mine");
    }

    // ---- system keys (301 / 302) ------------------------------------------------------------------------------

    @Test
    void systemKeys_withoutOption_failKeyOutsideLegalRange2004() {
        Transaction tr = newTransaction();

        assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, () -> await(tr.get(SYSTEM_KEY)));
        assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, () -> await(tr.get(bytes(0xff))));
        assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE,
                () -> await(tr.getRange(k("a"), bytes(0xff, 0x00)).asList()));
        assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE,
                () -> await(tr.getKey(KeySelector.firstGreaterOrEqual(bytes(0xff, 0x00)))));
    }

    @Test
    void systemKeyWrite_withoutOption_failsKeyOutsideLegalRange2004() {
        Transaction tr = newTransaction();

        assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, () -> {
            tr.set(SYSTEM_KEY, utf8("x"));
            await(tr.commit());
        });
    }

    @Test
    void readSystemKeys_allowsSystemReads() {
        Transaction tr = newTransaction();
        tr.options().setReadSystemKeys();

        assertThat(await(tr.get(SYSTEM_KEY))).isNull();
        assertThat(await(tr.getRange(SYSTEM_KEY, bytes(0xff, '/', 'n', 'f')).asList())).isEmpty();
    }

    @Test
    void readSystemKeys_stillRejectsSystemWrites2004() {
        Transaction tr = newTransaction();
        tr.options().setReadSystemKeys();

        assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, () -> {
            tr.set(SYSTEM_KEY, utf8("x"));
            await(tr.commit());
        });
    }

    @Test
    void accessSystemKeys_allowsSystemReads() {
        Transaction tr = newTransaction();
        tr.options().setAccessSystemKeys();

        assertThat(await(tr.get(SYSTEM_KEY))).isNull();
    }

    // ---- options that persist across onError ------------------------------------------------------------------

    @Test
    void retryLimit_persistsAcrossOnError() {
        Transaction tr = newTransaction();
        tr.options().setRetryLimit(1);
        Transaction retry = track(await(
                tr.onError(new FDBException("not_committed", FdbErrors.NOT_COMMITTED))));

        assertFailsWith(FdbErrors.NOT_COMMITTED,
                retry.onError(new FDBException("not_committed", FdbErrors.NOT_COMMITTED)));
    }

    @Test
    void snapshotRywDisable_isNotPersistent_andIsResetByOnError() {
        Transaction tr = newTransaction();
        tr.options().setSnapshotRywDisable();
        Transaction retry = track(await(tr.onError(new FDBException("not_committed", FdbErrors.NOT_COMMITTED))));
        retry.set(k("a"), utf8("mine"));

        assertThat(str(await(retry.snapshot().get(k("a"))))).isEqualTo("mine");
    }
}
