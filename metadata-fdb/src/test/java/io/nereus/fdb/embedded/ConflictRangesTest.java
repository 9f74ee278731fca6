package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.MutationType;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ConflictRanges}: which ranges reach the resolver, and how they count towards the transaction size. */
class ConflictRangesTest {
    private final WriteMap writes = new WriteMap();
    private final TransactionSettings settings = new TransactionSettings();
    private final ConflictRanges conflicts = new ConflictRanges(writes, settings);

    private static byte[] k(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static List<String> names(List<KeyRange> ranges) {
        return ranges.stream()
                .map(r -> new String(r.begin(), StandardCharsets.ISO_8859_1) + ".."
                        + new String(r.end(), StandardCharsets.ISO_8859_1))
                .toList();
    }

    @Test
    void addRead_leavesOutKeysSetOrClearedByTheTransaction() {
        writes.set(k("b"), k("1"));
        writes.clearRange(k("d"), k("f"));

        conflicts.addRead(new KeyRange(k("a"), k("h")));

        assertThat(names(conflicts.reads())).containsExactly("a..b", "b\0..d", "f..h");
        assertThat(conflicts.approximateSize()).isEqualTo(2 + 3 + 2);
    }

    @Test
    void addRead_keyHoldingOnlyAnAtomicOperation_stillConflicts() {
        writes.mutate(MutationType.ADD, k("b"), new byte[] {1});

        conflicts.addRead(KeyRange.single(k("b")));

        assertThat(names(conflicts.reads())).containsExactly("b..b\0");
    }

    @Test
    void addRead_ofWhollyWrittenRange_addsNothing() {
        writes.clearRange(k("a"), k("z"));

        conflicts.addRead(new KeyRange(k("b"), k("c")));

        assertThat(conflicts.reads()).isEmpty();
        assertThat(conflicts.approximateSize()).isZero();
    }

    @Test
    void addWrite_afterNextWriteNoWriteConflict_skipsOnlyTheNextWrite() {
        settings.nextWriteNoWriteConflict = true;

        conflicts.addWrite(new KeyRange(k("a"), k("c")));
        conflicts.addWrite(new KeyRange(k("d"), k("f")));

        assertThat(names(conflicts.writes())).containsExactly("d..f");
        assertThat(settings.nextWriteNoWriteConflict).isFalse();
        assertThat(conflicts.everyKeyWriteKept()).as("a range was skipped, not a key").isTrue();
        assertThat(conflicts.approximateSize()).isEqualTo(2);
    }

    @Test
    void addKeyWrite_afterNextWriteNoWriteConflict_skipsOnlyTheNextKey_andSaysSo() {
        conflicts.addKeyWrite(k("a"));
        assertThat(conflicts.everyKeyWriteKept()).isTrue();
        settings.nextWriteNoWriteConflict = true;

        conflicts.addKeyWrite(k("b"));
        conflicts.addKeyWrite(k("c"));

        assertThat(conflicts.keyWrites()).extracting(b -> new String(b, java.nio.charset.StandardCharsets.UTF_8))
                .containsExactly("a", "c");
        assertThat(conflicts.writes()).isEmpty();
        assertThat(conflicts.hasWrites()).isTrue();
        assertThat(conflicts.everyKeyWriteKept()).isFalse();
        assertThat(conflicts.approximateSize()).as("each key counts as the range [key, key + 0x00)").isEqualTo(6);
    }

    @Test
    void addExplicitWrite_ignoresNextWriteNoWriteConflict_andLeavesItForTheNextWrite() {
        settings.nextWriteNoWriteConflict = true;

        conflicts.addExplicitWrite(k("a"), k("c"));
        conflicts.addWrite(KeyRange.single(k("d")));

        assertThat(names(conflicts.writes())).containsExactly("a..c");
        assertThat(conflicts.hasWrites()).isTrue();
    }

    @Test
    void approximateSize_addsMutationBytesToConflictEndpoints() {
        assertThat(conflicts.hasWrites()).isFalse();

        conflicts.addMutationBytes(7);
        conflicts.addWrite(new KeyRange(k("ab"), k("abc")));
        conflicts.addRead(new KeyRange(k("x"), k("y")));

        assertThat(conflicts.approximateSize()).isEqualTo(7 + 5 + 2);
    }
}
