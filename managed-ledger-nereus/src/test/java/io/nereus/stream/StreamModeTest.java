package io.nereus.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.stream.NereusStream.Mode;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The writer-mode table of a stream handle, move by move. */
class StreamModeTest {
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
    void acquiringAndFencing_areAllowedFromEveryMode() {
        for (Mode m : Mode.values()) {
            assertThat(next(m)).as("from %s", m).contains(Mode.READY, Mode.FENCED);
        }
    }

    @Test
    void refreshing_onlyAfterReady_noWriter_onlyAfterRefreshing() {
        assertThat(next(Mode.READY)).containsExactlyInAnyOrder(Mode.READY, Mode.REFRESHING, Mode.FENCED);
        assertThat(next(Mode.REFRESHING)).containsExactlyInAnyOrder(Mode.READY, Mode.NO_WRITER, Mode.FENCED);
        assertThat(next(Mode.NO_WRITER)).containsExactlyInAnyOrder(Mode.READY, Mode.FENCED);
        assertThat(next(Mode.FENCED)).containsExactlyInAnyOrder(Mode.READY, Mode.FENCED);
    }
}
