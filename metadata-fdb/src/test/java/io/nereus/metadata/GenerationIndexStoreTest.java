package io.nereus.metadata;

import static io.nereus.error.ErrorAssertions.thrown;
import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class GenerationIndexStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final CatalogStore catalog = f.catalog;
    private final StreamCommitStore streams = f.streams;
    private final GenerationIndexStore index = f.index;

    @AfterEach
    void close() {
        f.close();
    }

    /** The WAL writer registers a slice before committing into it. */
    @BeforeEach
    void openSlices() {
        f.openSlices(1);
    }

    @Test
    void lookup_resolvesTrimsAndWaits() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        for (int i = 0; i < 10; i++) {
            await(streams.commit(List.of(append(s, e, 2L * i, 2L * i + 2, 1, i, 0)), 1));
        }
        IndexLookup l = await(index.lookup(s, ReadView.COMMITTED, 7));
        assertThat(l).isInstanceOf(IndexLookup.Resolved.class);
        assertThat(((IndexLookup.Resolved) l).preferred().range()).isEqualTo(OffsetRange.of(6, 8));
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 20))).isEqualTo(new IndexLookup.NotYetCommitted(20));
        assertThat(await(index.lookup(s, ReadView.TOPIC_COMPACTED, 7))).isEqualTo(new IndexLookup.Unindexed(7));
        await(streams.trim(s, 5, e));
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 4))).isEqualTo(new IndexLookup.Trimmed(5));
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 5))).isInstanceOf(IndexLookup.Resolved.class);
        assertThat(thrown(ErrorCode.NOT_FOUND, () -> await(index.lookup(StreamId.of(77), ReadView.COMMITTED, 0)))
                .context()).containsEntry("stream", StreamId.of(77));
    }

    @Test
    void quarantineAndRetire_followTheStateMachine() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        await(streams.commit(List.of(append(s, e, 0, 2, 1, 0, 0)), 1));
        IndexKey k = new IndexKey(s, ReadView.COMMITTED, 2, GenerationId.APPEND);
        assertThat(await(index.quarantine(k))).map(IndexRecord::state).contains(IndexRecordState.QUARANTINED);
        assertThat(await(index.quarantine(k))).map(IndexRecord::metadataVersion).contains(1L);
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 1))).isEqualTo(new IndexLookup.Unindexed(1));
        assertThat(await(index.retire(k))).map(IndexRecord::state).contains(IndexRecordState.RETIRED);
        assertThat(await(index.retire(k))).map(IndexRecord::metadataVersion).contains(2L);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).isEmpty();
        assertThat(await(index.quarantine(k))).isEmpty();
        assertThat(await(index.retire(new IndexKey(s, ReadView.COMMITTED, 9, GenerationId.APPEND)))).isEmpty();
    }
}
