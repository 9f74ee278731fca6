package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.Transaction;
import io.nereus.fdb.FdbErrors;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Watches (fdb-semantics §4.6 item 14). A watch reports a change from the value its transaction saw; it starts
 * watching other transactions' writes when its transaction commits. Tests never wait for the absence of an event.
 */
class WatchConformanceTest extends ConformanceTestBase {

    private CompletableFuture<Void> committedWatch(String suffix) {
        try (Transaction tr = db.createTransaction()) {
            CompletableFuture<Void> watch = tr.watch(k(suffix));
            await(tr.commit());
            return watch;
        }
    }

    @Test
    void watch_firesWhenAnotherTransactionChangesTheValue() {
        put("a", "1");
        CompletableFuture<Void> watch = committedWatch("a");

        put("a", "2");

        await(watch);
        assertThat(watch).isCompleted();
    }

    @Test
    void watch_onAbsentKey_firesWhenTheKeyIsCreated() {
        CompletableFuture<Void> watch = committedWatch("a");

        put("a", "created");

        await(watch);
        assertThat(watch).isCompleted();
    }

    @Test
    void watch_firesWhenTheKeyIsCleared() {
        put("a", "1");
        CompletableFuture<Void> watch = committedWatch("a");

        try (Transaction tr = db.createTransaction()) {
            tr.clear(k("a"));
            await(tr.commit());
        }

        await(watch);
        assertThat(watch).isCompleted();
    }

    @Test
    void watch_changeCommittedBeforeTheWatchingTransactionCommits_firesAfterItsCommit() {
        put("a", "1");
        Transaction tr = newTransaction();
        CompletableFuture<Void> watch = tr.watch(k("a"));
        assertThat(str(await(tr.get(k("a"))))).isEqualTo("1");
        put("a", "2");

        await(tr.commit());

        await(watch);
        assertThat(watch).isCompleted();
    }

    @Test
    void watch_ownLaterWrite_firesImmediately_withoutCommit() {
        put("a", "1");
        Transaction tr = newTransaction();
        CompletableFuture<Void> watch = tr.watch(k("a"));

        tr.set(k("a"), utf8("2"));

        await(watch);
        assertThat(watch).isCompleted();
        assertThat(get("a")).as("nothing committed").isEqualTo("1");
    }

    @Test
    void watch_cancelledFuture_isDropped_andOtherWatchesStillFire() {
        put("a", "1");
        CompletableFuture<Void> cancelled = committedWatch("a");
        CompletableFuture<Void> kept = committedWatch("a");

        assertThat(cancelled.cancel(true)).isTrue();
        put("a", "2");

        await(kept);
        assertThat(cancelled).isCancelled();
        assertThat(kept).isCompleted();
    }

    @Test
    void watch_withReadYourWritesDisabled_failsWatchesDisabled1034() {
        Transaction tr = newTransaction();
        tr.options().setReadYourWritesDisable();

        assertFdbError(FdbErrors.WATCHES_DISABLED, () -> await(tr.watch(k("a"))));
    }

    @Test
    void watch_ofTransactionWhoseCommitFails_failsWithTheCommitError1020() {
        put("r", "1");
        Transaction tr = newTransaction();
        await(tr.get(k("r")));
        CompletableFuture<Void> watch = tr.watch(k("w"));
        tr.set(k("x"), utf8("1"));
        put("r", "2");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(tr.commit()));
        assertFailsWith(FdbErrors.NOT_COMMITTED, watch);
    }

    @Test
    void watch_ofCancelledUncommittedTransaction_failsTransactionCancelled1025() {
        Transaction tr = db.createTransaction();
        CompletableFuture<Void> watch = tr.watch(k("a"));

        tr.cancel();
        tr.close();

        assertFailsWith(FdbErrors.TRANSACTION_CANCELLED, watch);
    }

    @Test
    void watch_onSystemKeyWithoutAccess_failsKeyOutsideLegalRange2004() {
        Transaction tr = newTransaction();

        assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, () -> await(tr.watch(bytes(0xff, 'x'))));
    }
}
