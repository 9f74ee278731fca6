package io.nereus.pulsar.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The managed ledger's lifecycle table, move by move. */
class LedgerStateTest {
    private static Set<LedgerState> next(LedgerState from) {
        Set<LedgerState> out = EnumSet.noneOf(LedgerState.class);
        for (LedgerState to : LedgerState.values()) {
            if (from.canTransitionTo(to)) {
                out.add(to);
            }
        }
        return out;
    }

    @Test
    void open_mayBeTerminatedFencedClosedOrDeleted() {
        assertThat(next(LedgerState.OPEN)).containsExactlyInAnyOrder(LedgerState.TERMINATED, LedgerState.FENCED,
                LedgerState.CLOSED, LedgerState.DELETED);
    }

    @Test
    void terminatedAndFenced_mayOnlyCloseOrBeDeleted() {
        assertThat(next(LedgerState.TERMINATED)).containsExactlyInAnyOrder(LedgerState.CLOSED, LedgerState.DELETED);
        assertThat(next(LedgerState.FENCED)).containsExactlyInAnyOrder(LedgerState.CLOSED, LedgerState.DELETED);
    }

    @Test
    void closed_mayCloseAgainOrBeDeleted_deletedIsFinal() {
        assertThat(next(LedgerState.CLOSED)).containsExactlyInAnyOrder(LedgerState.CLOSED, LedgerState.DELETED);
        assertThat(next(LedgerState.DELETED)).isEmpty();
    }

    @Test
    void pulsarNames_areStockStateNames() {
        assertThat(LedgerState.OPEN.pulsarName()).isEqualTo("LedgerOpened");
        assertThat(LedgerState.DELETED.pulsarName()).isEqualTo("Closed");
    }
}
