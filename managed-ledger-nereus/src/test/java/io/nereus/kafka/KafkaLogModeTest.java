package io.nereus.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.kafka.KafkaPartitionLog.Mode;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The mode table of a Kafka partition log, move by move. */
class KafkaLogModeTest {
    private static Set<Mode> next(Mode from) {
        Set<Mode> out = EnumSet.noneOf(Mode.class);
        for (Mode to : Mode.values()) {
            if (from.canTransitionTo(to)) {
                out.add(to);
            }
        }
        return out;
    }

    @Test
    void recoveringAndReadyAlternate_failedAndClosedAreFinal() {
        assertThat(next(Mode.RECOVERING)).containsExactlyInAnyOrder(Mode.READY, Mode.FAILED, Mode.CLOSED);
        assertThat(next(Mode.READY)).containsExactlyInAnyOrder(Mode.RECOVERING, Mode.FAILED, Mode.CLOSED);
        assertThat(next(Mode.FAILED)).containsExactly(Mode.CLOSED);
        assertThat(next(Mode.CLOSED)).containsExactly(Mode.CLOSED);
    }
}
