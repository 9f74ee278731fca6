package io.nereus.pulsar.cursor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.metadata.AckSet;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.OffsetRange;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AckTrackerTest {
    private static BitSet bits(int... set) {
        BitSet b = new BitSet();
        for (int i : set) {
            b.set(i);
        }
        return b;
    }

    @Test
    void delete_adjacentToMarkDelete_advancesMarkDelete() {
        AckTracker t = new AckTracker(5);
        assertThat(t.delete(5)).isTrue();
        assertThat(t.markDeleteEnd()).isEqualTo(6);
        assertThat(t.rangeCount()).isZero();
    }

    @Test
    void delete_gapThenFill_mergesRangesIntoMarkDelete() {
        AckTracker t = new AckTracker(0);
        t.delete(2);
        t.delete(4);
        t.delete(3);
        assertThat(t.ranges()).containsExactly(OffsetRange.of(2, 5));
        assertThat(t.markDeleteEnd()).isZero();
        t.delete(1);
        assertThat(t.ranges()).containsExactly(OffsetRange.of(1, 5));
        t.delete(0);
        assertThat(t.markDeleteEnd()).isEqualTo(5);
        assertThat(t.ranges()).isEmpty();
    }

    @Test
    void delete_alreadyDeleted_returnsFalse() {
        AckTracker t = new AckTracker(3);
        t.delete(7);
        assertThat(t.delete(1)).isFalse();
        assertThat(t.delete(7)).isFalse();
        assertThat(t.ranges()).containsExactly(OffsetRange.single(7));
    }

    @Test
    void markDeleteTo_overRange_absorbsTouchingRangeAndDropsCovered() {
        AckTracker t = new AckTracker(0);
        t.delete(2);
        t.delete(6);
        t.delete(7);
        t.deleteBatchIndexes(4, bits(1));
        assertThat(t.markDeleteTo(6)).isTrue();
        assertThat(t.markDeleteEnd()).isEqualTo(8);
        assertThat(t.ranges()).isEmpty();
        assertThat(t.batchAckSet(4)).isNull();
        assertThat(t.markDeleteTo(3)).isFalse();
        assertThat(t.markDeleteEnd()).isEqualTo(8);
    }

    @Test
    void deleteBatchIndexes_partialThenRest_intersectsThenDeletesEntry() {
        AckTracker t = new AckTracker(0);
        t.delete(0);
        assertThat(t.deleteBatchIndexes(2, bits(1, 2, 3))).isTrue();
        assertThat(BitSet.valueOf(t.batchAckSet(2))).isEqualTo(bits(1, 2, 3));
        t.deleteBatchIndexes(2, bits(0, 2, 3));
        assertThat(BitSet.valueOf(t.batchAckSet(2))).isEqualTo(bits(2, 3));
        assertThat(t.isDeleted(2)).isFalse();
        t.deleteBatchIndexes(2, bits(0, 1));
        assertThat(t.isDeleted(2)).isTrue();
        assertThat(t.batchAckSet(2)).isNull();
        assertThat(t.ranges()).containsExactly(OffsetRange.single(2));
    }

    @Test
    void markDeleteBatch_partialSet_mdBeforeEntryAndSetNeverRollsBack() {
        AckTracker t = new AckTracker(0);
        t.markDeleteBatch(4, bits(3, 4));
        assertThat(t.markDeleteEnd()).isEqualTo(4);
        assertThat(BitSet.valueOf(t.batchAckSet(4))).isEqualTo(bits(3, 4));
        t.markDeleteBatch(4, bits(1, 2, 3, 4));
        assertThat(BitSet.valueOf(t.batchAckSet(4))).isEqualTo(bits(3, 4));
        t.markDeleteBatch(4, new BitSet());
        assertThat(t.markDeleteEnd()).isEqualTo(5);
        assertThat(t.batchAckSet(4)).isNull();
    }

    @Test
    void nextUndeletedAndCounts_withRanges_skipDeleted() {
        AckTracker t = new AckTracker(2);
        t.delete(4);
        t.delete(5);
        t.delete(8);
        assertThat(t.nextUndeleted(0)).isEqualTo(2);
        assertThat(t.nextUndeleted(4)).isEqualTo(6);
        assertThat(t.nextUndeleted(6)).isEqualTo(6);
        assertThat(t.nextDeletedStart(6)).isEqualTo(8);
        assertThat(t.nextDeletedStart(9)).isEqualTo(Long.MAX_VALUE);
        assertThat(t.countIndividuallyDeleted(2, 10)).isEqualTo(3);
        assertThat(t.countIndividuallyDeleted(5, 8)).isEqualTo(1);
        assertThat(t.countIndividuallyDeleted(8, 8)).isZero();
        // undeleted from 2: 2, 3, 6, 7, 9, ...
        assertThat(t.nthUndeleted(2, 1)).isEqualTo(2);
        assertThat(t.nthUndeleted(2, 3)).isEqualTo(6);
        assertThat(t.nthUndeleted(2, 5)).isEqualTo(9);
        assertThatThrownBy(() -> t.nthUndeleted(2, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void toState_thenOf_roundTripsEverything() {
        AckTracker t = new AckTracker(3);
        t.delete(5);
        t.delete(9);
        t.delete(10);
        t.deleteBatchIndexes(7, bits(0, 65));
        CursorState s = t.toState(Map.of("p", 1L), Map.of("c", "v"));
        assertThat(s.markDeleteEnd()).isEqualTo(3);
        assertThat(s.individuallyDeleted()).containsExactly(OffsetRange.single(5), OffsetRange.of(9, 11));
        assertThat(s.batchAckSets()).containsEntry(7L, AckSet.of(bits(0, 65).toLongArray()));
        assertThat(s.properties()).containsEntry("p", 1L);
        AckTracker back = AckTracker.of(s);
        assertThat(back.toState(Map.of("p", 1L), Map.of("c", "v"))).isEqualTo(s);
    }

    @Test
    void of_storedRangeTouchingMarkDelete_isAbsorbed() {
        CursorState s = new CursorState(3, List.of(OffsetRange.of(3, 6)), new java.util.TreeMap<>(), Map.of(),
                Map.of());
        assertThat(AckTracker.of(s).markDeleteEnd()).isEqualTo(6);
    }

    @Test
    void rangesString_twoRanges_pulsarFormat() {
        AckTracker t = new AckTracker(0);
        t.delete(2);
        t.delete(3);
        t.delete(6);
        assertThat(t.rangesString(7)).isEqualTo("[(7:1..7:3],(7:5..7:6]]");
        assertThat(new AckTracker(0).rangesString(7)).isEqualTo("[]");
    }

    @Test
    void reset_afterAcks_forgetsRangesAndSets() {
        AckTracker t = new AckTracker(0);
        t.delete(4);
        t.deleteBatchIndexes(6, bits(1));
        t.reset(2);
        assertThat(t.markDeleteEnd()).isEqualTo(2);
        assertThat(t.ranges()).isEmpty();
        assertThat(t.batchAckSet(6)).isNull();
        assertThatThrownBy(() -> t.reset(-1)).hasMessageContaining("-1");
    }

    @Test
    void operations_seededRandom_matchBooleanModel() {
        for (long seed = 1; seed <= 20; seed++) {
            java.util.Random random = new java.util.Random(seed);
            int n = 120;
            boolean[] deleted = new boolean[n + 1];
            AckTracker t = new AckTracker(0);
            for (int step = 0; step < 300; step++) {
                if (random.nextInt(10) == 0) {
                    int end = random.nextInt(n);
                    t.markDeleteTo(end);
                    for (int i = 0; i < end; i++) {
                        deleted[i] = true;
                    }
                } else {
                    int o = random.nextInt(n);
                    t.delete(o);
                    deleted[o] = true;
                }
                int md = 0;
                while (deleted[md]) {
                    md++;
                }
                long inRanges = 0;
                for (int i = md; i < n; i++) {
                    inRanges += deleted[i] ? 1 : 0;
                }
                String where = "seed " + seed + " step " + step;
                assertThat(t.markDeleteEnd()).as(where).isEqualTo(md);
                assertThat(t.individuallyDeletedCount()).as(where).isEqualTo(inRanges);
                assertThat(t.countIndividuallyDeleted(md, n)).as(where).isEqualTo(inRanges);
                int probe = random.nextInt(n);
                assertThat(t.isDeleted(probe)).as(where).isEqualTo(deleted[probe]);
                int next = probe;
                while (deleted[next]) {
                    next++;
                }
                assertThat(t.nextUndeleted(probe)).as(where).isEqualTo(next);
            }
            assertThat(AckTracker.of(t.toState(Map.of(), Map.of())).ranges()).isEqualTo(t.ranges());
        }
    }
}
