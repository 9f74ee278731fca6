package io.nereus.metadata;

import static io.nereus.error.ErrorAssertions.thrown;
import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.nereus.error.ErrorCode;
import io.nereus.fdb.embedded.CommitFault;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class StreamCommitStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final StreamCommitStore streams = f.streams;
    private final GenerationIndexStore index = f.index;

    @AfterEach
    void close() {
        f.close();
    }

    /** The WAL writer registers a slice before committing into it. */
    @BeforeEach
    void openSlices() {
        f.openSlices(1, 50, 51);
    }

    @Test
    void commit_manyStreamsInOneTransaction_advancesHeadsWritesRecordsAndIntents() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long e1 = f.acquire(s1);
        long e2 = f.acquire(s2);
        CommitResult r = await(streams.commit(List.of(append(s1, e1, 0, 3, 50, 0, 0), append(s2, e2, 0, 1, 50, 0, 1)), 1));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);
        assertThat(((CommitResult.Committed) r).heads()).extracting(StreamHead::committedEnd).containsExactly(3L, 1L);
        await(streams.commit(List.of(append(s1, e1, 3, 5, 50, 1, 0)), 1));
        StreamHead h1 = await(streams.head(s1)).orElseThrow();
        assertThat(h1.committedEnd()).isEqualTo(5);
        assertThat(h1.commitVersion()).isEqualTo(2);
        assertThat(h1.cumulativeBytes()).isEqualTo(50);
        assertThat(await(streams.intent(s1, 50))).contains(new WalIntent(0, e1));
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 3), OffsetRange.of(3, 5));
        await(streams.commit(List.of(append(s1, e1, 5, 6, 51, 0, 0)), 1));
        assertThat(await(streams.intent(s1, 51))).contains(new WalIntent(5, e1));
    }

    @Test
    void commit_fencedWriter_isRejectedAndWritesNothing() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long old = f.acquire(s1);
        long e2 = f.acquire(s2);
        long fresh = f.acquire(s1);
        assertThat(fresh).isGreaterThan(old);
        CommitResult r = await(streams.commit(List.of(append(s2, e2, 0, 1, 1, 0, 0), append(s1, old, 0, 1, 1, 0, 1)), 1));
        assertThat(r).isInstanceOf(CommitResult.Rejected.class);
        assertThat(((CommitResult.Rejected) r).outcome()).isEqualTo(new AppendOutcome.Fenced(fresh, old));
        assertThat(await(streams.head(s2)).orElseThrow().committedEnd()).as("all or nothing").isZero();
    }

    @Test
    void commit_wrongExpectedStart_isRejected() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        await(streams.commit(List.of(append(s, e, 0, 2, 1, 0, 0)), 1));
        CommitResult r = await(streams.commit(List.of(append(s, e, 1, 3, 1, 1, 0)), 1));
        assertThat(r).isEqualTo(new CommitResult.Rejected(append(s, e, 1, 3, 1, 1, 0), new AppendOutcome.UnexpectedStart(2, 1)));
        assertThat(await(streams.commit(List.of(append(StreamId.of(999), 1, 0, 1, 1, 0, 0)), 1)))
                .isEqualTo(new CommitResult.UnknownStream(StreamId.of(999)));
    }

    @Test
    void commit_severalAppendsOfOneStream_advanceThroughAllWithOwnRecords() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long e1 = f.acquire(s1);
        long e2 = f.acquire(s2);
        List<StreamAppend> coalesced = List.of(
                append(s1, e1, 0, 3, 50, 0, 0), append(s2, e2, 0, 1, 50, 0, 1),
                append(s1, e1, 3, 4, 50, 1, 0),
                append(s1, e1, 4, 6, 51, 0, 1), append(s2, e2, 1, 2, 51, 0, 0));
        CommitResult r = await(streams.commit(coalesced, 1));
        assertThat(((CommitResult.Committed) r).heads()).extracting(StreamHead::committedEnd)
                .containsExactly(3L, 1L, 4L, 6L, 2L);
        StreamHead h1 = await(streams.head(s1)).orElseThrow();
        assertThat(h1.committedEnd()).isEqualTo(6);
        assertThat(h1.commitVersion()).isEqualTo(3);
        assertThat(h1.cumulativeBytes()).isEqualTo(60);
        assertThat(await(streams.head(s2)).orElseThrow().committedEnd()).isEqualTo(2);
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).extracting(IndexRecord::range, IndexRecord::target)
                .containsExactly(tuple(OffsetRange.of(0, 3), new WalTarget(50, 0, 0)),
                        tuple(OffsetRange.of(3, 4), new WalTarget(50, 1, 0)),
                        tuple(OffsetRange.of(4, 6), new WalTarget(51, 0, 1)));
        assertThat(await(streams.intent(s1, 50))).as("first append into the slice").contains(new WalIntent(0, e1));
        assertThat(await(streams.intent(s1, 51))).contains(new WalIntent(4, e1));
        assertThat(await(streams.intent(s2, 51))).contains(new WalIntent(1, e2));
    }

    @Test
    void commit_severalAppendsOfOneStream_notChained_isRejectedAndWritesNothing() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long e1 = f.acquire(s1);
        long e2 = f.acquire(s2);
        StreamAppend gap = append(s1, e1, 4, 5, 50, 1, 0);
        CommitResult r = await(streams.commit(List.of(
                append(s1, e1, 0, 3, 50, 0, 0), append(s2, e2, 0, 1, 50, 0, 1), gap), 1));
        assertThat(r).isEqualTo(new CommitResult.Rejected(gap, new AppendOutcome.UnexpectedStart(3, 4)));
        StreamAppend outOfOrder = append(s1, e1, 0, 3, 50, 0, 0);
        assertThat(await(streams.commit(List.of(append(s1, e1, 3, 4, 50, 1, 0), outOfOrder), 1)))
                .isEqualTo(new CommitResult.Rejected(append(s1, e1, 3, 4, 50, 1, 0),
                        new AppendOutcome.UnexpectedStart(0, 3)));
        StreamAppend staleEpoch = append(s1, e1 + 1, 3, 4, 50, 1, 0);
        assertThat(await(streams.commit(List.of(append(s1, e1, 0, 3, 50, 0, 0), staleEpoch), 1)))
                .isEqualTo(new CommitResult.Rejected(staleEpoch, new AppendOutcome.Fenced(e1, e1 + 1)));
        assertThat(await(streams.head(s1)).orElseThrow().committedEnd()).as("all or nothing").isZero();
        assertThat(await(streams.head(s2)).orElseThrow().committedEnd()).isZero();
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).isEmpty();
        assertThat(await(streams.intent(s1, 50))).isEmpty();
    }

    @Test
    void commit_severalAppendsOfOneStream_retriedAfterUnknownResult_advancesOnce() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long e1 = f.acquire(s1);
        long e2 = f.acquire(s2);
        List<StreamAppend> coalesced = List.of(
                append(s1, e1, 0, 2, 50, 0, 0), append(s2, e2, 0, 1, 50, 0, 1),
                append(s1, e1, 2, 5, 50, 1, 0), append(s1, e1, 5, 6, 50, 2, 0));
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        CommitResult r = await(streams.commit(coalesced, 1));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);
        StreamHead h1 = await(streams.head(s1)).orElseThrow();
        assertThat(h1.committedEnd()).isEqualTo(6);
        assertThat(h1.commitVersion()).as("advanced once per append, not again on retry").isEqualTo(3);
        assertThat(h1.cumulativeBytes()).isEqualTo(60);
        assertThat(((CommitResult.Committed) r).heads()).as("the retry reports the stored heads")
                .containsExactly(h1, await(streams.head(s2)).orElseThrow(), h1, h1);
        assertThat(await(streams.head(s2)).orElseThrow().commitVersion()).isEqualTo(1);
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).hasSize(3);
        assertThat(await(streams.commit(coalesced, 1))).as("a late duplicate changes nothing")
                .isInstanceOf(CommitResult.Committed.class);
        assertThat(await(streams.head(s1)).orElseThrow()).isEqualTo(h1);
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);
        await(streams.commit(List.of(append(s1, e1, 6, 7, 50, 3, 0), append(s1, e1, 7, 8, 50, 4, 0)), 1));
        assertThat(await(streams.head(s1)).orElseThrow().commitVersion()).isEqualTo(5);
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).hasSize(5);
    }

    @Test
    void commit_retriedAfterUnknownResult_advancesOnce() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        CommitResult r = await(streams.commit(List.of(append(s, e, 0, 4, 1, 0, 0)), 1));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);
        StreamHead h = await(streams.head(s)).orElseThrow();
        assertThat(h.committedEnd()).isEqualTo(4);
        assertThat(h.commitVersion()).isEqualTo(1);
        assertThat(h.cumulativeBytes()).isEqualTo(40);
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);
        await(streams.commit(List.of(append(s, e, 4, 5, 1, 1, 0)), 1));
        assertThat(await(streams.head(s)).orElseThrow().commitVersion()).isEqualTo(2);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).hasSize(2);
    }

    @Test
    void commitReads_completeTogether_inOrderOutOfOrderOrFailing() {
        // in the order issued, as the embedded engine completes them: done once the last is
        List<CompletableFuture<byte[]>> reads = List.of(new CompletableFuture<>(), new CompletableFuture<>(),
                new CompletableFuture<>());
        CompletableFuture<Void> all = StreamCommitStore.allCompleted(reads);
        reads.get(0).complete(new byte[1]);
        reads.get(1).complete(null);
        assertThat(all).isNotDone();
        reads.get(2).complete(new byte[2]);
        assertThat(all).isCompleted();
        // the last first, as a cluster may: not done before the others are
        List<CompletableFuture<byte[]>> late = List.of(new CompletableFuture<>(), new CompletableFuture<>());
        CompletableFuture<Void> waiting = StreamCommitStore.allCompleted(late);
        late.get(1).complete(null);
        assertThat(waiting).isNotDone();
        late.get(0).complete(null);
        assertThat(waiting).isCompleted();
        // a failed read fails it, whether it is the last or not, and only once every read has completed
        for (int failing = 0; failing < 2; failing++) {
            List<CompletableFuture<byte[]>> some = List.of(new CompletableFuture<>(), new CompletableFuture<>());
            CompletableFuture<Void> failed = StreamCommitStore.allCompleted(some);
            some.get(failing).completeExceptionally(new IllegalStateException("read " + failing));
            assertThat(failed).isNotDone();
            some.get(1 - failing).complete(null);
            assertThat(failed).isCompletedExceptionally();
            int which = failing;
            assertThatThrownBy(failed::join).hasRootCauseMessage("read " + which);
        }
    }

    @Test
    void trim_movesRecordsWhollyBelowToRetiredAndKeepsStraddling() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        for (int i = 0; i < 5; i++) {
            await(streams.commit(List.of(append(s, e, 3L * i, 3L * i + 3, 1, i, 0)), 1));
        }
        StreamHead h = await(streams.trim(s, 7, e));
        assertThat(h.trimOffset()).isEqualTo(7);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(6, 9), OffsetRange.of(9, 12), OffsetRange.of(12, 15));
        assertThat(await(index.retiredRecords(s, 100))).extracting(IndexRecord::state).containsOnly(IndexRecordState.RETIRED);
        assertThat(await(index.retiredRecords(s, 100))).extracting(IndexRecord::target)
                .containsExactly(new WalTarget(1, 0, 0), new WalTarget(1, 1, 0));
        assertThat(await(streams.trim(s, 3, e)).trimOffset()).as("never lowered").isEqualTo(7);
        assertThatThrownBy(() -> await(streams.trim(s, 16, e))).hasMessageContaining("beyond committedEnd");
    }

    @Test
    void trim_byAFencedWriter_isRefusedAndMovesNothing() {
        StreamId s = f.newStream("a");
        long old = f.acquire(s);
        for (int i = 0; i < 3; i++) {
            await(streams.commit(List.of(append(s, old, 2L * i, 2L * i + 2, 1, i, 0)), 1));
        }
        long current = f.acquire(s);
        StreamHead before = await(streams.head(s)).orElseThrow();

        assertThat(thrown(ErrorCode.FENCED, () -> await(streams.trim(s, 4, old))).context())
                .containsEntry("stream", s).containsEntry("headEpoch", current).containsEntry("requestEpoch", old);

        assertThat(await(streams.head(s)).orElseThrow()).isEqualTo(before);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 2), OffsetRange.of(2, 4), OffsetRange.of(4, 6));
        assertThat(await(index.retiredRecords(s, 100))).isEmpty();
        assertThat(await(streams.trim(s, 4, current)).trimOffset()).as("the current writer may").isEqualTo(4);
    }

    @Test
    void trim_ofManyRecords_runsInBatches() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        int n = StreamCommitStore.TRIM_BATCH + 50;
        List<StreamAppend> none = List.of();
        for (int i = 0; i < n; i++) {
            await(streams.commit(List.of(append(s, e, i, i + 1L, 1, i, 0)), 1));
        }
        assertThat(none).isEmpty();
        await(streams.trim(s, n, e));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).isEmpty();
        assertThat(await(index.retiredRecords(s, 10_000))).hasSize(n);
    }

    @Test
    void seal_stopsCommits() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        await(streams.seal(s, e));
        CommitResult r = await(streams.commit(List.of(append(s, e, 0, 1, 1, 0, 0)), 1));
        assertThat(((CommitResult.Rejected) r).outcome()).isEqualTo(new AppendOutcome.NotAccepting(StreamState.SEALED));
    }

    @Test
    void seal_byAFencedWriter_isRefusedAndLeavesTheStreamOpen() {
        StreamId s = f.newStream("a");
        long old = f.acquire(s);
        long current = f.acquire(s);
        assertThat(thrown(ErrorCode.FENCED, () -> await(streams.seal(s, old))).context())
                .containsEntry("stream", s).containsEntry("headEpoch", current).containsEntry("requestEpoch", old);
        assertThat(await(streams.head(s)).orElseThrow().state()).isEqualTo(StreamState.OPEN);
    }
}
