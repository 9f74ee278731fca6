package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Publication of TOPIC_COMPACTED generations and their horizon, and how trims and lookups treat them. */
@Timeout(120)
class CompactionStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final StreamCommitStore streams = f.streams;
    private final GenerationIndexStore index = f.index;
    private StreamId s;
    private long e;

    @BeforeEach
    void appendTwelveOffsets() {
        f.openSlices(1);
        s = f.newStream("a");
        e = f.acquire(s);
        await(streams.commit(List.of(append(s, e, 0, 4, 1, 0, 0)), 1));
        await(streams.commit(List.of(append(s, e, 4, 8, 1, 1, 0)), 1));
        await(streams.commit(List.of(append(s, e, 8, 12, 1, 2, 0)), 1));
    }

    @AfterEach
    void close() {
        f.close();
    }

    private CompactionRequest request(Optional<IndexRecord> previous, long horizon, String object) {
        return new CompactionRequest(s, previous.map(PublicationRequest.SourceRef::of), horizon,
                new ObjectTarget(object, 0, 100, 100, "v-" + object), Checksum.crc32c(object.hashCode()), 1, 10);
    }

    private IndexRecord published(CompactionOutcome o) {
        assertThat(o).isInstanceOf(CompactionOutcome.Publish.class);
        return ((CompactionOutcome.Publish) o).record();
    }

    @Test
    void publishCompaction_firstGeneration_coversZeroToHorizon() {
        assertThat(await(index.compactedRecord(s))).isEmpty();
        IndexRecord r = published(await(index.publishCompaction(request(Optional.empty(), 8, "c1"))));
        assertThat(r.view()).isEqualTo(ReadView.TOPIC_COMPACTED);
        assertThat(r.range()).isEqualTo(OffsetRange.of(0, 8));
        assertThat(r.generation()).isEqualTo(GenerationId.of(1));
        assertThat(await(index.compactedRecord(s))).contains(r);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).as("COMMITTED sources untouched").hasSize(3);
        IndexLookup l = await(index.lookup(s, ReadView.TOPIC_COMPACTED, 3));
        assertThat(((IndexLookup.Resolved) l).candidates()).containsExactly(r);
        assertThat(await(index.lookup(s, ReadView.TOPIC_COMPACTED, 9))).isEqualTo(new IndexLookup.Unindexed(9));
        IndexLookup committed = await(index.lookup(s, ReadView.COMMITTED, 3));
        assertThat(((IndexLookup.Resolved) committed).candidates()).extracting(IndexRecord::view)
                .containsOnly(ReadView.COMMITTED);
    }

    @Test
    void publishCompaction_nextGeneration_retiresThePreviousOne() {
        IndexRecord first = published(await(index.publishCompaction(request(Optional.empty(), 8, "c1"))));
        IndexRecord second = published(await(index.publishCompaction(request(Optional.of(first), 12, "c2"))));
        assertThat(second.generation()).isEqualTo(GenerationId.of(2));
        assertThat(await(index.compactedRecord(s))).contains(second);
        assertThat(await(index.indexRecords(s, ReadView.TOPIC_COMPACTED))).containsExactly(second);
        assertThat(await(index.retiredRecords(s, 10))).extracting(IndexRecord::target)
                .containsExactly(first.target());
    }

    @Test
    void publishCompaction_horizonNeverMovesBackwards() {
        IndexRecord first = published(await(index.publishCompaction(request(Optional.empty(), 8, "c1"))));
        assertThat(await(index.publishCompaction(request(Optional.of(first), 8, "c2"))))
                .isEqualTo(new CompactionOutcome.HorizonNotAhead(8));
        assertThat(await(index.publishCompaction(request(Optional.of(first), 4, "c3"))))
                .isEqualTo(new CompactionOutcome.HorizonNotAhead(8));
        assertThat(await(index.compactedRecord(s))).contains(first);
    }

    @Test
    void publishCompaction_fromAStaleView_isSuperseded() {
        IndexRecord first = published(await(index.publishCompaction(request(Optional.empty(), 8, "c1"))));
        assertThat(await(index.publishCompaction(request(Optional.empty(), 12, "c2"))))
                .isEqualTo(new CompactionOutcome.Superseded(Optional.of(first)));
        IndexRecord second = published(await(index.publishCompaction(request(Optional.of(first), 12, "c3"))));
        assertThat(await(index.publishCompaction(request(Optional.of(first), 12, "c4"))))
                .isEqualTo(new CompactionOutcome.Superseded(Optional.of(second)));
    }

    @Test
    void publishCompaction_retried_isAlreadyPublished_andBeyondTheHead_isNotCommitted() {
        IndexRecord first = published(await(index.publishCompaction(request(Optional.empty(), 8, "c1"))));
        assertThat(await(index.publishCompaction(request(Optional.empty(), 8, "c1"))))
                .isEqualTo(new CompactionOutcome.AlreadyPublished(first));
        assertThat(await(index.publishCompaction(request(Optional.of(first), 13, "c2"))))
                .isEqualTo(new CompactionOutcome.NotCommitted(12));
    }

    @Test
    void dropCompaction_retiresTheView_aCompactionThatReadItIsSuperseded_andTheNextStartsAfresh() {
        IndexRecord first = published(await(index.publishCompaction(request(Optional.empty(), 8, "c1"))));
        assertThat(await(index.dropCompaction(s))).extracting(IndexRecord::target).containsExactly(first.target());
        assertThat(await(index.compactedRecord(s))).isEmpty();
        assertThat(await(index.lookup(s, ReadView.TOPIC_COMPACTED, 3))).isEqualTo(new IndexLookup.Unindexed(3));
        assertThat(await(index.retiredRecords(s, 10))).extracting(IndexRecord::target).containsExactly(first.target());
        assertThat(await(index.dropCompaction(s))).as("idempotent").isEmpty();

        assertThat(await(index.publishCompaction(request(Optional.of(first), 12, "c2"))))
                .isEqualTo(new CompactionOutcome.Superseded(Optional.empty()));
        IndexRecord fresh = published(await(index.publishCompaction(request(Optional.empty(), 4, "c3"))));
        assertThat(fresh.range()).isEqualTo(OffsetRange.of(0, 4));
        assertThat(fresh.generation()).isEqualTo(GenerationId.of(2));
        assertThat(await(index.compactedRecord(s))).contains(fresh);
    }

    @Test
    void trim_keepsTheCompactedView_andItServesBelowTheTrimPoint() {
        IndexRecord r = published(await(index.publishCompaction(request(Optional.empty(), 8, "c1"))));
        await(streams.trim(s, 12, e));
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 3))).isEqualTo(new IndexLookup.Trimmed(12));
        IndexLookup l = await(index.lookup(s, ReadView.TOPIC_COMPACTED, 3));
        assertThat(((IndexLookup.Resolved) l).candidates()).containsExactly(r);
        assertThat(await(index.compactedRecord(s))).contains(r);
        assertThat(await(index.retiredRecords(s, 10))).extracting(IndexRecord::view).containsOnly(ReadView.COMMITTED);
    }
}
