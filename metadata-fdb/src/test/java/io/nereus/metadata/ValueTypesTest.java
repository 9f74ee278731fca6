package io.nereus.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class ValueTypesTest {
    private static final StreamId S = StreamId.of(7);
    private static final WalTarget WAL = new WalTarget(12, 3, 1);
    private static final ObjectTarget OBJ = new ObjectTarget("s/7/1", 0, 100, 120, "etag-1");
    private static final Checksum CRC = Checksum.crc32c(0xCAFEBABEL);

    @Test
    void streamId_mustBePositive() {
        assertThat(StreamId.of(1).value()).isEqualTo(1);
        assertThatThrownBy(() -> StreamId.of(0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("positive");
        assertThatThrownBy(() -> StreamId.of(-3)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void offsetRange_validatesAndComputes() {
        OffsetRange r = OffsetRange.of(10, 20);
        assertThat(r.length()).isEqualTo(10);
        assertThat(r.isEmpty()).isFalse();
        assertThat(OffsetRange.of(5, 5).isEmpty()).isTrue();
        assertThat(r.contains(10)).isTrue();
        assertThat(r.contains(19)).isTrue();
        assertThat(r.contains(20)).isFalse();
        assertThat(r.contains(9)).isFalse();
        assertThat(r.contains(OffsetRange.of(12, 20))).isTrue();
        assertThat(r.contains(OffsetRange.of(12, 21))).isFalse();
        assertThat(r.contains(OffsetRange.of(50, 50))).isTrue();
        assertThat(r.intersect(OffsetRange.of(15, 30))).contains(OffsetRange.of(15, 20));
        assertThat(r.intersect(OffsetRange.of(20, 30))).isEmpty();
        assertThat(r.intersect(OffsetRange.of(0, 10))).isEmpty();
        assertThat(r.overlaps(OffsetRange.of(19, 21))).isTrue();
        assertThat(r.overlaps(OffsetRange.of(20, 21))).isFalse();
        assertThat(OffsetRange.single(4)).isEqualTo(OffsetRange.of(4, 5));
        assertThatThrownBy(() -> OffsetRange.of(-1, 3)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("start");
        assertThatThrownBy(() -> OffsetRange.of(5, 4)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("end");
    }

    @Test
    void generationId_nonNegativeAndNext() {
        assertThat(GenerationId.APPEND.isAppend()).isTrue();
        assertThat(GenerationId.of(0)).isSameAs(GenerationId.APPEND);
        assertThat(GenerationId.of(4).next()).isEqualTo(GenerationId.of(5));
        assertThat(GenerationId.of(4).compareTo(GenerationId.of(5))).isNegative();
        assertThatThrownBy(() -> GenerationId.of(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GenerationId.of(Long.MAX_VALUE).next()).isInstanceOf(ArithmeticException.class);
    }

    @Test
    void walTarget_rejectsNegatives() {
        assertThatThrownBy(() -> new WalTarget(-1, 0, 0)).hasMessageContaining("slice");
        assertThatThrownBy(() -> new WalTarget(0, -1, 0)).hasMessageContaining("entry");
        assertThatThrownBy(() -> new WalTarget(0, 0, -1)).hasMessageContaining("position");
    }

    @Test
    void walTarget_keepsItsEarlierSectionsExactly_asAnImmutableList() {
        List<WalTarget.Section> given = new java.util.ArrayList<>(List.of(
                new WalTarget.Section(3, 0, 10, Checksum.crc32c(0xFFFF_FFFFL)),
                new WalTarget.Section(5, 7, 11, Checksum.crc32c(0)),
                new WalTarget.Section(1000, Integer.MAX_VALUE, Long.MAX_VALUE - 5, CRC)));
        WalTarget t = new WalTarget(12, 2000, 2, given);
        given.clear();
        assertThat(t.earlier()).hasSize(3).isEqualTo(List.of(
                new WalTarget.Section(3, 0, 10, Checksum.crc32c(0xFFFF_FFFFL)),
                new WalTarget.Section(5, 7, 11, Checksum.crc32c(0)),
                new WalTarget.Section(1000, Integer.MAX_VALUE, Long.MAX_VALUE - 5, CRC)));
        assertThat(t.earlier().hashCode()).isEqualTo(List.copyOf(t.earlier()).hashCode());
        assertThat(t).isEqualTo(new WalTarget(12, 2000, 2, List.copyOf(t.earlier())));
        assertThat(t.hashCode()).isEqualTo(new WalTarget(12, 2000, 2, List.copyOf(t.earlier())).hashCode());
        assertThat(java.util.stream.IntStream.range(0, 4).mapToLong(t::sectionEntryId).toArray())
                .containsExactly(3, 5, 1000, 2000);
        assertThatThrownBy(() -> t.sectionEntryId(4)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> t.sectionEntryId(-1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThat(t.earlierEnd(0)).isEqualTo(10);
        assertThat(t.earlierEnd(2)).isEqualTo(Long.MAX_VALUE - 5);
        assertThat(t.earlierPosition(1)).isEqualTo(7);
        assertThat(t.earlierPosition(2)).isEqualTo(Integer.MAX_VALUE);
        assertThat(t.earlierChecksumType(0)).isEqualTo(ChecksumType.CRC32C);
        assertThat(t.earlierChecksumValue(0)).isEqualTo(0xFFFF_FFFFL);
        assertThat(t.earlierChecksumValue(2)).isEqualTo(CRC.value());
        assertThatThrownBy(() -> t.earlierPosition(3)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> t.earlier().get(3)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> t.earlierEnd(3)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> t.earlier().add(t.earlier().get(0))).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> t.earlier().set(0, t.earlier().get(0)))
                .isInstanceOf(UnsupportedOperationException.class);
        // a target built from another's sections holds the same
        WalTarget longer = t.followedBy(Long.MAX_VALUE - 2, CRC, new WalTarget(12, Long.MAX_VALUE, 0));
        assertThat(longer.earlier()).hasSize(4).startsWith(t.earlier().toArray(new WalTarget.Section[0]));
        assertThat(new WalTarget(1, 2, 3, List.of()).earlier()).isEmpty();
        List<WalTarget.Section> withNull = new java.util.ArrayList<>();
        withNull.add(null);
        assertThatThrownBy(() -> new WalTarget(1, 2, 3, withNull)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new WalTarget(1, 9, 3, List.of(new WalTarget.Section(4, 0, 10, CRC),
                new WalTarget.Section(4, 0, 11, CRC)))).hasMessageContaining("increasing entry order");
        assertThatThrownBy(() -> new WalTarget(1, 9, 3, List.of(new WalTarget.Section(4, 0, 10, CRC),
                new WalTarget.Section(5, 0, 10, CRC)))).hasMessageContaining("increasing offset order");
    }

    @Test
    void walTargetEarlierSections_holdWhatSectionsWould_andCheckAsTheyDo() {
        List<WalTarget.Section> sections = List.of(
                new WalTarget.Section(3, 0, 10, Checksum.crc32c(0xFFFF_FFFFL)),
                new WalTarget.Section(5, 7, 11, Checksum.crc32c(0)),
                new WalTarget.Section(1000, Integer.MAX_VALUE, Long.MAX_VALUE - 5, CRC));
        WalTarget.EarlierSections added = new WalTarget.EarlierSections(3);
        for (WalTarget.Section s : sections) {
            added.add(s.entryId(), s.positionInBatch(), s.endOffset(), s.checksum().type(), s.checksum().value());
        }
        assertThat(new WalTarget(12, 2000, 2, added.toList())).isEqualTo(new WalTarget(12, 2000, 2, sections));
        assertThat(new WalTarget.EarlierSections(0).toList()).isEmpty();

        WalTarget.EarlierSections one = new WalTarget.EarlierSections(1);
        assertThatThrownBy(one::toList).isInstanceOf(IllegalStateException.class).hasMessageContaining("0 of 1");
        assertThatThrownBy(() -> one.add(-1, 0, 10, ChecksumType.CRC32C, 0)).hasMessageContaining("entry id");
        assertThatThrownBy(() -> one.add(1, -1, 10, ChecksumType.CRC32C, 0)).hasMessageContaining("position");
        assertThatThrownBy(() -> one.add(1, 0, 0, ChecksumType.CRC32C, 0)).hasMessageContaining("end offset");
        assertThatThrownBy(() -> one.add(1, 0, 10, ChecksumType.CRC32C, 1L << 32)).hasMessageContaining("out of range");
        assertThatThrownBy(() -> one.add(1, 0, 10, null, 0)).isInstanceOf(NullPointerException.class);
        one.add(1, 0, 10, ChecksumType.CRC32C, 0);
        assertThatThrownBy(() -> one.add(2, 0, 11, ChecksumType.CRC32C, 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> new WalTarget.EarlierSections(WalTarget.MAX_SECTIONS)).hasMessageContaining("at most");
        assertThatThrownBy(() -> new WalTarget.EarlierSections(-1)).hasMessageContaining("at most");
        // the order checks stay the target's
        WalTarget.EarlierSections backwards = new WalTarget.EarlierSections(2)
                .add(5, 0, 10, ChecksumType.CRC32C, 0).add(4, 0, 11, ChecksumType.CRC32C, 0);
        assertThatThrownBy(() -> new WalTarget(1, 9, 3, backwards.toList()))
                .hasMessageContaining("increasing entry order");
    }

    @Test
    void objectTarget_rangeMustFitObject() {
        assertThat(new ObjectTarget("k", 20, 100, 120, "v").byteLength()).isEqualTo(100);
        assertThatThrownBy(() -> new ObjectTarget("k", 21, 100, 120, "v")).hasMessageContaining("exceeds object size");
        assertThatThrownBy(() -> new ObjectTarget("k", Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, "v"))
                .hasMessageContaining("exceeds");
        assertThatThrownBy(() -> new ObjectTarget("k", 0, 0, 120, "v")).hasMessageContaining("length");
        assertThatThrownBy(() -> new ObjectTarget("", 0, 1, 1, "v")).hasMessageContaining("key");
        assertThatThrownBy(() -> new ObjectTarget("k", 0, 1, 1, "")).hasMessageContaining("version");
        assertThatThrownBy(() -> new ObjectTarget("k".repeat(1025), 0, 1, 1, "v")).hasMessageContaining("key");
    }

    @Test
    void checksum_crc32cMatchesJdk() {
        byte[] data = "nereus".getBytes();
        CRC32C crc = new CRC32C();
        crc.update(data);
        Checksum c = Checksum.crc32cOf(data);
        assertThat(c.value()).isEqualTo(crc.getValue());
        assertThat(c.matches(data)).isTrue();
        assertThat(c.matches("nereuS".getBytes())).isFalse();
        assertThat(Checksum.crc32c(-1).value()).isEqualTo(0xFFFF_FFFFL);
        assertThatThrownBy(() -> new Checksum(ChecksumType.CRC32C, 1L << 32)).hasMessageContaining("out of range");
        assertThat(ChecksumType.fromCode(1)).isEqualTo(ChecksumType.CRC32C);
        assertThatThrownBy(() -> ChecksumType.fromCode(9)).hasMessageContaining("unknown checksum type code 9");
    }

    static IndexRecord record(ReadView view, long start, long end, long gen, ReadTarget target, long entries) {
        return new IndexRecord(S, view, OffsetRange.of(start, end), GenerationId.of(gen), IndexRecordState.COMMITTED,
                target, CRC, entries, 1000, 0);
    }

    @Test
    void indexRecord_validatesInvariants() {
        IndexRecord r = record(ReadView.COMMITTED, 0, 10, 0, WAL, 10);
        assertThat(r.endOffset()).isEqualTo(10);
        assertThat(r.serves(9)).isTrue();
        assertThat(r.serves(10)).isFalse();
        assertThatThrownBy(() -> record(ReadView.COMMITTED, 5, 5, 0, WAL, 0)).hasMessageContaining("empty");
        assertThatThrownBy(() -> record(ReadView.COMMITTED, 0, 10, 0, WAL, 0)).hasMessageContaining("entry count");
        assertThatThrownBy(() -> record(ReadView.COMMITTED, 0, 10, 0, WAL, 11)).hasMessageContaining("entry count");
        assertThat(record(ReadView.TOPIC_COMPACTED, 0, 10, 3, OBJ, 0).entryCount()).isZero();
        assertThatThrownBy(() -> record(ReadView.COMMITTED, 0, 10, 0, OBJ, 1)).hasMessageContaining("must target the WAL");
        assertThat(record(ReadView.COMMITTED, 0, 10, 2, OBJ, 1).target()).isEqualTo(OBJ);
    }

    @Test
    void indexRecord_withStateBumpsVersionAndFollowsStateMachine() {
        IndexRecord r = record(ReadView.COMMITTED, 0, 10, 0, WAL, 10);
        IndexRecord q = r.withState(IndexRecordState.QUARANTINED);
        assertThat(q.state()).isEqualTo(IndexRecordState.QUARANTINED);
        assertThat(q.metadataVersion()).isEqualTo(1);
        assertThat(q.serves(3)).isFalse();
        IndexRecord retired = q.withState(IndexRecordState.RETIRED);
        assertThat(retired.metadataVersion()).isEqualTo(2);
        assertThatThrownBy(() -> retired.withState(IndexRecordState.COMMITTED))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("RETIRED").hasMessageContaining("COMMITTED");
    }

    @Test
    void streamHead_invariants() {
        StreamHead h = StreamHead.initial();
        assertThat(h.readableRange()).isEqualTo(OffsetRange.of(0, 0));
        assertThatThrownBy(() -> new StreamHead(StreamState.OPEN, 5, 6, 0, 0, Optional.empty(), 0))
                .hasMessageContaining("trimOffset <= committedEnd");
        assertThatThrownBy(() -> new StreamHead(StreamState.OPEN, 5, -1, 0, 0, Optional.empty(), 0))
                .hasMessageContaining("trimOffset");
        assertThatThrownBy(() -> new StreamHead(StreamState.OPEN, 5, 0, 0, 1, Optional.empty(), 0))
                .hasMessageContaining("writer id");
        assertThatThrownBy(() -> new StreamHead(StreamState.OPEN, 5, 0, 0, 0, Optional.of("b1"), 0))
                .hasMessageContaining("writer id");
        assertThatThrownBy(() -> new StreamHead(StreamState.OPEN, 5, 0, -1, 0, Optional.empty(), 0))
                .hasMessageContaining("commit version");
        assertThatThrownBy(() -> new StreamHead(StreamState.OPEN, 5, 0, 0, 0, Optional.empty(), -1))
                .hasMessageContaining("cumulative bytes");
    }

    @Test
    void streamHead_commitFenceTrimSeal() {
        StreamHead h = StreamHead.initial().withNewWriter("broker-a");
        assertThat(h.writerEpoch()).isEqualTo(1);
        h = h.withCommitted(OffsetRange.of(0, 5), 500).withCommitted(OffsetRange.of(5, 6), 10);
        assertThat(h.committedEnd()).isEqualTo(6);
        assertThat(h.commitVersion()).isEqualTo(2);
        assertThat(h.cumulativeBytes()).isEqualTo(510);
        StreamHead at6 = h;
        assertThatThrownBy(() -> at6.withCommitted(OffsetRange.of(7, 8), 1)).hasMessageContaining("committedEnd 6");
        assertThat(h.withTrimOffset(4).trimOffset()).isEqualTo(4);
        assertThat(h.withTrimOffset(4).withTrimOffset(2).trimOffset()).isEqualTo(4);
        assertThatThrownBy(() -> at6.withTrimOffset(7)).hasMessageContaining("beyond committedEnd");
        StreamHead sealed = h.withState(StreamState.SEALED);
        assertThatThrownBy(() -> sealed.withCommitted(OffsetRange.of(6, 7), 1)).hasMessageContaining("SEALED");
        assertThat(h.withNewWriter("broker-b").writerId()).contains("broker-b");
    }

    @Test
    void walIntent_validates() {
        assertThat(new WalIntent(0, 1).firstOffset()).isZero();
        assertThatThrownBy(() -> new WalIntent(-1, 1)).hasMessageContaining("first offset");
        assertThatThrownBy(() -> new WalIntent(0, 0)).hasMessageContaining("writer epoch");
    }

    @Test
    void catalogEntry_reservedLedgerRangeAndReincarnation() {
        long base = CatalogEntry.MIN_VIRTUAL_LEDGER_ID;
        CatalogEntry e = new CatalogEntry("t/ns/topic", S, base, 1, CatalogState.ACTIVE);
        assertThatThrownBy(() -> new CatalogEntry("t", S, base - 1, 1, CatalogState.ACTIVE)).hasMessageContaining("reserved");
        assertThatThrownBy(() -> new CatalogEntry("", S, base, 1, CatalogState.ACTIVE)).hasMessageContaining("empty");
        assertThatThrownBy(() -> new CatalogEntry("t", S, base, 0, CatalogState.ACTIVE)).hasMessageContaining("incarnation");
        assertThatThrownBy(() -> e.reincarnate(StreamId.of(8), base + 1)).hasMessageContaining("ACTIVE");
        CatalogEntry next = e.withState(CatalogState.DELETING).withState(CatalogState.DELETED)
                .reincarnate(StreamId.of(8), base + 1);
        assertThat(next).isEqualTo(new CatalogEntry("t/ns/topic", StreamId.of(8), base + 1, 2, CatalogState.ACTIVE));
    }

    @Test
    void cursorState_validatesRangesAndAckSets() {
        CursorState ok = new CursorState(10, List.of(OffsetRange.of(10, 12), OffsetRange.of(12, 13), OffsetRange.of(20, 25)),
                new TreeMap<>(Map.of(15L, AckSet.of(3L))), Map.of("p", 1L), Map.of("c", "v"));
        assertThat(ok.isAcknowledged(9)).isTrue();
        assertThat(ok.isAcknowledged(12)).isTrue();
        assertThat(ok.isAcknowledged(13)).isFalse();
        assertThat(ok.isAcknowledged(24)).isTrue();
        assertThat(ok.isAcknowledged(25)).isFalse();
        assertThatThrownBy(() -> new CursorState(10, List.of(OffsetRange.of(8, 12)), new TreeMap<>(), Map.of(), Map.of()))
                .hasMessageContaining("below the mark-delete end");
        assertThatThrownBy(() -> new CursorState(0, List.of(OffsetRange.of(5, 8), OffsetRange.of(7, 9)), new TreeMap<>(), Map.of(), Map.of()))
                .hasMessageContaining("sorted and disjoint");
        assertThatThrownBy(() -> new CursorState(0, List.of(OffsetRange.of(5, 5)), new TreeMap<>(), Map.of(), Map.of()))
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> new CursorState(10, List.of(), new TreeMap<>(Map.of(3L, AckSet.of(1L))), Map.of(), Map.of()))
                .hasMessageContaining("batch ack set at offset 3");
        assertThatThrownBy(() -> new CursorState(-1, List.of(), new TreeMap<>(), Map.of(), Map.of()))
                .hasMessageContaining("mark-delete");
    }

    @Test
    void ackSet_isImmutableAndComparedByContent() {
        long[] words = {1L, 2L};
        AckSet a = AckSet.of(words);
        words[0] = 99;
        assertThat(a.word(0)).isEqualTo(1L);
        a.words()[1] = 77;
        assertThat(a.word(1)).isEqualTo(2L);
        assertThat(a).isEqualTo(AckSet.of(1L, 2L)).hasSameHashCodeAs(AckSet.of(1L, 2L));
        assertThatThrownBy(AckSet::of).hasMessageContaining("words");
    }
}
