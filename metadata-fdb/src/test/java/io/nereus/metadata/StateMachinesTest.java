package io.nereus.metadata;

import static io.nereus.metadata.IndexRecordState.COMMITTED;
import static io.nereus.metadata.IndexRecordState.QUARANTINED;
import static io.nereus.metadata.IndexRecordState.RETIRED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StateMachinesTest {
    @Test
    void storedCodes_areStable() {
        assertThat(Arrays.stream(ReadView.values()).mapToInt(ReadView::code)).containsExactly(1, 2);
        assertThat(Arrays.stream(IndexRecordState.values()).mapToInt(IndexRecordState::code)).containsExactly(1, 2, 3);
        assertThat(Arrays.stream(StreamState.values()).mapToInt(StreamState::code)).containsExactly(1, 2, 3);
        assertThat(Arrays.stream(CatalogState.values()).mapToInt(CatalogState::code)).containsExactly(1, 2, 3);
        assertThat(Arrays.stream(WalSliceState.values()).mapToInt(WalSliceState::code)).containsExactly(1, 2, 3);
        assertThat(ChecksumType.CRC32C.code()).isEqualTo(1);
        for (ReadView v : ReadView.values()) {
            assertThat(ReadView.fromCode(v.code())).isEqualTo(v);
        }
        for (IndexRecordState s : IndexRecordState.values()) {
            assertThat(IndexRecordState.fromCode(s.code())).isEqualTo(s);
        }
        for (StreamState s : StreamState.values()) {
            assertThat(StreamState.fromCode(s.code())).isEqualTo(s);
        }
        for (CatalogState s : CatalogState.values()) {
            assertThat(CatalogState.fromCode(s.code())).isEqualTo(s);
        }
        for (WalSliceState s : WalSliceState.values()) {
            assertThat(WalSliceState.fromCode(s.code())).isEqualTo(s);
        }
        assertThatThrownBy(() -> ReadView.fromCode(0)).hasMessageContaining("unknown read view code 0");
        assertThatThrownBy(() -> IndexRecordState.fromCode(4)).hasMessageContaining("unknown index record state code 4");
        assertThatThrownBy(() -> StreamState.fromCode(0)).hasMessageContaining("unknown stream state code");
    }

    @Test
    void indexRecordState_transitionTable() {
        assertAllowed(COMMITTED, EnumSet.of(QUARANTINED, RETIRED));
        assertAllowed(QUARANTINED, EnumSet.of(QUARANTINED, RETIRED));
        assertAllowed(RETIRED, EnumSet.of(RETIRED));
        for (IndexRecordState s : IndexRecordState.values()) {
            assertThat(s.canTransitionTo(COMMITTED)).as("%s -> COMMITTED", s).isFalse();
        }
        assertThat(COMMITTED.isReadable()).isTrue();
        assertThat(QUARANTINED.isReadable()).isFalse();
        assertThat(RETIRED.isReadable()).isFalse();
    }

    private static void assertAllowed(IndexRecordState from, Set<IndexRecordState> allowed) {
        for (IndexRecordState to : IndexRecordState.values()) {
            assertThat(from.canTransitionTo(to)).as("%s -> %s", from, to).isEqualTo(allowed.contains(to));
            if (allowed.contains(to)) {
                assertThat(from.transitionTo(to)).isEqualTo(to);
            } else {
                assertThatThrownBy(() -> from.transitionTo(to))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessage("index record state cannot go from " + from + " to " + to);
            }
        }
    }

    @Test
    void streamState_transitionTable() {
        assertThat(StreamState.OPEN.canTransitionTo(StreamState.SEALED)).isTrue();
        assertThat(StreamState.OPEN.canTransitionTo(StreamState.DELETING)).isTrue();
        assertThat(StreamState.SEALED.canTransitionTo(StreamState.DELETING)).isTrue();
        assertThat(StreamState.SEALED.canTransitionTo(StreamState.OPEN)).isFalse();
        assertThat(StreamState.DELETING.canTransitionTo(StreamState.OPEN)).isFalse();
        assertThat(StreamState.DELETING.canTransitionTo(StreamState.SEALED)).isFalse();
        for (StreamState s : StreamState.values()) {
            assertThat(s.canTransitionTo(s)).isTrue();
        }
        assertThat(StreamState.OPEN.acceptsCommits()).isTrue();
        assertThat(StreamState.SEALED.acceptsCommits()).isFalse();
        assertThatThrownBy(() -> StreamState.DELETING.transitionTo(StreamState.OPEN))
                .hasMessage("stream state cannot go from DELETING to OPEN");
    }

    @Test
    void catalogAndWalSliceState_transitionTables() {
        assertThat(CatalogState.ACTIVE.canTransitionTo(CatalogState.DELETING)).isTrue();
        assertThat(CatalogState.ACTIVE.canTransitionTo(CatalogState.DELETED)).isFalse();
        assertThat(CatalogState.DELETING.canTransitionTo(CatalogState.DELETED)).isTrue();
        assertThat(CatalogState.DELETED.canTransitionTo(CatalogState.ACTIVE)).isFalse();
        assertThatThrownBy(() -> CatalogState.DELETED.transitionTo(CatalogState.ACTIVE))
                .hasMessage("catalog state cannot go from DELETED to ACTIVE");
        assertThat(WalSliceState.OPEN.canTransitionTo(WalSliceState.SEALED)).isTrue();
        assertThat(WalSliceState.OPEN.canTransitionTo(WalSliceState.COLLECTING)).isFalse();
        assertThat(WalSliceState.SEALED.canTransitionTo(WalSliceState.COLLECTING)).isTrue();
        assertThat(WalSliceState.SEALED.canTransitionTo(WalSliceState.OPEN)).isFalse();
        assertThatThrownBy(() -> WalSliceState.COLLECTING.transitionTo(WalSliceState.SEALED))
                .hasMessage("WAL slice state cannot go from COLLECTING to SEALED");
    }
}
