package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import io.nereus.fdb.FdbErrors;
import org.junit.jupiter.api.Test;

/**
 * Key, value and transaction size limits (fdb-semantics §4.6 items 7 and 16). The real client reports a bad
 * set/mutate at the next operation (ThreadSafeTransaction keeps it as a deferred error), so each check accepts
 * the error from the call itself or from the commit that follows.
 */
class LimitsConformanceTest extends ConformanceTestBase {
    private static final int KEY_LIMIT = 10_000;
    private static final int VALUE_LIMIT = 100_000;

    private byte[] keyOfTotalLength(int length) {
        byte[] prefix = k("big-");
        return ByteArrayUtil.join(prefix, filled(length - prefix.length, 'k'));
    }

    @Test
    void set_keyOfExactly10000Bytes_isAccepted() {
        byte[] key = keyOfTotalLength(KEY_LIMIT);
        putRaw(key, utf8("v"));

        assertThat(str(getRaw(key))).isEqualTo("v");
    }

    @Test
    void set_keyOver10000Bytes_failsKeyTooLarge2102() {
        Transaction tr = newTransaction();
        assertFdbError(FdbErrors.KEY_TOO_LARGE, () -> {
            tr.set(keyOfTotalLength(KEY_LIMIT + 1), utf8("v"));
            await(tr.commit());
        });
    }

    @Test
    void mutate_keyOver10000Bytes_failsKeyTooLarge2102() {
        Transaction tr = newTransaction();
        assertFdbError(FdbErrors.KEY_TOO_LARGE, () -> {
            tr.mutate(MutationType.ADD, keyOfTotalLength(KEY_LIMIT + 1), le64(1));
            await(tr.commit());
        });
    }

    @Test
    void set_valueOfExactly100000Bytes_isAccepted() {
        putRaw(k("v"), filled(VALUE_LIMIT, 'x'));

        assertThat(getRaw(k("v"))).hasSize(VALUE_LIMIT);
    }

    @Test
    void set_valueOver100000Bytes_failsValueTooLarge2103() {
        Transaction tr = newTransaction();
        assertFdbError(FdbErrors.VALUE_TOO_LARGE, () -> {
            tr.set(k("v"), filled(VALUE_LIMIT + 1, 'x'));
            await(tr.commit());
        });
        assertThat(get("v")).isNull();
    }

    @Test
    void mutate_operandOver100000Bytes_failsValueTooLarge2103() {
        Transaction tr = newTransaction();
        assertFdbError(FdbErrors.VALUE_TOO_LARGE, () -> {
            tr.mutate(MutationType.APPEND_IF_FITS, k("v"), filled(VALUE_LIMIT + 1, 'x'));
            await(tr.commit());
        });
    }

    @Test
    void commit_transactionOver10MB_failsTransactionTooLarge2101_andAppliesNothing() {
        Transaction tr = newTransaction();
        for (int i = 0; i < 105; i++) {
            tr.set(k(String.format("t%03d", i)), filled(99_000, 'x'));
        }

        assertFdbError(FdbErrors.TRANSACTION_TOO_LARGE, () -> await(tr.commit()));
        assertThat(readSpace()).isEmpty();
    }

    @Test
    void commit_overSizeLimitOption_failsTransactionTooLarge2101() {
        Transaction tr = newTransaction();
        tr.options().setSizeLimit(1_000);
        tr.set(k("a"), filled(2_000, 'x'));

        assertFdbError(FdbErrors.TRANSACTION_TOO_LARGE, () -> await(tr.commit()));
        assertThat(get("a")).isNull();
    }

    @Test
    void commit_underSizeLimitOption_succeeds() {
        Transaction tr = newTransaction();
        tr.options().setSizeLimit(10_000);
        tr.set(k("a"), filled(2_000, 'x'));

        await(tr.commit());
        assertThat(getRaw(k("a"))).hasSize(2_000);
    }

    @Test
    void sizeLimitOption_below32_failsInvalidOptionValue2006() {
        Transaction tr = newTransaction();
        assertFdbError(FdbErrors.INVALID_OPTION_VALUE, () -> {
            tr.options().setSizeLimit(31);
            tr.set(k("a"), utf8("v"));
            await(tr.commit());
        });
    }

    @Test
    void getApproximateSize_growsWithMutationsAndConflictRanges() {
        Transaction tr = newTransaction();
        long empty = await(tr.getApproximateSize());

        tr.set(k("a"), filled(1_000, 'x'));
        long afterSet = await(tr.getApproximateSize());
        assertThat(afterSet).isGreaterThanOrEqualTo(empty + 1_000);

        tr.mutate(MutationType.ADD, k("n"), le64(1));
        long afterAtomic = await(tr.getApproximateSize());
        assertThat(afterAtomic).isGreaterThan(afterSet);

        tr.clear(k("c"), k("d"));
        long afterClear = await(tr.getApproximateSize());
        assertThat(afterClear).isGreaterThan(afterAtomic);

        await(tr.get(k("unwritten")));
        long afterRead = await(tr.getApproximateSize());
        assertThat(afterRead).isGreaterThan(afterClear);
    }
}
