package io.nereus.generation;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.WalIntent;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which slices generation-0 repair reads, in which order. */
class WalEvidenceRepairCandidatesTest {
    private static final Map<Long, WalIntent> INTENTS = Map.of(
            5L, new WalIntent(0, 1), 9L, new WalIntent(10, 2), 7L, new WalIntent(4, 1));

    @Test
    void candidates_areSlicesStartingAtOrBelowTheOffset_greatestFirstOffsetFirst() {
        assertThat(WalEvidenceRepair.candidates(INTENTS, 6)).containsExactly(7L, 5L);
        assertThat(WalEvidenceRepair.candidates(INTENTS, 10)).containsExactly(9L, 7L, 5L);
        assertThat(WalEvidenceRepair.candidates(INTENTS, 0)).containsExactly(5L);
    }

    @Test
    void candidates_ofAnOffsetBeforeEveryIntent_areNone() {
        assertThat(WalEvidenceRepair.candidates(Map.of(3L, new WalIntent(8, 1)), 7)).isEmpty();
    }
}
