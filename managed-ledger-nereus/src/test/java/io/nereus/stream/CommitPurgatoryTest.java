package io.nereus.stream;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

class CommitPurgatoryTest {
    /** Runs handed-off completions only when the test says so, to tell inline completion from a hand-off. */
    private final List<Runnable> handedOff = new ArrayList<>();
    private final Executor executor = handedOff::add;

    private void runHandedOff() {
        List<Runnable> now = new ArrayList<>(handedOff);
        handedOff.clear();
        now.forEach(Runnable::run);
    }

    @Test
    void advance_wakesWaitersBelowTheNewEnd_inlineOnTheCallingThread() {
        CommitPurgatory p = new CommitPurgatory(executor, 2);
        CompletableFuture<Void> at2 = p.await(2);
        CompletableFuture<Void> at4 = p.await(4);
        assertThat(p.size()).isEqualTo(2);

        p.advance(4);

        assertThat(at2).isCompleted();
        assertThat(at4).isNotDone();
        assertThat(handedOff).isEmpty();
        assertThat(p.size()).isEqualTo(1);
    }

    @Test
    void advance_toAnEndNotBeyondTheCurrentOne_wakesNothing() {
        CommitPurgatory p = new CommitPurgatory(executor, 5);
        CompletableFuture<Void> at5 = p.await(5);
        p.advance(5);
        p.advance(3);
        assertThat(at5).isNotDone();
    }

    @Test
    void await_belowTheCommittedEnd_completesOnTheExecutor() {
        CommitPurgatory p = new CommitPurgatory(executor, 3);
        CompletableFuture<Void> f = p.await(1);
        assertThat(f).isNotDone();
        runHandedOff();
        assertThat(f).isCompleted();
        assertThat(p.size()).isZero();
    }

    @Test
    void releaseAll_wakesEveryWaiterAndEveryLaterOne_onTheExecutor() {
        CommitPurgatory p = new CommitPurgatory(executor, 0);
        CompletableFuture<Void> waiting = p.await(10);
        p.releaseAll();
        CompletableFuture<Void> later = p.await(20);
        assertThat(waiting).isNotDone();
        runHandedOff();
        assertThat(waiting).isCompleted();
        assertThat(later).isCompleted();
    }

    @Test
    void cancel_forgetsTheWaiter() {
        CommitPurgatory p = new CommitPurgatory(executor, 0);
        CompletableFuture<Void> f = p.await(0);
        f.cancel(false);
        assertThat(p.size()).isZero();
        p.advance(1);
        assertThat(f).isCancelled();
    }
}
