package io.nereus.metadata;

import static io.nereus.error.ErrorAssertions.thrown;
import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.fdb.embedded.CommitFault;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class PublicationStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final StreamCommitStore streams = f.streams;
    private final GenerationIndexStore index = f.index;
    private StreamId s;
    private long e;

    @BeforeEach
    void appendThreeBatches() {
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

    private PublicationRequest request(ReadView view, String object, long start, long end) {
        List<IndexRecord> sources = await(index.indexRecords(s, ReadView.COMMITTED)).stream()
                .filter(r -> r.range().start() >= start && r.range().end() <= end).toList();
        return new PublicationRequest(s, view, OffsetRange.of(start, end),
                sources.stream().map(PublicationRequest.SourceRef::of).toList(),
                new ObjectTarget(object, 0, 100, 100, "v-" + object), Checksum.crc32c(object.hashCode()), end - start, 100);
    }

    @Test
    void publish_replacesSourcesInTheLookupSpace() {
        PublicationOutcome o = await(index.publish(request(ReadView.COMMITTED, "obj-1", 0, 8)));
        assertThat(o).isInstanceOf(PublicationOutcome.Publish.class);
        IndexRecord published = ((PublicationOutcome.Publish) o).record();
        assertThat(published.generation()).isEqualTo(GenerationId.of(1));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 8), OffsetRange.of(8, 12));
        IndexLookup l = await(index.lookup(s, ReadView.COMMITTED, 2));
        // the object first, then the generation-0 record it superseded, now a fallback
        assertThat(((IndexLookup.Resolved) l).candidates()).first().isEqualTo(published);
        assertThat(((IndexLookup.Resolved) l).candidates()).extracting(IndexRecord::generation, IndexRecord::range)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(GenerationId.of(1), OffsetRange.of(0, 8)),
                        org.assertj.core.groups.Tuple.tuple(GenerationId.APPEND, OffsetRange.of(0, 4)));
        assertThat(await(index.retiredRecords(s, 10))).isEmpty();
        assertThat(await(index.fallbackRecords(s, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 4), OffsetRange.of(4, 8));
        PublicationOutcome next = await(index.publish(request(ReadView.COMMITTED, "obj-2", 8, 12)));
        assertThat(((PublicationOutcome.Publish) next).record().generation()).isEqualTo(GenerationId.of(2));
    }

    @Test
    void publish_whoseSourceChanged_isRefused() {
        PublicationRequest req = request(ReadView.COMMITTED, "obj-1", 0, 8);
        await(index.quarantine(new IndexKey(s, ReadView.COMMITTED, 4, GenerationId.APPEND)));
        PublicationOutcome o = await(index.publish(req));
        assertThat(o).isInstanceOf(PublicationOutcome.SourceChanged.class);
        assertThat(((PublicationOutcome.SourceChanged) o).reason()).isEqualTo("is QUARANTINED");
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).hasSize(3);
    }

    @Test
    void publish_belowTrim_isRefusedAsTrimmed() {
        PublicationRequest req = request(ReadView.COMMITTED, "obj-1", 0, 8);
        await(streams.trim(s, 2, e));
        assertThat(await(index.publish(req))).isEqualTo(new PublicationOutcome.Trimmed(2));
    }

    @Test
    void racingPublications_exactlyOneWins() {
        for (int round = 0; round < 5; round++) {
            try (StoreFixture g = new StoreFixture()) {
                StreamId st = g.newStream("r");
                long e = g.acquire(st);
                g.openSlices(1);
                await(g.streams.commit(List.of(append(st, e, 0, 4, 1, 0, 0)), 1));
                List<IndexRecord> src = await(g.index.indexRecords(st, ReadView.COMMITTED));
                List<CompletableFuture<PublicationOutcome>> racers = new java.util.ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    racers.add(g.index.publish(new PublicationRequest(st, ReadView.COMMITTED, OffsetRange.of(0, 4),
                            src.stream().map(PublicationRequest.SourceRef::of).toList(),
                            new ObjectTarget("obj-" + i, 0, 10, 10, "v"), Checksum.crc32c(i), 4, 10)));
                }
                List<PublicationOutcome> outcomes = racers.stream().map(StoreFixture::await).toList();
                assertThat(outcomes).filteredOn(o -> o instanceof PublicationOutcome.Publish).hasSize(1);
                assertThat(outcomes).filteredOn(o -> o instanceof PublicationOutcome.SourceChanged).hasSize(3);
                assertThat(await(g.index.indexRecords(st, ReadView.COMMITTED))).hasSize(1);
            }
        }
    }

    @Test
    void publish_retriedAfterUnknownResult_isAlreadyPublishedAndAllocatesOnce() {
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        PublicationOutcome o = await(index.publish(request(ReadView.COMMITTED, "obj-1", 0, 8)));
        assertThat(o).isInstanceOf(PublicationOutcome.AlreadyPublished.class);
        assertThat(((PublicationOutcome.AlreadyPublished) o).record().generation()).isEqualTo(GenerationId.of(1));
        PublicationOutcome next = await(index.publish(request(ReadView.COMMITTED, "obj-2", 8, 12)));
        assertThat(((PublicationOutcome.Publish) next).record().generation()).isEqualTo(GenerationId.of(2));
    }

    @Test
    void compactedPublication_neverServesCommittedReads() {
        PublicationOutcome o = await(index.publish(request(ReadView.TOPIC_COMPACTED, "compact-1", 0, 12)));
        assertThat(((PublicationOutcome.Publish) o).record().generation()).isEqualTo(GenerationId.of(1));
        IndexLookup committed = await(index.lookup(s, ReadView.COMMITTED, 5));
        assertThat(((IndexLookup.Resolved) committed).candidates()).extracting(IndexRecord::view).containsOnly(ReadView.COMMITTED);
        assertThat(((IndexLookup.Resolved) committed).preferred().generation()).isEqualTo(GenerationId.APPEND);
        IndexLookup compacted = await(index.lookup(s, ReadView.TOPIC_COMPACTED, 5));
        assertThat(((IndexLookup.Resolved) compacted).preferred().target()).isInstanceOf(ObjectTarget.class);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).hasSize(3);
    }

    @Test
    void recompaction_retiresTheCompactedRecordsItSupersedes() {
        IndexRecord first = ((PublicationOutcome.Publish) await(index.publish(request(ReadView.TOPIC_COMPACTED, "c-1", 0, 8)))).record();
        IndexRecord second = ((PublicationOutcome.Publish) await(index.publish(request(ReadView.TOPIC_COMPACTED, "c-2", 0, 12)))).record();
        assertThat(second.generation()).isGreaterThan(first.generation());
        assertThat(await(index.indexRecords(s, ReadView.TOPIC_COMPACTED))).containsExactly(second);
        assertThat(await(index.retiredRecords(s, 10))).extracting(IndexRecord::target).contains(first.target());
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).hasSize(3);
    }

    @Test
    void fallbackRecords_areQuarantinedInPlace_andTrimRetiresThem() {
        IndexRecord published = ((PublicationOutcome.Publish) await(index.publish(
                request(ReadView.COMMITTED, "obj-1", 0, 8)))).record();
        IndexKey fallbackKey = new IndexKey(s, ReadView.COMMITTED, 8, GenerationId.APPEND); // [4, 8)
        assertThat(await(index.quarantine(fallbackKey))).get().extracting(IndexRecord::state)
                .isEqualTo(IndexRecordState.QUARANTINED);
        assertThat(await(index.fallbackRecords(s, ReadView.COMMITTED))).extracting(IndexRecord::state)
                .containsExactly(IndexRecordState.COMMITTED, IndexRecordState.QUARANTINED);
        // offset 5: the object only (its quarantined fallback serves nothing); offset 2: object, then the WAL
        assertThat(((IndexLookup.Resolved) await(index.lookup(s, ReadView.COMMITTED, 5))).candidates())
                .containsExactly(published);
        assertThat(((IndexLookup.Resolved) await(index.lookup(s, ReadView.COMMITTED, 2))).candidates()).hasSize(2);

        await(streams.trim(s, 8, e));
        assertThat(await(index.fallbackRecords(s, ReadView.COMMITTED))).isEmpty();
        assertThat(await(index.retiredRecords(s, 10))).extracting(IndexRecord::range)
                .containsExactlyInAnyOrder(OffsetRange.of(0, 4), OffsetRange.of(4, 8), OffsetRange.of(0, 8));
    }

    @Test
    void publish_unknownStream_fails() {
        PublicationRequest req = request(ReadView.COMMITTED, "obj-1", 0, 4);
        PublicationRequest other = new PublicationRequest(StreamId.of(99), ReadView.COMMITTED, req.range(),
                List.of(new PublicationRequest.SourceRef(new IndexKey(StreamId.of(99), ReadView.COMMITTED, 4, GenerationId.APPEND), 0)),
                req.target(), req.checksum(), 4, 100);
        assertThat(thrown(ErrorCode.NOT_FOUND, () -> await(index.publish(other))).context())
                .containsEntry("stream", StreamId.of(99));
    }
}
