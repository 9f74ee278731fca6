package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.tuple.Tuple;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EmbeddedFdbBasicsTest {
    private final EmbeddedFdb db = EmbeddedFdb.inMemory();

    @AfterEach
    void close() {
        db.close();
    }

    private static byte[] k(String s) {
        return Tuple.from(s).pack();
    }

    @Test
    void setThenGet_inLaterTransaction_returnsValue() {
        db.run(tr -> {
            tr.set(k("a"), new byte[] {1});
            return null;
        });
        assertThat((byte[]) db.read(tr -> tr.get(k("a")).join())).containsExactly(1);
    }

    @Test
    void conflictingReadModifyWrite_secondCommitFailsWith1020() throws Exception {
        Transaction t1 = db.createTransaction();
        Transaction t2 = db.createTransaction();
        t1.get(k("x")).get(5, TimeUnit.SECONDS);
        t2.get(k("x")).get(5, TimeUnit.SECONDS);
        t1.set(k("x"), new byte[] {1});
        t2.set(k("x"), new byte[] {2});
        t1.commit().get(5, TimeUnit.SECONDS);
        assertThatThrownBy(() -> t2.commit().join())
                .isInstanceOf(CompletionException.class)
                .cause().isInstanceOf(FDBException.class)
                .satisfies(e -> assertThat(((FDBException) e).getCode()).isEqualTo(1020));
    }

    @Test
    void atomicAdd_accumulatesAcrossTransactions() {
        for (int i = 0; i < 10; i++) {
            db.run(tr -> {
                tr.mutate(MutationType.ADD, k("counter"), new byte[] {1, 0, 0, 0});
                return null;
            });
        }
        assertThat((byte[]) db.read(tr -> tr.get(k("counter")).join())).containsExactly(10, 0, 0, 0);
    }

    @Test
    void directoryLayer_createOrOpen_isStableAcrossTransactions() {
        DirectorySubspace a = db.runAsync(tr -> DirectoryLayer.getDefault().createOrOpen(tr, List.of("nereus", "c1"))).join();
        DirectorySubspace b = db.runAsync(tr -> DirectoryLayer.getDefault().createOrOpen(tr, List.of("nereus", "c1"))).join();
        assertThat(b.getKey()).isEqualTo(a.getKey());
        List<String> children = db.readAsync(tr -> DirectoryLayer.getDefault().list(tr, List.of("nereus"))).join();
        assertThat(children).containsExactly("c1");
    }

    @Test
    void rangeRead_withLimitAndReverse_returnsExpectedRows() {
        db.run(tr -> {
            for (int i = 0; i < 10; i++) {
                tr.set(Tuple.from("r", i).pack(), new byte[] {(byte) i});
            }
            return null;
        });
        List<KeyValue> rows = db.read(tr -> tr.getRange(com.apple.foundationdb.Range.startsWith(Tuple.from("r").pack()), 3, true).asList().join());
        assertThat(rows).extracting(kv -> Tuple.fromBytes(kv.getKey()).getLong(1)).containsExactly(9L, 8L, 7L);
    }
}
