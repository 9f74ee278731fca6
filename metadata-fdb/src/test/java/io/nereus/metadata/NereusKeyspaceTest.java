package io.nereus.metadata;

import static io.nereus.error.ErrorAssertions.thrown;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.Range;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.error.ErrorCode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NereusKeyspaceTest {
    /** A DirectoryLayer-style short raw prefix, like the one the caller passes in production. */
    private static final NereusKeyspace KS = new NereusKeyspace(new Subspace(new byte[] {0x15, 0x2A}));
    private static final StreamId S = StreamId.of(9);

    @Test
    void tags_arePinned() {
        assertThat(List.of(NereusKeyspace.CATALOG, NereusKeyspace.STREAM, NereusKeyspace.WAL, NereusKeyspace.COUNTER,
                NereusKeyspace.META)).containsExactly(1, 2, 3, 4, 5);
        assertThat(List.of(NereusKeyspace.HEAD, NereusKeyspace.INDEX, NereusKeyspace.RETIRED, NereusKeyspace.GENSEQ,
                NereusKeyspace.INTENT, NereusKeyspace.CURSOR, NereusKeyspace.PROPS)).containsExactly(1, 2, 3, 4, 5, 6, 7);
        assertThat(KS.headKey(S)).isEqualTo(ByteArrayUtil.join(new byte[] {0x15, 0x2A}, Tuple.from(2, 9, 1).pack()));
        assertThat(KS.formatKey()).isEqualTo(ByteArrayUtil.join(new byte[] {0x15, 0x2A}, Tuple.from(5, "format").pack()));
    }

    @Test
    void integerKeys_areExactlyTheTupleLayersBytes_atEveryMagnitude() {
        byte[] prefix = {0x15, 0x2A};
        long[] values = {0, 1, 0xff, 0x100, 0xffff, 0x10000, 0xffffffL, 0x1000000L, 0xffffffffL, 0x100000000L,
                0xffffffffffL, 0xffffffffffffL, 0xffffffffffffffL, 0x100000000000000L, Long.MAX_VALUE};
        for (long v : values) {
            StreamId s = StreamId.of(Math.max(1, v));
            IndexKey k = new IndexKey(s, ReadView.TOPIC_COMPACTED, Math.max(1, v), GenerationId.of(v));
            assertThat(KS.headKey(s)).as("head %d", v)
                    .isEqualTo(ByteArrayUtil.join(prefix, Tuple.from(2, Math.max(1, v), 1).pack()));
            assertThat(KS.indexKey(k)).as("index %d", v).isEqualTo(ByteArrayUtil.join(prefix,
                    Tuple.from(2, Math.max(1, v), 2, ReadView.TOPIC_COMPACTED.code(), Math.max(1, v), v).pack()));
            assertThat(KS.intentKey(S, v)).as("intent %d", v)
                    .isEqualTo(ByteArrayUtil.join(prefix, Tuple.from(2, 9, 5, v).pack()));
            assertThat(KS.walStreamKey(v, S)).as("slice stream %d", v)
                    .isEqualTo(ByteArrayUtil.join(prefix, Tuple.from(3, v, 9).pack()));
            assertThat(KS.unpackIndexKey(KS.indexKey(k))).isEqualTo(k);
        }
    }

    @Test
    void walLeaseAndStateKeys_arePinnedRoundTripAndRefuseOtherKinds() {
        assertThat(List.of(NereusKeyspace.WAL_LEASE, NereusKeyspace.WAL_STATE)).containsExactly(6, 7);
        assertThat(KS.walLeaseKey(4)).isEqualTo(ByteArrayUtil.join(new byte[] {0x15, 0x2A}, Tuple.from(6, 4).pack()));
        assertThat(KS.walStateKey(WalSliceState.SEALED, 12))
                .isEqualTo(ByteArrayUtil.join(new byte[] {0x15, 0x2A}, Tuple.from(7, 2, 12).pack()));
        assertThat(KS.unpackWalLeaseKey(KS.walLeaseKey(4))).isEqualTo(4);
        assertThat(KS.unpackWalStateKey(KS.walStateKey(WalSliceState.OPEN, 12)))
                .isEqualTo(new NereusKeyspace.WalStateKey(WalSliceState.OPEN, 12));
        assertThat(inRange(KS.walStateRange(WalSliceState.OPEN), KS.walStateKey(WalSliceState.OPEN, 0))).isTrue();
        assertThat(inRange(KS.walStateRange(WalSliceState.OPEN), KS.walStateKey(WalSliceState.SEALED, 0))).isFalse();
        assertThat(inRange(KS.walStateRange(WalSliceState.OPEN, 12), KS.walStateKey(WalSliceState.OPEN, 11))).isFalse();
        assertThat(inRange(KS.walStateRange(WalSliceState.OPEN, 12), KS.walStateKey(WalSliceState.OPEN, 12))).isTrue();
        assertThat(inRange(KS.walRange(), KS.walLeaseKey(1))).as("leases are outside the slice records").isFalse();
        assertThat(inRange(KS.walLeaseRange(), KS.walLeaseKey(1))).isTrue();
        byte[] unknownState = KS.root().pack(Tuple.from(7, 9, 1));
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackWalStateKey(unknownState)).context())
                .containsEntry("reason", "unknown WAL slice state code").containsEntry("code", 9L);
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackWalLeaseKey(KS.walSliceKey(4))).context())
                .containsEntry("key", "WAL lease").containsEntry("reason", "element is not the kind's tag");
        assertThatThrownBy(() -> KS.walLeaseKey(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KS.walStateKey(WalSliceState.OPEN, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    private static boolean inRange(Range r, byte[] key) {
        return ByteArrayUtil.compareUnsigned(r.begin, key) <= 0 && ByteArrayUtil.compareUnsigned(key, r.end) < 0;
    }

    @Test
    void everyKey_roundTrips() {
        assertThat(KS.unpackCatalogKey(KS.catalogKey("public/default/persistent/t\u0000x"))).isEqualTo("public/default/persistent/t\u0000x");
        assertThat(KS.unpackHeadKey(KS.headKey(S))).isEqualTo(S);
        IndexKey ik = new IndexKey(S, ReadView.TOPIC_COMPACTED, 1000, GenerationId.of(3));
        assertThat(KS.unpackIndexKey(KS.indexKey(ik))).isEqualTo(ik);
        assertThat(KS.unpackRetiredKey(KS.retiredKey(ik))).isEqualTo(ik);
        assertThat(KS.unpackGenSeqKey(KS.genSeqKey(S, ReadView.COMMITTED)))
                .isEqualTo(new NereusKeyspace.GenSeqKey(S, ReadView.COMMITTED));
        assertThat(KS.unpackIntentKey(KS.intentKey(S, 77))).isEqualTo(new NereusKeyspace.IntentKey(S, 77));
        assertThat(KS.unpackCursorChunkKey(KS.cursorChunkKey(S, "sub-1", 4)))
                .isEqualTo(new NereusKeyspace.CursorChunkKey(S, "sub-1", 4));
        assertThat(KS.unpackCursorChunkKey(KS.cursorChunkKey(S, "sub-1", 0)).isHeader()).isTrue();
        assertThat(KS.unpackPropsKey(KS.propsKey(S))).isEqualTo(S);
        assertThat(KS.unpackWalSliceKey(KS.walSliceKey(123))).isEqualTo(123);
        assertThat(KS.unpackWalStreamKey(KS.walStreamKey(123, S))).isEqualTo(new NereusKeyspace.WalStreamKey(123, S));
        assertThat(KS.unpackCounterKey(KS.counterKey(NereusKeyspace.STREAM_ID_COUNTER))).isEqualTo("streamId");
    }

    @Test
    void unpack_refusesKeysOfAnotherKind() {
        IndexKey ik = new IndexKey(S, ReadView.COMMITTED, 10, GenerationId.APPEND);
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackIndexKey(KS.retiredKey(ik))).context())
                .containsEntry("key", "index").containsEntry("reason", "element is not the kind's tag");
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackHeadKey(KS.propsKey(S))).context())
                .containsEntry("key", "head");
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackCatalogKey(KS.counterKey("x"))).context())
                .containsEntry("key", "catalog");
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackWalSliceKey(KS.walStreamKey(1, S))).context())
                .containsEntry("reason", "wrong number of elements").containsEntry("expected", 2);
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackHeadKey(new byte[] {0x15, 0x2B, 0x01})).context())
                .containsEntry("reason", "outside the Nereus root");
        byte[] unknownView = KS.root().pack(Tuple.from(2, 9, 2, 7, 10, 0));
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackIndexKey(unknownView)).context())
                .containsEntry("reason", "unknown read view code").containsEntry("code", 7L);
        byte[] zeroStream = KS.root().pack(Tuple.from(2, 0, 1));
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackHeadKey(zeroStream)).context())
                .containsEntry("field", "stream id").containsEntry("reason", "not positive");
    }

    @Test
    void keys_refuseBadArgumentsAndOversizedNames() {
        assertThatThrownBy(() -> KS.catalogKey("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KS.catalogKey("x".repeat(FdbLimits.MAX_KEY_BYTES)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("10000-byte key limit");
        assertThatThrownBy(() -> KS.cursorChunkKey(S, "c".repeat(FdbLimits.MAX_KEY_BYTES), 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cursor key");
        assertThatThrownBy(() -> KS.cursorChunkKey(S, "c", -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KS.walSliceKey(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> KS.indexCoveringRange(S, ReadView.COMMITTED, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    private static boolean in(Range r, byte[] key) {
        return ByteArrayUtil.compareUnsigned(r.begin, key) <= 0 && ByteArrayUtil.compareUnsigned(key, r.end) < 0;
    }

    private static IndexKey ik(ReadView v, long end, long gen) {
        return new IndexKey(S, v, end, GenerationId.of(gen));
    }

    @Test
    void indexCoveringRange_startsAtRecordsEndingAfterOffset() {
        // records [0,10) g0, [10,20) g0, [0,20) g5, [20,30) g0 in COMMITTED; [0,100) g1 in TOPIC_COMPACTED
        List<IndexKey> keys = List.of(ik(ReadView.COMMITTED, 10, 0), ik(ReadView.COMMITTED, 20, 0),
                ik(ReadView.COMMITTED, 20, 5), ik(ReadView.COMMITTED, 30, 0), ik(ReadView.TOPIC_COMPACTED, 100, 1));
        Range covering10 = KS.indexCoveringRange(S, ReadView.COMMITTED, 10);
        List<IndexKey> scanned = new ArrayList<>();
        keys.stream().map(KS::indexKey).filter(k -> in(covering10, k))
                .sorted(ByteArrayUtil::compareUnsigned).map(KS::unpackIndexKey).forEach(scanned::add);
        assertThat(scanned).containsExactly(ik(ReadView.COMMITTED, 20, 0), ik(ReadView.COMMITTED, 20, 5),
                ik(ReadView.COMMITTED, 30, 0));
        Range covering9 = KS.indexCoveringRange(S, ReadView.COMMITTED, 9);
        assertThat(in(covering9, KS.indexKey(ik(ReadView.COMMITTED, 10, 0)))).isTrue();
        assertThat(in(covering9, KS.indexKey(ik(ReadView.TOPIC_COMPACTED, 100, 1)))).isFalse();
        assertThat(in(covering9, KS.retiredKey(ik(ReadView.COMMITTED, 10, 0)))).isFalse();
        assertThat(in(KS.indexViewRange(S, ReadView.COMMITTED), KS.indexKey(ik(ReadView.COMMITTED, 10, 0)))).isTrue();
        assertThat(in(KS.indexViewRange(S, ReadView.COMMITTED), KS.indexKey(ik(ReadView.TOPIC_COMPACTED, 10, 0)))).isFalse();
    }

    @Test
    void indexKeys_sortByViewEndOffsetThenGeneration() {
        List<IndexKey> expected = List.of(ik(ReadView.COMMITTED, 9, 0), ik(ReadView.COMMITTED, 10, 0),
                ik(ReadView.COMMITTED, 10, 2), ik(ReadView.COMMITTED, 256, 0), ik(ReadView.COMMITTED, 1L << 40, 0),
                ik(ReadView.TOPIC_COMPACTED, 1, 0));
        List<byte[]> packed = new ArrayList<>(expected.stream().map(KS::indexKey).toList());
        java.util.Collections.reverse(packed);
        packed.sort(ByteArrayUtil::compareUnsigned);
        assertThat(packed.stream().map(KS::unpackIndexKey).toList()).containsExactlyElementsOf(expected);
    }

    @Test
    void indexBelowRange_selectsRecordsWhollyBelowTrim() {
        Range below = KS.indexBelowRange(S, ReadView.COMMITTED, 20);
        assertThat(in(below, KS.indexKey(ik(ReadView.COMMITTED, 10, 0)))).isTrue();
        assertThat(in(below, KS.indexKey(ik(ReadView.COMMITTED, 20, 7)))).isTrue();
        assertThat(in(below, KS.indexKey(ik(ReadView.COMMITTED, 21, 0)))).isFalse();
        assertThat(in(below, KS.indexKey(ik(ReadView.TOPIC_COMPACTED, 5, 0)))).isFalse();
        Range ends = KS.indexEndOffsetRange(S, ReadView.COMMITTED, OffsetRange.of(10, 20));
        assertThat(in(ends, KS.indexKey(ik(ReadView.COMMITTED, 10, 3)))).isTrue();
        assertThat(in(ends, KS.indexKey(ik(ReadView.COMMITTED, 20, 0)))).isFalse();
    }

    @Test
    void cursorRanges_separateCursorsAndKeepChunkOrder() {
        Range a = KS.cursorRange(S, "a");
        assertThat(in(a, KS.cursorChunkKey(S, "a", 0))).isTrue();
        assertThat(in(a, KS.cursorChunkKey(S, "a", 1000))).isTrue();
        assertThat(in(a, KS.cursorChunkKey(S, "ab", 0))).isFalse();
        assertThat(in(a, KS.cursorChunkKey(StreamId.of(10), "a", 0))).isFalse();
        assertThat(in(KS.cursorsRange(S), KS.cursorChunkKey(S, "ab", 3))).isTrue();
        List<byte[]> chunks = new ArrayList<>();
        for (int i : new int[] {300, 2, 0, 10, 1}) {
            chunks.add(KS.cursorChunkKey(S, "a", i));
        }
        chunks.sort(ByteArrayUtil::compareUnsigned);
        assertThat(chunks.stream().map(k -> KS.unpackCursorChunkKey(k).chunk()).toList()).containsExactly(0, 1, 2, 10, 300);
    }

    @Test
    void streamAndOtherRanges_containTheirKeysOnly() {
        Range stream = KS.streamRange(S);
        for (byte[] k : List.of(KS.headKey(S), KS.indexKey(ik(ReadView.COMMITTED, 3, 0)), KS.retiredKey(ik(ReadView.COMMITTED, 3, 0)),
                KS.genSeqKey(S, ReadView.COMMITTED), KS.intentKey(S, 4), KS.cursorChunkKey(S, "c", 0), KS.propsKey(S))) {
            assertThat(in(stream, k)).isTrue();
        }
        assertThat(in(stream, KS.headKey(StreamId.of(90)))).isFalse();
        assertThat(in(stream, KS.walStreamKey(4, S))).isFalse();
        assertThat(in(KS.retiredRange(S), KS.retiredKey(ik(ReadView.TOPIC_COMPACTED, 3, 0)))).isTrue();
        assertThat(in(KS.retiredRange(S), KS.indexKey(ik(ReadView.COMMITTED, 3, 0)))).isFalse();
        assertThat(in(KS.intentRange(S), KS.intentKey(S, 4))).isTrue();
        assertThat(in(KS.walSliceStreamsRange(4), KS.walStreamKey(4, S))).isTrue();
        assertThat(in(KS.walSliceStreamsRange(4), KS.walSliceKey(4))).isFalse();
        assertThat(in(KS.walSliceStreamsRange(4), KS.walStreamKey(5, S))).isFalse();
        assertThat(in(KS.walRange(), KS.walSliceKey(4))).isTrue();
        assertThat(in(KS.catalogRange(), KS.catalogKey("t"))).isTrue();
        assertThat(in(KS.catalogRange(), KS.counterKey("t"))).isFalse();
    }

    @Test
    void producerKeys_arePinnedRoundTripStayInTheStreamAndRefuseOtherKinds() {
        assertThat(List.of(NereusKeyspace.PRODUCER, NereusKeyspace.PRODUCER_END)).containsExactly(9, 10);
        byte[] prefix = {0x15, 0x2A};
        assertThat(KS.producerKey(S, 0)).isEqualTo(ByteArrayUtil.join(prefix, Tuple.from(2, 9, 9, 0).pack()));
        assertThat(KS.producerKey(S, Long.MAX_VALUE))
                .isEqualTo(ByteArrayUtil.join(prefix, Tuple.from(2, 9, 9, Long.MAX_VALUE).pack()));
        assertThat(KS.producerEndKey(S)).isEqualTo(ByteArrayUtil.join(prefix, Tuple.from(2, 9, 10).pack()));
        assertThat(KS.unpackProducerKey(KS.producerKey(S, 4242)))
                .isEqualTo(new NereusKeyspace.ProducerKey(S, 4242));
        assertThat(KS.unpackProducerEndKey(KS.producerEndKey(S))).isEqualTo(S);
        assertThat(in(KS.streamRange(S), KS.producerKey(S, 7))).isTrue();
        assertThat(in(KS.streamRange(S), KS.producerEndKey(S))).isTrue();
        assertThat(in(KS.producerRange(S), KS.producerKey(S, 7))).isTrue();
        assertThat(in(KS.producerRange(S), KS.producerEndKey(S))).isFalse();
        assertThat(in(KS.producerRange(S), KS.producerKey(StreamId.of(10), 7))).isFalse();
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackProducerKey(KS.propsKey(S))).context())
                .containsEntry("key", "producer");
        assertThat(thrown(ErrorCode.METADATA_FORMAT, () -> KS.unpackProducerEndKey(KS.producerKey(S, 1))).context())
                .containsEntry("key", "producer end");
        assertThatThrownBy(() -> KS.producerKey(S, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rootsOfDifferentClusters_doNotOverlap() {
        NereusKeyspace other = new NereusKeyspace(new Subspace(Tuple.from("nereus", "other")));
        NereusKeyspace mine = new NereusKeyspace(new Subspace(Tuple.from("nereus", "mine")));
        assertThat(in(mine.streamRange(S), other.headKey(S))).isFalse();
        assertThat(mine.unpackHeadKey(mine.headKey(S))).isEqualTo(S);
    }
}
