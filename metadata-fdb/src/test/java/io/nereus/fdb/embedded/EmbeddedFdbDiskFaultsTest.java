package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.FdbErrors;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * EmbeddedFdb's disk failing under its durable log, injected through the log's test hook where the file write or the
 * fsync would throw: a full disk (the batch's write fails before any byte reaches the file) and a failing fsync (the
 * bytes reached the file, their fsync failed). No commit is acknowledged without durability: the commit that met the
 * failure fails 1021 (outcome unknown), the engine then refuses all work with 1000 naming the disk error (the log is
 * dead), and reopening the directory once the disk works recovers every acknowledged commit.
 */
class EmbeddedFdbDiskFaultsTest {
    @TempDir
    Path dir;

    @Test
    void diskFull_commitFails1021_thenEverything1000NamingTheError_reopenRecoversExactlyTheAcknowledgedCommits()
            throws Exception {
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            commitNumbered(db, 0, 10);
            db.setDurableLogTestHook(point -> {
                if (point.equals("before-write")) {
                    throw new IOException("No space left on device");
                }
            });
            assertCommitFails(db, 10, FdbErrors.COMMIT_UNKNOWN_RESULT, "No space left on device");
            assertRefusedAfterTheFailure(db, "No space left on device");
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            assertThat(numbered(db)).as("the failed commit never reached the file").isEqualTo(10);
            commitNumbered(db, 10, 5);
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            assertThat(numbered(db)).isEqualTo(15);
        }
    }

    @Test
    void fsyncFails_commitFails1021_thenEverything1000NamingTheError_reopenRecoversTheAcknowledgedCommits()
            throws Exception {
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            commitNumbered(db, 0, 10);
            db.setDurableLogTestHook(point -> {
                if (point.equals("before-fsync")) {
                    throw new IOException("Input/output error");
                }
            });
            assertCommitFails(db, 10, FdbErrors.COMMIT_UNKNOWN_RESULT, "Input/output error");
            assertRefusedAfterTheFailure(db, "Input/output error");
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            // not acknowledged, yet its bytes were written to the file before the fsync failed and the OS kept them:
            // the unknown outcome is resolved as committed, which is why commit bodies must be idempotent
            assertThat(numbered(db)).isEqualTo(11);
            commitNumbered(db, 11, 5);
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            assertThat(numbered(db)).isEqualTo(16);
        }
    }

    /** A commit of numbered key {@code i} fails with {@code code}, its message naming {@code cause}. */
    private static void assertCommitFails(EmbeddedFdb db, long i, int code, String cause) {
        Transaction tr = db.createTransaction();
        tr.set(key(i), Tuple.from(i).pack());
        CompletableFuture<Void> commit = tr.commit();
        assertThatThrownBy(() -> commit.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOfSatisfying(FDBException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(code);
                    assertThat(e.getMessage()).contains(cause);
                });
        tr.close();
    }

    /** Once the log is dead, commits and reads fail with 1000 naming the disk error; {@code run} does not retry. */
    private static void assertRefusedAfterTheFailure(EmbeddedFdb db, String cause) {
        assertCommitFails(db, 99, FdbErrors.OPERATION_FAILED, cause);
        assertThatThrownBy(() -> db.read(tr -> tr.get(key(0)).join()))
                .satisfies(t -> assertOperationFailed(t, cause));
        assertThatThrownBy(() -> db.run(tr -> {
            tr.set(key(98), Tuple.from(98L).pack());
            return null;
        })).satisfies(t -> assertOperationFailed(t, cause));
    }

    /** {@code t} is, or wraps once, FoundationDB's 1000 naming {@code cause}. */
    private static void assertOperationFailed(Throwable t, String cause) {
        Throwable f = t instanceof FDBException ? t : t.getCause();
        assertThat(f).isInstanceOfSatisfying(FDBException.class, e -> {
            assertThat(e.getCode()).isEqualTo(FdbErrors.OPERATION_FAILED);
            assertThat(e.getMessage()).contains("its durable log failed").contains(cause);
        });
    }

    private static void commitNumbered(Database db, long from, int count) {
        for (long i = from; i < from + count; i++) {
            long n = i;
            db.run(tr -> {
                tr.set(key(n), Tuple.from(n).pack());
                return null;
            });
        }
    }

    /** How many numbered keys the database holds, checking they are exactly 0..n-1 with their values. */
    private static long numbered(Database db) {
        List<KeyValue> rows = db.read(tr -> tr.getRange(Range.startsWith(Tuple.from("k").pack())).asList().join());
        for (int i = 0; i < rows.size(); i++) {
            assertThat(rows.get(i).getKey()).isEqualTo(key(i));
            assertThat(Tuple.fromBytes(rows.get(i).getValue()).getLong(0)).isEqualTo(i);
        }
        return rows.size();
    }

    private static byte[] key(long i) {
        return Tuple.from("k", i).pack();
    }
}
