package io.nereus.pulsar.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.pulsar.ledger.NereusManagedLedger.State;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The managed ledger's lifecycle table, move by move. */
class LedgerStateTest {
    private static Set<State> next(State from) {
        Set<State> out = EnumSet.noneOf(State.class);
        for (State to : State.values()) {
            if (from.canTransitionTo(to)) {
                out.add(to);
            }
        }
        return out;
    }

    @Test
    void open_mayBeTerminatedFencedClosedOrDeleted() {
        assertThat(next(State.OPEN)).containsExactlyInAnyOrder(State.TERMINATED, State.FENCED, State.CLOSED,
                State.DELETED);
    }

    @Test
    void terminatedAndFenced_mayOnlyCloseOrBeDeleted() {
        assertThat(next(State.TERMINATED)).containsExactlyInAnyOrder(State.CLOSED, State.DELETED);
        assertThat(next(State.FENCED)).containsExactlyInAnyOrder(State.CLOSED, State.DELETED);
    }

    @Test
    void closed_mayCloseAgainOrBeDeleted_deletedIsFinal() {
        assertThat(next(State.CLOSED)).containsExactlyInAnyOrder(State.CLOSED, State.DELETED);
        assertThat(next(State.DELETED)).isEmpty();
    }

    @Test
    void pulsarNames_areStockStateNames() {
        assertThat(State.OPEN.pulsarName()).isEqualTo("LedgerOpened");
        assertThat(State.DELETED.pulsarName()).isEqualTo("Closed");
    }
}
