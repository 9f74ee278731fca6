package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class CursorStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final CursorStore cursors = f.cursors;

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void saveLoadListDelete() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        CursorState st = new CursorState(3, List.of(OffsetRange.of(5, 6)), new TreeMap<>(Map.of(8L, AckSet.of(6L))),
                Map.of("md", 1L), Map.of("cp", "x"));
        assertThat(await(cursors.saveCursor(s, "sub-b", e, st))).isEqualTo(WriteOutcome.WRITTEN);
        assertThat(await(cursors.saveCursor(s, "sub-a", e, CursorState.at(0)))).isEqualTo(WriteOutcome.WRITTEN);
        assertThat(await(cursors.loadCursor(s, "sub-b"))).contains(st);
        assertThat(await(cursors.loadCursor(s, "nope"))).isEmpty();
        assertThat(await(cursors.listCursors(s))).containsExactly("sub-a", "sub-b");
        assertThat(await(cursors.deleteCursor(s, "sub-a", e))).isEqualTo(WriteOutcome.WRITTEN);
        assertThat(await(cursors.listCursors(s))).containsExactly("sub-b");
        assertThat(await(cursors.loadCursor(s, "sub-a"))).isEmpty();
    }

    @Test
    void fencedWriter_cannotSaveOrDelete() {
        StreamId s = f.newStream("a");
        long old = f.acquire(s);
        await(cursors.saveCursor(s, "c", old, CursorState.at(1)));
        long fresh = f.acquire(s);
        assertThat(await(cursors.saveCursor(s, "c", old, CursorState.at(9)))).isEqualTo(new WriteOutcome.Fenced(fresh, old));
        assertThat(await(cursors.deleteCursor(s, "c", old))).isEqualTo(new WriteOutcome.Fenced(fresh, old));
        assertThat(await(cursors.loadCursor(s, "c"))).contains(CursorState.at(1));
        assertThat(await(cursors.saveCursor(StreamId.of(404), "c", 1, CursorState.at(1))))
                .isEqualTo(new WriteOutcome.UnknownStream(StreamId.of(404)));
    }

    @Test
    void millionAckedRanges_persistAndReloadExactly_andShrinkingLeavesNoStaleChunks() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        List<OffsetRange> ranges = new ArrayList<>(1_000_000);
        for (long i = 0; i < 1_000_000; i++) {
            ranges.add(OffsetRange.of(2 * i + 1, 2 * i + 2));
        }
        CursorState big = new CursorState(0, ranges, new TreeMap<>(), Map.of(), Map.of());
        assertThat(await(cursors.saveCursor(s, "big", e, big))).isEqualTo(WriteOutcome.WRITTEN);
        assertThat(await(cursors.loadCursor(s, "big"))).contains(big);
        CursorState small = CursorState.at(2_000_000);
        await(cursors.saveCursor(s, "big", e, small));
        assertThat(await(cursors.loadCursor(s, "big"))).contains(small);
        assertThat(await(cursors.listCursors(s))).containsExactly("big");
    }

    @Test
    void stateTooLargeForOneTransaction_isRefusedNotTruncated() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        List<OffsetRange> ranges = new ArrayList<>();
        long at = 0;
        for (int i = 0; i < 1_200_000; i++) {
            long start = at + (1L << 28);
            ranges.add(OffsetRange.of(start, start + (1L << 28)));
            at = start + (1L << 28);
        }
        CursorState huge = new CursorState(0, ranges, new TreeMap<>(), Map.of(), Map.of());
        assertThatThrownBy(() -> await(cursors.saveCursor(s, "huge", e, huge)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("refusing rather than truncating");
    }

    @Test
    void ledgerProperties_saveAndLoad() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        assertThat(await(cursors.loadProperties(s))).isEqualTo(LedgerProperties.empty());
        LedgerProperties p = new LedgerProperties(Map.of("a", "1", "b", "2"));
        assertThat(await(cursors.saveProperties(s, e, p))).isEqualTo(WriteOutcome.WRITTEN);
        assertThat(await(cursors.loadProperties(s))).isEqualTo(p);
        assertThat(await(cursors.saveProperties(s, e + 1, LedgerProperties.empty()))).isInstanceOf(WriteOutcome.Fenced.class);
    }
}
