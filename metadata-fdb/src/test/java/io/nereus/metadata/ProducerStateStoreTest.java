package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Kafka adapter's producer state in the metadata store: saves conditional on the writer, chunked, purged. */
@Timeout(120)
class ProducerStateStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final ProducerStateStore producers = f.store.producers();

    @AfterEach
    void close() {
        f.close();
    }

    /** A stream with {@code end} committed offsets in slice 1 and writer "w"; returns its epoch. */
    private long committed(StreamId s, long end) {
        long epoch = f.acquire(s);
        f.openSlices(1);
        await(f.streams.commit(List.of(StoreFixture.append(s, epoch, 0, end, 1, 0, 0))));
        return epoch;
    }

    private static ProducerState state(long id, long offset) {
        return ProducerState.first(id, 1, new ProducerBatch(0, 4, offset, offset + 4, 1_000 + offset));
    }

    @Test
    void nothingSaved_loadsEmpty() {
        StreamId s = f.newStream("t");
        assertThat(await(producers.load(s))).isEqualTo(ProducerSnapshot.empty());
    }

    @Test
    void save_thenLoad_returnsTheStatesAndEndOffset_laterSavesReplaceChangedProducersOnly() {
        StreamId s = f.newStream("t");
        long epoch = committed(s, 100);
        assertThat(await(producers.save(s, epoch, 10, List.of(state(1, 0), state(2, 5))))).isEqualTo(WriteOutcome.WRITTEN);
        ProducerState moved = state(1, 0).with(1, new ProducerBatch(5, 9, 20, 24, 7));
        assertThat(await(producers.save(s, epoch, 25, List.of(moved)))).isEqualTo(WriteOutcome.WRITTEN);
        assertThat(await(producers.load(s))).isEqualTo(new ProducerSnapshot(25, Map.of(1L, moved, 2L, state(2, 5))));
        // a lower end offset never lowers the stored one
        await(producers.save(s, epoch, 12, List.of()));
        assertThat(await(producers.load(s)).endOffset()).isEqualTo(25);
    }

    @Test
    void save_byAFencedWriter_writesNothing() {
        StreamId s = f.newStream("t");
        long old = committed(s, 100);
        long fresh = f.acquire(s);
        assertThat(await(producers.save(s, old, 50, List.of(state(1, 0))))).isEqualTo(new WriteOutcome.Fenced(fresh, old));
        assertThat(await(producers.load(s))).isEqualTo(ProducerSnapshot.empty());
        assertThat(await(producers.save(StreamId.of(404), 1, 0, List.of())))
                .isEqualTo(new WriteOutcome.UnknownStream(StreamId.of(404)));
    }

    @Test
    void save_beyondTheCommittedEnd_isRefused() {
        StreamId s = f.newStream("t");
        long epoch = committed(s, 100);
        assertThatThrownBy(() -> await(producers.save(s, epoch, 101, List.of(state(1, 0)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("beyond the committed end");
        assertThat(await(producers.load(s))).isEqualTo(ProducerSnapshot.empty());
    }

    @Test
    void manyProducers_takeSeveralTransactions_andAllLoadBack() {
        StreamId s = f.newStream("t");
        long epoch = committed(s, 100_000);
        List<ProducerState> many = new ArrayList<>();
        for (int i = 0; i < ProducerStateStore.SAVE_BATCH * 2 + 7; i++) {
            many.add(state(i, 10L * i));
        }
        assertThat(await(producers.save(s, epoch, 100_000, many))).isEqualTo(WriteOutcome.WRITTEN);
        ProducerSnapshot loaded = await(producers.load(s));
        assertThat(loaded.endOffset()).isEqualTo(100_000);
        assertThat(loaded.producers()).hasSize(many.size());
        assertThat(loaded.producers().get(4003L)).isEqualTo(state(4003, 40_030));
    }

    @Test
    void producerKeys_areCountedInTheCensus() {
        StreamId s = f.newStream("t");
        long epoch = committed(s, 100);
        await(producers.save(s, epoch, 100, List.of(state(1, 0), state(2, 5))));
        MetadataCensus census = await(f.store.collection().census());
        assertThat(census.byKind()).containsEntry("producer", 2L).containsEntry("producerEnd", 1L);
    }
}
