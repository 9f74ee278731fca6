package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import io.nereus.fdb.FdbErrors;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Byte-exact semantics of every atomic MutationType (fdb-semantics §4.6 item 10; {@code fdbclient/Atomic.h}, with
 * the V2 forms of AND and MIN that API >= 510 selects). Each case is checked twice: read back inside the writing
 * transaction (read-your-writes evaluates the op locally) and after commit (evaluated by the engine).
 *
 * <p>Table notation: {@code none} = key absent, {@code empty} = zero-length value, otherwise hex bytes.
 */
class AtomicMutationConformanceTest extends ConformanceTestBase {
    private static final HexFormat HEX = HexFormat.of();

    private static byte[] parse(String cell) {
        return switch (cell) {
            case "none" -> null;
            case "empty" -> new byte[0];
            default -> HEX.parseHex(cell.replace(" ", ""));
        };
    }

    private static String show(byte[] value) {
        return value == null ? "none" : value.length == 0 ? "empty" : HEX.formatHex(value);
    }

    @ParameterizedTest(name = "{0}: existing {1}, param {2} -> {3}")
    @CsvSource({
            // ADD: little-endian, result has the param's length; longer existing is truncated, overflow dropped
            "ADD, none, 0100, 0100",
            "ADD, empty, 0100, 0100",
            "ADD, 01, 02, 03",
            "ADD, ff, 01, 00",
            "ADD, ff00, 01, 00",
            "ADD, 01, 010000, 020000",
            "ADD, ffff, 010000, 000001",
            "ADD, 2800000000000000, 0200000000000000, 2a00000000000000",
            "ADD, 05, empty, empty",
            // BIT_AND (V2): missing -> param; otherwise existing truncated / zero-extended to param's length
            "BIT_AND, none, 0f, 0f",
            "BIT_AND, empty, ff, 00",
            "BIT_AND, ff0f, 3c, 3c",
            "BIT_AND, 0f, ffff, 0f00",
            "AND, none, 0f, 0f",
            // BIT_OR / BIT_XOR: missing or empty -> param
            "BIT_OR, none, 0f, 0f",
            "BIT_OR, empty, 0f, 0f",
            "BIT_OR, f0ff, 0f, ff",
            "BIT_OR, 01, 0204, 0304",
            "BIT_XOR, none, 0f, 0f",
            "BIT_XOR, empty, 0f, 0f",
            "BIT_XOR, ff, 0f, f0",
            "BIT_XOR, 0f0f, ff, f0",
            "BIT_XOR, 01, 0107, 0007",
            // MAX: unsigned little-endian after truncate/extend; missing/empty -> param; empty param -> empty
            "MAX, none, 05, 05",
            "MAX, empty, 05, 05",
            "MAX, 0a, 05, 0a",
            "MAX, 05, 0a, 0a",
            "MAX, 0001, ff, ff",
            "MAX, 05, 0001, 0001",
            "MAX, 07, 0500, 0700",
            "MAX, 05, empty, empty",
            // MIN (V2): missing -> param; present empty is zero-extended; empty param -> empty
            "MIN, none, 05, 05",
            "MIN, 0a, 05, 05",
            "MIN, 05, 0a, 05",
            "MIN, empty, 05, 00",
            "MIN, 0001, ff, 00",
            "MIN, 07, 0500, 0500",
            "MIN, 05, 0001, 0500",
            "MIN, 05, empty, empty",
            // BYTE_MIN / BYTE_MAX: lexicographic; missing -> param
            "BYTE_MAX, none, 61, 61",
            "BYTE_MAX, 616263, 616264, 616264",
            "BYTE_MAX, 62, 616263, 62",
            "BYTE_MAX, empty, 61, 61",
            "BYTE_MIN, none, 61, 61",
            "BYTE_MIN, 616263, 616264, 616263",
            "BYTE_MIN, 62, 616263, 616263",
            "BYTE_MIN, empty, 61, empty",
            // COMPARE_AND_CLEAR: clear when equal; missing stays missing
            "COMPARE_AND_CLEAR, 0102, 0102, none",
            "COMPARE_AND_CLEAR, 0102, 0103, 0102",
            "COMPARE_AND_CLEAR, none, 0102, none",
            "COMPARE_AND_CLEAR, empty, empty, none",
            // APPEND_IF_FITS: missing or empty -> param; empty param -> existing
            "APPEND_IF_FITS, none, 6364, 6364",
            "APPEND_IF_FITS, empty, 6364, 6364",
            "APPEND_IF_FITS, 6162, 6364, 61626364",
            "APPEND_IF_FITS, 6162, empty, 6162",
    })
    void mutate_hasTheDocumentedByteSemantics(MutationType type, String existing, String param, String expected) {
        byte[] key = k("atomic");
        if (parse(existing) != null) {
            putRaw(key, parse(existing));
        }

        Transaction tr = newTransaction();
        tr.mutate(type, key, parse(param));
        assertThat(show(await(tr.get(key)))).as("read-your-writes value").isEqualTo(expected);
        await(tr.commit());

        assertThat(show(getRaw(key))).as("committed value").isEqualTo(expected);
    }

    @Test
    void mutate_isEvaluatedAgainstTheLatestValueAtCommit_notTheReadVersionSnapshot() {
        putRaw(k("n"), le64(1));
        Transaction tr = newTransaction();
        await(tr.getReadVersion());
        tr.mutate(MutationType.ADD, k("n"), le64(5));
        putRaw(k("n"), le64(100));

        await(tr.commit());
        assertThat(fromLe64(getRaw(k("n")))).isEqualTo(105L);
    }

    @Test
    void appendIfFits_whenTheResultWouldExceed100000Bytes_leavesTheValueUnchanged() {
        putRaw(k("a"), filled(60_000, 'x'));
        Transaction tr = newTransaction();
        tr.mutate(MutationType.APPEND_IF_FITS, k("a"), filled(50_000, 'y'));
        assertThat(await(tr.get(k("a")))).hasSize(60_000);
        await(tr.commit());

        assertThat(getRaw(k("a"))).isEqualTo(filled(60_000, 'x'));
    }

    @Test
    void appendIfFits_upToExactly100000Bytes_appends() {
        putRaw(k("a"), filled(60_000, 'x'));
        try (Transaction tr = db.createTransaction()) {
            tr.mutate(MutationType.APPEND_IF_FITS, k("a"), filled(40_000, 'y'));
            await(tr.commit());
        }

        byte[] value = getRaw(k("a"));
        assertThat(value).hasSize(100_000);
        assertThat(value[59_999]).isEqualTo((byte) 'x');
        assertThat(value[60_000]).isEqualTo((byte) 'y');
    }

    @Test
    void mutate_severalOpsOnOneKey_applyInIssueOrder() {
        try (Transaction tr = db.createTransaction()) {
            tr.mutate(MutationType.ADD, k("n"), le64(10));
            tr.mutate(MutationType.MIN, k("n"), le64(4));
            tr.mutate(MutationType.ADD, k("n"), le64(1));
            tr.mutate(MutationType.BIT_XOR, k("n"), le64(1));
            await(tr.commit());
        }

        assertThat(fromLe64(getRaw(k("n")))).isEqualTo(4L);
    }

    @Test
    void mutate_onSystemKeyWithoutAccess_failsKeyOutsideLegalRange2004() {
        Transaction tr = newTransaction();
        assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, () -> {
            tr.mutate(MutationType.ADD, bytes(0xff, 'x'), le64(1));
            await(tr.commit());
        });
    }
}
