package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.Transaction;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Futures are completed on the transaction's executor, never on the calling thread, and blocking inside a callback
 * does not deadlock (fdb-semantics §4.6 item 17; fdb-java NativeFuture completes through
 * {@code executor.execute(...)}).
 *
 * <p>A {@link GatedExecutor} holds completions until the test opens it, so each callback is known to be attached
 * before its future completes and must then run on the executor's thread.
 */
class FutureThreadingConformanceTest extends ConformanceTestBase {

    private void assertCompletesOnTheExecutor(GatedExecutor gate, CompletableFuture<?> future) {
        Thread caller = Thread.currentThread();
        CompletableFuture<Thread> ranOn = future.handle((v, e) -> Thread.currentThread());

        assertThat(future).as("completed before the transaction's executor ran anything").isNotDone();
        gate.open();

        Thread thread = await(ranOn);
        assertThat(thread).isNotSameAs(caller);
        assertThat(thread).isSameAs(gate.thread());
    }

    @Test
    void get_completesOnTheTransactionExecutor_notTheCaller() {
        put("a", "1");
        try (GatedExecutor gate = new GatedExecutor(); Transaction tr = db.createTransaction(gate)) {
            assertThat(tr.getExecutor()).isSameAs(gate);
            assertCompletesOnTheExecutor(gate, tr.get(k("a")));
        }
    }

    @Test
    void getReadVersion_completesOnTheTransactionExecutor() {
        try (GatedExecutor gate = new GatedExecutor(); Transaction tr = db.createTransaction(gate)) {
            assertCompletesOnTheExecutor(gate, tr.getReadVersion());
        }
    }

    @Test
    void rangeRead_completesOnTheTransactionExecutor() {
        putAll("a", "b");
        try (GatedExecutor gate = new GatedExecutor(); Transaction tr = db.createTransaction(gate)) {
            assertCompletesOnTheExecutor(gate, tr.getRange(spaceRange()).asList());
        }
    }

    @Test
    void commit_completesOnTheTransactionExecutor() {
        try (GatedExecutor gate = new GatedExecutor(); Transaction tr = db.createTransaction(gate)) {
            tr.set(k("a"), utf8("1"));
            assertCompletesOnTheExecutor(gate, tr.commit());
        }
        assertThat(get("a")).isEqualTo("1");
    }

    @Test
    void failedFuture_alsoCompletesOnTheTransactionExecutor() {
        try (GatedExecutor gate = new GatedExecutor(); Transaction tr = db.createTransaction(gate)) {
            assertCompletesOnTheExecutor(gate, tr.get(bytes(0xff, 'x')));
        }
    }

    @Test
    void joinInsideACallback_doesNotDeadlock() {
        put("a", "1");
        put("b", "2");
        Transaction tr = newTransaction();

        String both = await(tr.get(k("a")).thenApply(a -> str(a) + str(tr.get(k("b")).join())));

        assertThat(both).isEqualTo("12");
    }

    @Test
    void manyCallbacksBlockingOnJoinAtOnce_doNotDeadlock() {
        put("a", "1");
        Transaction tr = newTransaction();
        List<CompletableFuture<String>> chains = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            chains.add(tr.get(k("a")).thenApply(v -> str(tr.get(k("a")).join()) + str(v)));
        }

        for (CompletableFuture<String> chain : chains) {
            assertThat(await(chain)).isEqualTo("11");
        }
    }

    @Test
    void runInsideACallback_ofAnotherTransaction_doesNotDeadlock() {
        Transaction tr = newTransaction();

        String value = await(tr.getReadVersion().thenApply(v -> db.run(inner -> {
            inner.set(k("a"), utf8("from-callback"));
            return "ok";
        })));

        assertThat(value).isEqualTo("ok");
        assertThat(get("a")).isEqualTo("from-callback");
    }
}
