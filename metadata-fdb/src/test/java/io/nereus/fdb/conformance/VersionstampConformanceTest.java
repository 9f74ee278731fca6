package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.nereus.fdb.FdbErrors;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * SET_VERSIONSTAMPED_KEY / _VALUE and getVersionstamp (fdb-semantics §4.6 items 10 and 11): a versionstamp is the
 * 8-byte big-endian commit version followed by a 2-byte big-endian batch order.
 */
class VersionstampConformanceTest extends ConformanceTestBase {

    @Test
    void getVersionstamp_isTenBytes_whoseFirstEightAreTheCommittedVersion() {
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("1"));
        CompletableFuture<byte[]> stamp = tr.getVersionstamp();
        await(tr.commit());

        byte[] bytes = await(stamp);
        assertThat(bytes).hasSize(10);
        assertThat(Versionstamps.commitVersionOf(bytes)).isEqualTo(tr.getCommittedVersion());
    }

    @Test
    void getVersionstamp_completesOnlyAfterCommit() {
        Transaction tr = newTransaction();
        tr.set(k("a"), utf8("1"));
        CompletableFuture<byte[]> stamp = tr.getVersionstamp();

        assertThat(stamp).isNotDone();
        await(tr.commit());
        assertThat(await(stamp)).hasSize(10);
    }

    @Test
    void versionstamps_ofSuccessiveCommits_strictlyIncrease() {
        byte[] previous = null;
        for (int i = 0; i < 3; i++) {
            Transaction tr = newTransaction();
            tr.set(k("a"), utf8("v" + i));
            CompletableFuture<byte[]> stamp = tr.getVersionstamp();
            await(tr.commit());
            byte[] current = await(stamp);
            if (previous != null) {
                assertThat(ByteArrayUtil.compareUnsigned(current, previous)).isPositive();
            }
            previous = current;
        }
    }

    @Test
    void setVersionstampedKey_fillsTheStampAtTheOffset_andStripsTheOffset() {
        byte[] operand = Versionstamps.versionstampedKey(space.getKey(),
                Tuple.from("log", Versionstamp.incomplete(7), "tail"));
        Transaction tr = newTransaction();
        tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, operand, utf8("payload"));
        CompletableFuture<byte[]> stamp = tr.getVersionstamp();
        await(tr.commit());

        List<KeyValue> rows = readSpace();
        assertThat(rows).hasSize(1);
        Tuple key = space.unpack(rows.get(0).getKey());
        assertThat(key.getString(0)).isEqualTo("log");
        assertThat(key.getString(2)).isEqualTo("tail");
        Versionstamp written = key.getVersionstamp(1);
        assertThat(written.isComplete()).isTrue();
        assertThat(written.getUserVersion()).isEqualTo(7);
        assertThat(written.getTransactionVersion()).isEqualTo(await(stamp));
        assertThat(str(rows.get(0).getValue())).isEqualTo("payload");
        assertThat(rows.get(0).getKey()).hasSize(operand.length - 4);
    }

    @Test
    void setVersionstampedValue_fillsTheStampAtTheOffset_andStripsTheOffset() {
        byte[] before = utf8("head:");
        byte[] after = utf8(":tail");
        Transaction tr = newTransaction();
        tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, k("v"), Versionstamps.versionstampedValue(before, after));
        CompletableFuture<byte[]> stamp = tr.getVersionstamp();
        await(tr.commit());

        byte[] value = getRaw(k("v"));
        assertThat(value).isEqualTo(ByteArrayUtil.join(before, await(stamp), after));
    }

    @Test
    void setVersionstampedKey_ordersKeysByCommitOrder() {
        for (int i = 0; i < 3; i++) {
            try (Transaction tr = db.createTransaction()) {
                tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY,
                        Versionstamps.versionstampedKey(space.getKey(), Tuple.from("q", Versionstamp.incomplete(0))),
                        utf8("entry-" + i));
                await(tr.commit());
            }
        }

        assertThat(readSpace()).extracting(kv -> str(kv.getValue()))
                .containsExactly("entry-0", "entry-1", "entry-2");
    }

    @Test
    void get_ofVersionstampedKeyWrittenInTheSameTransaction_failsAccessedUnreadable1036() {
        byte[] operand = Versionstamps.versionstampedKey(space.getKey(), Tuple.from("q", Versionstamp.incomplete(0)));
        Transaction tr = newTransaction();
        tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, operand, utf8("x"));

        assertFdbError(FdbErrors.ACCESSED_UNREADABLE, () -> await(tr.get(Versionstamps.withoutOffset(operand))));
    }

    @Test
    void getRange_overVersionstampedKeyWrittenInTheSameTransaction_failsAccessedUnreadable1036() {
        byte[] operand = Versionstamps.versionstampedKey(space.getKey(), Tuple.from("q", Versionstamp.incomplete(0)));
        Transaction tr = newTransaction();
        tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, operand, utf8("x"));

        assertFdbError(FdbErrors.ACCESSED_UNREADABLE, () -> await(tr.getRange(spaceRange()).asList()));
    }

    @Test
    void get_ofVersionstampedValueWrittenInTheSameTransaction_failsAccessedUnreadable1036() {
        Transaction tr = newTransaction();
        tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, k("v"),
                Versionstamps.versionstampedValue(utf8("h"), new byte[0]));

        assertFdbError(FdbErrors.ACCESSED_UNREADABLE, () -> await(tr.get(k("v"))));
    }

    /** Atomic.h / ReadYourWritesTransaction::atomicOp: offset + 10 past the end is client_invalid_operation. */
    @Test
    void setVersionstampedValue_offsetPastTheEnd_failsClientInvalidOperation2000() {
        byte[] operand = ByteArrayUtil.join(filled(12, 'x'), Versionstamps.le32(5));
        Transaction tr = newTransaction();

        assertFdbError(FdbErrors.CLIENT_INVALID_OPERATION, () -> {
            tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, k("v"), operand);
            await(tr.commit());
        });
    }

    @Test
    void setVersionstampedKey_offsetPastTheEnd_failsClientInvalidOperation2000() {
        byte[] operand = ByteArrayUtil.join(k("x"), Versionstamps.le32(k("x").length - 3));
        Transaction tr = newTransaction();

        assertFdbError(FdbErrors.CLIENT_INVALID_OPERATION, () -> {
            tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, operand, utf8("v"));
            await(tr.commit());
        });
    }

    @Test
    void getVersionstamp_ofReadOnlyTransaction_failsNoCommitVersion2021() {
        Transaction tr = newTransaction();
        await(tr.get(k("a")));
        CompletableFuture<byte[]> stamp = tr.getVersionstamp();
        await(tr.commit());

        assertFailsWith(FdbErrors.NO_COMMIT_VERSION, stamp);
        assertThat(tr.getCommittedVersion()).isEqualTo(-1L);
    }

    @Test
    void getVersionstamp_ofFailedCommit_failsTransactionInvalidVersion2020() {
        Transaction tr = newTransaction();
        await(tr.get(k("a")));
        tr.set(k("b"), utf8("1"));
        CompletableFuture<byte[]> stamp = tr.getVersionstamp();
        put("a", "conflict");

        assertFdbError(FdbErrors.NOT_COMMITTED, () -> await(tr.commit()));
        assertFailsWith(FdbErrors.TRANSACTION_INVALID_VERSION, stamp);
    }

    @Test
    void versionstampPlaceholderHelper_matchesTheTupleLayerLayout() {
        byte[] operand = Versionstamps.versionstampedKey(bytes(1, 2), Tuple.from("a", Versionstamp.incomplete(3)));
        byte[] packed = Versionstamps.withoutOffset(operand);
        int offset = java.nio.ByteBuffer.wrap(operand, operand.length - 4, 4)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();

        assertThat(offset).isEqualTo(2 + Tuple.from("a").pack().length + 1);
        assertThat(packed[offset - 1]).isEqualTo((byte) 0x33);
        assertThat(Arrays.copyOfRange(packed, offset, offset + 10)).isEqualTo(Versionstamps.PLACEHOLDER);
        assertThat(Arrays.copyOfRange(packed, offset + 10, offset + 12)).containsExactly(0, 3);
    }
}
