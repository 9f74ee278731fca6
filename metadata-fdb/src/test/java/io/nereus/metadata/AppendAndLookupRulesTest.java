package io.nereus.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AppendAndLookupRulesTest {
    private static final StreamId S = StreamId.of(3);
    private static final StreamHead HEAD = StreamHead.initial().withNewWriter("b1")
            .withCommitted(OffsetRange.of(0, 10), 100);

    private static StreamAppend append(long epoch, long start, long end) {
        return new StreamAppend(S, epoch, OffsetRange.of(start, end), new WalTarget(7, 1, 0), Checksum.crc32c(5),
                end - start, 40);
    }

    @Test
    void append_validates() {
        assertThatThrownBy(() -> append(0, 0, 1)).hasMessageContaining("epoch");
        assertThatThrownBy(() -> append(1, 3, 3)).hasMessageContaining("empty");
        assertThatThrownBy(() -> new StreamAppend(S, 1, OffsetRange.of(0, 2), new WalTarget(1, 1, 1), Checksum.crc32c(1), 3, 0))
                .hasMessageContaining("entry count");
        assertThat(append(1, 4, 6).generationZeroRecord().generation()).isEqualTo(GenerationId.APPEND);
        assertThat(append(1, 4, 6).intent()).isEqualTo(new WalIntent(4, 1));
    }

    @Test
    void decide_appliesAtCommittedEnd() {
        StreamAppend a = append(1, 10, 12);
        AppendOutcome o = AppendOutcome.decide(HEAD, Optional.empty(), a);
        assertThat(o).isInstanceOf(AppendOutcome.Apply.class);
        AppendOutcome.Apply apply = (AppendOutcome.Apply) o;
        assertThat(apply.next().committedEnd()).isEqualTo(12);
        assertThat(apply.next().commitVersion()).isEqualTo(HEAD.commitVersion() + 1);
        assertThat(apply.next().cumulativeBytes()).isEqualTo(140);
        assertThat(apply.record()).isEqualTo(a.generationZeroRecord());
        assertThat(o.permitsCommit()).isTrue();
    }

    @Test
    void decide_retryAfterUnknownResult_isAlreadyApplied() {
        StreamAppend a = append(1, 10, 12);
        AppendOutcome.Apply first = (AppendOutcome.Apply) AppendOutcome.decide(HEAD, Optional.empty(), a);
        AppendOutcome retry = AppendOutcome.decide(first.next(), Optional.of(first.record()), a);
        assertThat(retry).isEqualTo(new AppendOutcome.AlreadyApplied(first.next()));
        assertThat(retry.permitsCommit()).isTrue();
        StreamAppend other = new StreamAppend(S, 1, OffsetRange.of(10, 12), new WalTarget(7, 2, 0), Checksum.crc32c(5), 2, 40);
        assertThat(AppendOutcome.decide(first.next(), Optional.of(first.record()), other))
                .isEqualTo(new AppendOutcome.UnexpectedStart(12, 10));
    }

    @Test
    void decide_refusals() {
        assertThat(AppendOutcome.decide(HEAD, Optional.empty(), append(2, 10, 11))).isEqualTo(new AppendOutcome.Fenced(1, 2));
        assertThat(AppendOutcome.decide(HEAD.withNewWriter("b2"), Optional.empty(), append(1, 10, 11)))
                .isEqualTo(new AppendOutcome.Fenced(2, 1));
        assertThat(AppendOutcome.decide(HEAD, Optional.empty(), append(1, 9, 11))).isEqualTo(new AppendOutcome.UnexpectedStart(10, 9));
        assertThat(AppendOutcome.decide(HEAD, Optional.empty(), append(1, 11, 12))).isEqualTo(new AppendOutcome.UnexpectedStart(10, 11));
        AppendOutcome sealed = AppendOutcome.decide(HEAD.withState(StreamState.SEALED), Optional.empty(), append(1, 10, 11));
        assertThat(sealed).isEqualTo(new AppendOutcome.NotAccepting(StreamState.SEALED));
        assertThat(sealed.permitsCommit()).isFalse();
    }

    private static IndexRecord rec(ReadView view, long start, long end, long gen, IndexRecordState state) {
        ReadTarget t = gen == 0 && view == ReadView.COMMITTED ? new WalTarget(1, start, 0)
                : new ObjectTarget("o/" + gen, 0, 10, 10, "v" + gen);
        return new IndexRecord(S, view, OffsetRange.of(start, end), GenerationId.of(gen), state, t, Checksum.crc32c(1),
                1, 10, 0);
    }

    @Test
    void lookup_headDecidesVisibilityFirst() {
        StreamHead h = HEAD.withTrimOffset(4);
        List<IndexRecord> all = List.of(rec(ReadView.COMMITTED, 0, 20, 3, IndexRecordState.COMMITTED));
        assertThat(IndexLookup.decide(h, ReadView.COMMITTED, 3, all)).isEqualTo(new IndexLookup.Trimmed(4));
        assertThat(IndexLookup.decide(h, ReadView.COMMITTED, 10, all)).isEqualTo(new IndexLookup.NotYetCommitted(10));
        assertThat(IndexLookup.decide(h, ReadView.COMMITTED, 15, all)).isEqualTo(new IndexLookup.NotYetCommitted(10));
    }

    @Test
    void lookup_prefersHighestReadableGenerationOfTheSameView() {
        List<IndexRecord> scanned = List.of(
                rec(ReadView.COMMITTED, 0, 10, 0, IndexRecordState.COMMITTED),
                rec(ReadView.COMMITTED, 0, 10, 4, IndexRecordState.QUARANTINED),
                rec(ReadView.COMMITTED, 0, 10, 2, IndexRecordState.COMMITTED),
                rec(ReadView.TOPIC_COMPACTED, 0, 10, 9, IndexRecordState.COMMITTED),
                rec(ReadView.COMMITTED, 8, 9, 7, IndexRecordState.COMMITTED));
        IndexLookup l = IndexLookup.decide(HEAD, ReadView.COMMITTED, 5, scanned);
        assertThat(l).isInstanceOf(IndexLookup.Resolved.class);
        assertThat(((IndexLookup.Resolved) l).candidates()).extracting(r -> r.generation().value()).containsExactly(2L, 0L);
        assertThat(((IndexLookup.Resolved) l).preferred().generation().value()).isEqualTo(2);
        IndexLookup compacted = IndexLookup.decide(HEAD, ReadView.TOPIC_COMPACTED, 5, scanned);
        assertThat(((IndexLookup.Resolved) compacted).candidates()).extracting(r -> r.view()).containsOnly(ReadView.TOPIC_COMPACTED);
    }

    @Test
    void lookup_committedOffsetWithoutRecord_isUnindexed() {
        List<IndexRecord> onlyCompacted = List.of(rec(ReadView.TOPIC_COMPACTED, 0, 10, 1, IndexRecordState.COMMITTED));
        assertThat(IndexLookup.decide(HEAD, ReadView.COMMITTED, 5, onlyCompacted)).isEqualTo(new IndexLookup.Unindexed(5));
        assertThat(IndexLookup.decide(HEAD, ReadView.COMMITTED, 5, List.of())).isEqualTo(new IndexLookup.Unindexed(5));
        assertThatThrownBy(() -> new IndexLookup.Resolved(List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
