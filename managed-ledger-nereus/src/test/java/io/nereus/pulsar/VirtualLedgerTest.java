package io.nereus.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.collect.Range;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionBound;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.junit.jupiter.api.Test;

class VirtualLedgerTest {
    private static final long L = (1L << 62) + 7;
    /** Entries 3, 4, 5, 6 stored (0..2 trimmed). */
    private final VirtualLedger v = new VirtualLedger(L, 3, 7);

    private static Position p(long entry) {
        return PositionFactory.create(L, entry);
    }

    @Test
    void construct_firstBeyondEnd_isRefused() {
        assertThatThrownBy(() -> new VirtualLedger(L, 5, 4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("trimOffset <= committedEnd");
    }

    @Test
    void firstAndLast_arePulsarsPositionsAroundTheStoredEntries() {
        assertThat(v.firstPosition()).isEqualTo(p(2));
        assertThat(v.lastConfirmed()).isEqualTo(p(6));
        assertThat(new VirtualLedger(L, 0, 0).lastConfirmed()).isEqualTo(p(-1));
        assertThat(v.entries()).isEqualTo(4);
    }

    @Test
    void isStored_onlyForEntriesOfThisLedgerInRange() {
        assertThat(v.isStored(p(3))).isTrue();
        assertThat(v.isStored(p(6))).isTrue();
        assertThat(v.isStored(p(2))).as("trimmed").isFalse();
        assertThat(v.isStored(p(7))).as("not yet committed").isFalse();
        assertThat(v.isStored(PositionFactory.create(L - 1, 4))).as("an earlier incarnation").isFalse();
    }

    @Test
    void offsetOf_clampsOtherLedgersAndOutOfRangeEntries() {
        assertThat(v.offsetOf(PositionFactory.EARLIEST)).isEqualTo(3);
        assertThat(v.offsetOf(PositionFactory.LATEST)).isEqualTo(7);
        assertThat(v.offsetOf(p(0))).isEqualTo(3);
        assertThat(v.offsetOf(p(5))).isEqualTo(5);
        assertThat(v.offsetOf(p(100))).isEqualTo(7);
    }

    @Test
    void next_andPrevious_stayWithinTheLedger() {
        assertThat(v.next(PositionFactory.EARLIEST)).isEqualTo(p(3));
        assertThat(v.next(p(2))).isEqualTo(p(3));
        assertThat(v.next(p(4))).isEqualTo(p(5));
        assertThat(v.next(p(6))).as("after the last: the next entry to come").isEqualTo(p(7));
        assertThat(v.previous(p(5))).isEqualTo(p(4));
        assertThat(v.previous(p(3))).isEqualTo(p(2));
    }

    @Test
    void previous_isPulsarsGetPreviousPosition() {
        assertThat(v.previous(p(2))).as("trimmed: still the entry before").isEqualTo(p(1));
        assertThat(v.previous(p(0))).as("no earlier ledger").isEqualTo(p(-1));
        assertThat(v.previous(p(9))).as("beyond the end").isEqualTo(p(8));
        assertThat(v.previous(PositionFactory.create(L + 1, 0))).as("first of a later ledger: our last")
                .isEqualTo(p(6));
        assertThat(new VirtualLedger(L, 0, 0).previous(PositionFactory.create(L + 1, 0))).isEqualTo(p(-1));
        assertThat(v.previous(PositionFactory.create(L - 1, 0))).as("an earlier incarnation's first")
                .isEqualTo(PositionFactory.create(L - 1, -1));
        assertThat(v.previous(PositionFactory.LATEST))
                .isEqualTo(PositionFactory.create(Long.MAX_VALUE, Long.MAX_VALUE - 1));
    }

    @Test
    void entriesInRange_countsOnlyStoredEntries() {
        assertThat(v.entries(Range.closed(p(3), p(6)))).isEqualTo(4);
        assertThat(v.entries(Range.openClosed(p(3), p(6)))).isEqualTo(3);
        assertThat(v.entries(Range.closedOpen(p(0), p(5)))).isEqualTo(2);
        assertThat(v.entries(Range.closed(PositionFactory.EARLIEST, PositionFactory.LATEST))).isEqualTo(4);
        assertThat(v.entries(Range.openClosed(p(6), p(9)))).isZero();
    }

    @Test
    void afterN_countsFromTheStartAndStopsAtTheLastConfirmed() {
        assertThat(v.afterN(p(3), 2, PositionBound.startIncluded)).isEqualTo(p(4));
        assertThat(v.afterN(p(3), 2, PositionBound.startExcluded)).isEqualTo(p(5));
        assertThat(v.afterN(p(3), 100, PositionBound.startIncluded)).isEqualTo(p(6));
        assertThat(v.afterN(p(3), 0, PositionBound.startIncluded)).isEqualTo(p(2));
    }
}
