package io.nereus.pulsar.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LedgerSizesTest {
    private static void commit(LedgerSizes sizes, long from, int entries, long bytesEach, long segment) {
        for (long o = from; o < from + entries; o++) {
            sizes.committed(o + 1, bytesEach, segment);
        }
    }

    @Test
    void bytes_areExactAtSegmentBoundariesAndInterpolatedInside() {
        LedgerSizes sizes = new LedgerSizes(0, 0, 0);
        commit(sizes, 0, 4, 1000, 2);
        commit(sizes, 4, 3, 10, 2);

        assertThat(sizes.bytesBetween(0, 7)).isEqualTo(4030);
        assertThat(sizes.bytesBetween(4, 7)).as("the small ones only").isEqualTo(30);
        assertThat(sizes.bytesBetween(2, 4)).isEqualTo(2000);
        assertThat(sizes.bytesBefore(5)).as("halfway between 4 and 6").isEqualTo(4010);
        assertThat(sizes.bytesBetween(5, 5)).isZero();
        assertThat(sizes.averageEntryBytes(4)).isEqualTo(10.0);
    }

    @Test
    void trimmed_anchorsAtTheTrimPointAndForgetsBelow() {
        LedgerSizes sizes = new LedgerSizes(0, 0, 0);
        commit(sizes, 0, 4, 1000, 2);
        commit(sizes, 4, 3, 10, 2);

        sizes.trimmed(4);

        assertThat(sizes.bytesBetween(4, 7)).isEqualTo(30);
        assertThat(sizes.bytesBefore(1)).as("below the trim point: what is below it").isEqualTo(4000);
        assertThat(sizes.knownOffsets()).as("only 6 is left between the ends").isEqualTo(1);
        sizes.trimmed(2);
        assertThat(sizes.bytesBetween(4, 7)).as("a lower trim changes nothing").isEqualTo(30);
    }

    @Test
    void openedAfterATrim_estimatesBelowItUntilItTrimsToAnOffsetItCommitted() {
        // the head of the stream above: 7 entries, 4030 bytes, trimmed below 4; its bytes below 4 are not stored
        LedgerSizes sizes = new LedgerSizes(4, 7, 4030);
        assertThat(sizes.bytesBetween(4, 7)).as("3 entries at the lifetime average").isEqualTo(1727);

        commit(sizes, 7, 3, 10, 2);
        assertThat(sizes.bytesBetween(7, 10)).as("known since open").isEqualTo(30);
        sizes.trimmed(8);

        assertThat(sizes.bytesBetween(8, 10)).isEqualTo(20);
        assertThat(sizes.averageEntryBytes(8)).isEqualTo(10.0);
    }

    @Test
    void emptyAndFullyTrimmed_haveNoBytes() {
        LedgerSizes empty = new LedgerSizes(0, 0, 0);
        assertThat(empty.bytesBetween(0, 0)).isZero();
        assertThat(empty.averageEntryBytes(0)).isZero();
        LedgerSizes allTrimmed = new LedgerSizes(5, 5, 500);
        assertThat(allTrimmed.bytesBetween(5, 5)).isZero();
        assertThat(allTrimmed.averageEntryBytes(5)).as("the lifetime average").isEqualTo(100.0);
        allTrimmed.committed(6, 7, 1);
        assertThat(allTrimmed.bytesBetween(5, 6)).isEqualTo(7);
    }

    @Test
    void tinySegments_keepTheKnownOffsetsBounded() {
        LedgerSizes sizes = new LedgerSizes(0, 0, 0);
        int n = 4 * LedgerSizes.MAX_KNOWN;
        for (int o = 0; o < n; o++) {
            sizes.committed(o + 1, o % 2 == 0 ? 1 : 3, 1);
        }

        assertThat(sizes.knownOffsets()).isLessThanOrEqualTo(2 * LedgerSizes.MAX_KNOWN);
        assertThat(sizes.bytesBetween(0, n)).isEqualTo(2L * n);
        long previous = -1;
        for (int o = 0; o <= n; o += 97) {
            long b = sizes.bytesBefore(o);
            assertThat(b).as("monotonic at %d", o).isGreaterThanOrEqualTo(previous).isBetween(o - 2L, 2L * o + 2);
            previous = b;
        }
    }
}
