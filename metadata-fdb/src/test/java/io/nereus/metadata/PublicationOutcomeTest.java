package io.nereus.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PublicationOutcomeTest {
    private static final StreamId S = StreamId.of(11);
    private static final StreamHead HEAD = StreamHead.initial().withNewWriter("b")
            .withCommitted(OffsetRange.of(0, 30), 300);
    private static final List<IndexRecord> NONE_AT_END = List.of();
    private static final ObjectTarget OBJ = new ObjectTarget("obj/11/a", 0, 300, 400, "v1");

    private static IndexRecord gen0(long start, long end) {
        return new IndexRecord(S, ReadView.COMMITTED, OffsetRange.of(start, end), GenerationId.APPEND,
                IndexRecordState.COMMITTED, new WalTarget(1, start, 0), Checksum.crc32c(start), end - start, 10, 0);
    }

    private static PublicationRequest request(ReadView view, long start, long end, IndexRecord... sources) {
        return new PublicationRequest(S, view, OffsetRange.of(start, end),
                java.util.Arrays.stream(sources).map(PublicationRequest.SourceRef::of).toList(),
                OBJ, Checksum.crc32c(99), end - start, 300);
    }

    private static List<Optional<IndexRecord>> present(IndexRecord... rs) {
        return java.util.Arrays.stream(rs).map(Optional::of).toList();
    }

    @Test
    void publish_allocatesGenerationAndKeepsGenerationZeroSourcesAsFallback() {
        IndexRecord a = gen0(0, 10);
        IndexRecord b = gen0(10, 20);
        PublicationOutcome o = PublicationOutcome.decide(HEAD, Optional.empty(), present(a, b), NONE_AT_END,
                request(ReadView.COMMITTED, 0, 20, a, b));
        assertThat(o).isInstanceOf(PublicationOutcome.Publish.class);
        PublicationOutcome.Publish p = (PublicationOutcome.Publish) o;
        assertThat(p.record().generation()).isEqualTo(GenerationId.of(1));
        assertThat(p.record().target()).isEqualTo(OBJ);
        assertThat(p.record().state()).isEqualTo(IndexRecordState.COMMITTED);
        assertThat(p.nextGeneration()).isEqualTo(GenerationId.of(2));
        assertThat(p.retire()).isEmpty();
        assertThat(p.fallback()).containsExactly(a, b);

        PublicationOutcome again = PublicationOutcome.decide(HEAD, Optional.of(GenerationId.of(7)), present(a, b), NONE_AT_END,
                request(ReadView.COMMITTED, 0, 20, a, b));
        assertThat(((PublicationOutcome.Publish) again).record().generation()).isEqualTo(GenerationId.of(7));
    }

    @Test
    void merge_retiresTheObjectsItSupersedes() {
        IndexRecord a = gen1(0, 10, "obj/11/a");
        IndexRecord b = gen1(10, 20, "obj/11/b");
        PublicationOutcome.Publish p = (PublicationOutcome.Publish) PublicationOutcome.decide(HEAD,
                Optional.of(GenerationId.of(3)), present(a, b), NONE_AT_END, request(ReadView.COMMITTED, 0, 20, a, b));
        assertThat(p.record().generation()).isEqualTo(GenerationId.of(3));
        assertThat(p.fallback()).isEmpty();
        assertThat(p.retire()).extracting(IndexRecord::state).containsOnly(IndexRecordState.RETIRED);
        assertThat(p.retire()).extracting(IndexRecord::range).containsExactly(a.range(), b.range());
        assertThat(p.retire()).extracting(IndexRecord::metadataVersion).containsOnly(1L);
    }

    private static IndexRecord gen1(long start, long end, String key) {
        return new IndexRecord(S, ReadView.COMMITTED, OffsetRange.of(start, end), GenerationId.of(1),
                IndexRecordState.COMMITTED, new ObjectTarget(key, 0, 100, 100, "v"), Checksum.crc32c(start),
                end - start, 10, 0);
    }

    @Test
    void retriedPublication_findsItsEarlierSuccess() {
        IndexRecord a = gen0(0, 10);
        PublicationRequest req = request(ReadView.COMMITTED, 0, 10, a);
        PublicationOutcome.Publish first = (PublicationOutcome.Publish) PublicationOutcome.decide(HEAD, Optional.empty(),
                present(a), NONE_AT_END, req);
        PublicationOutcome retry = PublicationOutcome.decide(HEAD, Optional.of(first.nextGeneration()),
                List.of(Optional.empty()), List.of(first.record()), req);
        assertThat(retry).isEqualTo(new PublicationOutcome.AlreadyPublished(first.record()));
    }

    @Test
    void compactedPublication_keepsCommittedSources() {
        IndexRecord a = gen0(0, 10);
        PublicationOutcome o = PublicationOutcome.decide(HEAD, Optional.empty(), present(a), NONE_AT_END,
                request(ReadView.TOPIC_COMPACTED, 0, 10, a));
        assertThat(((PublicationOutcome.Publish) o).retire()).isEmpty();
        assertThat(((PublicationOutcome.Publish) o).record().view()).isEqualTo(ReadView.TOPIC_COMPACTED);
    }

    @Test
    void changedSources_areRefused() {
        IndexRecord a = gen0(0, 10);
        IndexRecord b = gen0(10, 20);
        PublicationRequest req = request(ReadView.COMMITTED, 0, 20, a, b);
        assertThat(PublicationOutcome.decide(HEAD, Optional.empty(), List.of(Optional.of(a), Optional.empty()), NONE_AT_END, req))
                .isEqualTo(new PublicationOutcome.SourceChanged(IndexKey.of(b), "gone from the lookup space"));
        assertThat(PublicationOutcome.decide(HEAD, Optional.empty(), present(a, b.withState(IndexRecordState.QUARANTINED)), NONE_AT_END, req))
                .isEqualTo(new PublicationOutcome.SourceChanged(IndexKey.of(b), "is QUARANTINED"));
        PublicationRequest gap = request(ReadView.COMMITTED, 0, 20, a, gen0(11, 20));
        assertThat(PublicationOutcome.decide(HEAD, Optional.empty(), present(a, gen0(11, 20)), NONE_AT_END, gap))
                .isInstanceOf(PublicationOutcome.SourceChanged.class);
        PublicationRequest shortSources = request(ReadView.COMMITTED, 0, 20, a);
        assertThat(PublicationOutcome.decide(HEAD, Optional.empty(), present(a), NONE_AT_END, shortSources))
                .isEqualTo(new PublicationOutcome.SourceChanged(IndexKey.of(a), "sources end at 10, not at 20"));
    }

    @Test
    void headRefusals() {
        IndexRecord a = gen0(0, 10);
        PublicationRequest req = request(ReadView.COMMITTED, 0, 10, a);
        assertThat(PublicationOutcome.decide(HEAD.withTrimOffset(5), Optional.empty(), present(a), NONE_AT_END, req))
                .isEqualTo(new PublicationOutcome.Trimmed(5));
        StreamHead short5 = new StreamHead(StreamState.OPEN, 5, 0, 1, 1, Optional.of("b"), 0);
        assertThat(PublicationOutcome.decide(short5, Optional.empty(), present(a), NONE_AT_END, req))
                .isEqualTo(new PublicationOutcome.NotCommitted(5));
        assertThat(PublicationOutcome.decide(HEAD.withState(StreamState.DELETING), Optional.empty(), present(a), NONE_AT_END, req))
                .isEqualTo(new PublicationOutcome.NotAccepting(StreamState.DELETING));
        assertThat(PublicationOutcome.decide(HEAD.withState(StreamState.SEALED), Optional.empty(), present(a), NONE_AT_END, req))
                .isInstanceOf(PublicationOutcome.Publish.class);
    }

    @Test
    void request_validates() {
        IndexRecord a = gen0(0, 10);
        assertThatThrownBy(() -> request(ReadView.COMMITTED, 0, 10)).hasMessageContaining("at least one source");
        IndexRecord otherStream = new IndexRecord(StreamId.of(12), ReadView.COMMITTED, OffsetRange.of(0, 10), GenerationId.APPEND,
                IndexRecordState.COMMITTED, new WalTarget(1, 0, 0), Checksum.crc32c(0), 10, 10, 0);
        assertThatThrownBy(() -> request(ReadView.COMMITTED, 0, 10, otherStream)).hasMessageContaining("not a COMMITTED-view record");
        assertThatThrownBy(() -> PublicationOutcome.decide(HEAD, Optional.empty(), List.of(), NONE_AT_END, request(ReadView.COMMITTED, 0, 10, a)))
                .hasMessageContaining("source reads");
    }
}
