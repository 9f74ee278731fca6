package io.nereus.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ProducerBatch;
import io.nereus.metadata.ProducerSnapshot;
import io.nereus.metadata.ProducerState;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Kafka's idempotent-producer rules in the log's table, decision by decision, without storage. */
class ProducerTableTest {
    private final ProducerTable table = new ProducerTable();

    private static ValidBatch batch(long pid, int epoch, int firstSeq, int count) {
        int last = (int) ((firstSeq + (long) count - 1) % (Integer.MAX_VALUE + 1L));
        return new ValidBatch(0, 0, new byte[0], count, 7,
                Optional.of(new ValidBatch.Producer(pid, epoch, firstSeq, last)));
    }

    private List<ProducerTable.Decision> committed(long next, ValidBatch... batches) {
        List<ProducerTable.Decision> d = table.plan(List.of(batches), next, new CompletableFuture<>());
        table.committed(d);
        return d;
    }

    private static ErrorCode code(Runnable r) {
        ErrorCode[] c = new ErrorCode[1];
        assertThatThrownBy(r::run).isInstanceOfSatisfying(NereusException.class, e -> c[0] = e.code());
        return c[0];
    }

    @Test
    void sequencesContinue_wrapPastIntegerMax_andANewEpochStartsAtZero() {
        committed(0, batch(1, 0, Integer.MAX_VALUE - 1, 2));
        assertThat(committed(2, batch(1, 0, 0, 3)).get(0)).isInstanceOf(ProducerTable.Decision.Store.class);
        assertThat(ProducerTable.inSequence(Integer.MAX_VALUE, 0)).isTrue();
        assertThat(ProducerTable.inSequence(5, 7)).isFalse();
        assertThat(code(() -> table.plan(List.of(batch(1, 0, 4, 1)), 5, new CompletableFuture<>())))
                .isEqualTo(ErrorCode.OUT_OF_ORDER_SEQUENCE);
        assertThat(code(() -> table.plan(List.of(batch(1, 1, 3, 1)), 5, new CompletableFuture<>())))
                .isEqualTo(ErrorCode.OUT_OF_ORDER_SEQUENCE);
        committed(5, batch(1, 1, 0, 1));
        assertThat(code(() -> table.plan(List.of(batch(1, 0, 3, 1)), 6, new CompletableFuture<>())))
                .isEqualTo(ErrorCode.INVALID_PRODUCER_EPOCH);
    }

    @Test
    void theLastFiveBatchesAreRecognisedAsRetries_anOlderOneIsOutOfOrder() {
        for (int i = 0; i < 6; i++) {
            committed(10L * i, batch(1, 0, 10 * i, 10));
        }
        ProducerTable.Decision d = table.plan(List.of(batch(1, 0, 10, 10)), 60, new CompletableFuture<>()).get(0);
        assertThat(d).isInstanceOfSatisfying(ProducerTable.Decision.Duplicate.class,
                dup -> assertThat(dup.original()).isEqualTo(new ProducerBatch(10, 19, 10, 19, 7)));
        assertThat(code(() -> table.plan(List.of(batch(1, 0, 0, 10)), 60, new CompletableFuture<>())))
                .isEqualTo(ErrorCode.OUT_OF_ORDER_SEQUENCE);
    }

    @Test
    void aRefusedAppend_leavesNoBatchInFlight() {
        committed(0, batch(1, 0, 0, 1));
        assertThat(code(() -> table.plan(List.of(batch(2, 0, 0, 1), batch(1, 0, 9, 1)), 1,
                new CompletableFuture<>()))).isEqualTo(ErrorCode.OUT_OF_ORDER_SEQUENCE);
        // producer 2's batch was not remembered: the same batch is new, not a duplicate
        assertThat(table.plan(List.of(batch(2, 0, 0, 1)), 1, new CompletableFuture<>()).get(0))
                .isInstanceOf(ProducerTable.Decision.Store.class);
    }

    @Test
    void replay_appliesEachBatchOnce_andSavesWhatChanged() {
        table.load(new ProducerSnapshot(10, Map.of(1L, ProducerState.first(1, 0, new ProducerBatch(0, 9, 0, 9, 5)))));
        ValidBatch.Producer p = new ValidBatch.Producer(1, 0, 10, 19);
        table.replay(p, OffsetRange.of(10, 20), 6);
        table.replay(p, OffsetRange.of(10, 20), 6);
        table.replay(new ValidBatch.Producer(1, 0, 0, 9), OffsetRange.of(0, 10), 5);
        assertThat(table.state(1).orElseThrow().batches()).extracting(ProducerBatch::firstOffset).containsExactly(0L,
                10L);
        List<ProducerState> dirty = table.takeDirty();
        assertThat(dirty).extracting(ProducerState::producerId).containsExactly(1L);
        assertThat(table.takeDirty()).isEmpty();
        table.markDirty(dirty);
        assertThat(table.takeDirty()).hasSize(1);
    }
}
