package io.nereus.fdb.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;

/**
 * Base of the Database conformance suite. Every test gets a {@link Database} (EmbeddedFdb, or a real cluster when
 * {@code -Dnereus.fdb.clusterFile=PATH} is given) and works only under its own random key prefix {@link #space},
 * which is cleared afterwards, so the suite can run against a shared cluster.
 *
 * <p>Tests are written against the fdb-java interfaces only. Errors are checked by code with
 * {@link #assertFdbError(int, ThrowingRunnable)}, which accepts the error whether it is thrown by the call or
 * delivered through the returned future: the real client defers many argument errors (for example
 * {@code key_too_large} from {@code set}) to the next operation, while an in-process engine may raise them at once.
 *
 * <p>Every test has a 60 s limit and runs on a separate thread, so an engine whose retry loop never ends (for
 * example a {@code db.run} that keeps failing with a retryable error) fails that test instead of hanging the build.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class ConformanceTestBase {
    /** How long any single future may take before the test fails. */
    protected static final Duration FUTURE_TIMEOUT = Duration.ofSeconds(10);

    protected FdbTarget target;
    protected Database db;
    /** This test's private key space; everything with its prefix is cleared after the test. */
    protected Subspace space;

    private final List<Transaction> opened = new ArrayList<>();

    @FunctionalInterface
    protected interface ThrowingRunnable {
        void run() throws Exception;
    }

    @BeforeEach
    final void openTarget() {
        target = FdbTarget.open();
        db = target.database();
        space = new Subspace(Tuple.from("nereus-conformance", UUID.randomUUID().toString()));
    }

    @AfterEach
    final void clearSpaceAndClose() {
        try {
            for (Transaction tr : opened) {
                try {
                    tr.close();
                } catch (RuntimeException ignored) {
                    // already closed or invalidated by onError
                }
            }
            await(db.runAsync(tr -> {
                tr.clear(Range.startsWith(space.getKey()));
                return CompletableFuture.completedFuture(null);
            }));
        } catch (RuntimeException | AssertionError e) {
            if (!isEmbedded()) {
                throw e;
            }
            // The embedded engine is discarded with everything in it; a failing cleanup must not hide the test's result.
        } finally {
            target.close();
        }
    }

    // ---- target -----------------------------------------------------------------------------------------------

    protected boolean isEmbedded() {
        return target.isEmbedded();
    }

    protected Optional<EmbeddedFdb> embedded() {
        return target.embedded();
    }

    protected void letMvccWindowPass() {
        target.letMvccWindowPass();
    }

    protected void letTimePass(Duration amount) {
        target.letTimePass(amount);
    }

    /** Skips the test (visibly) unless the embedded engine runs, for tests that need fault injection. */
    protected EmbeddedFdb assumeFaultInjection() {
        Assumptions.assumeTrue(isEmbedded(),
                "needs fault injection (EmbeddedFdb.injectCommitFaults); a real cluster cannot be told to fail commits");
        return embedded().orElseThrow();
    }

    /** A new transaction, closed after the test. */
    protected Transaction newTransaction() {
        return track(db.createTransaction());
    }

    /** Registers {@code tr} (for example one returned by onError) to be closed after the test. */
    protected Transaction track(Transaction tr) {
        opened.add(tr);
        return tr;
    }

    // ---- keys and values --------------------------------------------------------------------------------------

    /** The key {@code prefix + suffix}: raw bytes after the prefix, so tests can reason about byte order. */
    protected byte[] k(String suffix) {
        return ByteArrayUtil.join(space.getKey(), utf8(suffix));
    }

    /** The suffix of a key made by {@link #k(String)}. */
    protected String suffix(byte[] key) {
        assertThat(ByteArrayUtil.startsWith(key, space.getKey())).as("key %s is inside the test's space",
                ByteArrayUtil.printable(key)).isTrue();
        return new String(key, space.getKey().length, key.length - space.getKey().length, StandardCharsets.UTF_8);
    }

    protected Range spaceRange() {
        return Range.startsWith(space.getKey());
    }

    protected static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    protected static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    protected static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    protected static byte[] le64(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
    }

    protected static long fromLe64(byte[] value) {
        return ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    protected static byte[] filled(int length, int value) {
        byte[] b = new byte[length];
        java.util.Arrays.fill(b, (byte) value);
        return b;
    }

    /** The suffixes (see {@link #k(String)}) of the keys of {@code kvs}, in order. */
    protected List<String> suffixes(List<KeyValue> kvs) {
        List<String> out = new ArrayList<>(kvs.size());
        for (KeyValue kv : kvs) {
            out.add(suffix(kv.getKey()));
        }
        return out;
    }

    // ---- one-shot transactions --------------------------------------------------------------------------------

    /** Commits {@code key = value} (suffix keys) in one transaction; returns its committed version. */
    protected long put(String suffix, String value) {
        return putRaw(k(suffix), utf8(value));
    }

    protected long putRaw(byte[] key, byte[] value) {
        try (Transaction tr = db.createTransaction()) {
            tr.set(key, value);
            await(tr.commit());
            return tr.getCommittedVersion();
        }
    }

    /** Commits the given suffix keys, each with value "v-" + suffix. */
    protected void putAll(String... suffixes) {
        try (Transaction tr = db.createTransaction()) {
            for (String s : suffixes) {
                tr.set(k(s), utf8("v-" + s));
            }
            await(tr.commit());
        }
    }

    /** Reads a key in a fresh transaction. */
    protected byte[] getRaw(byte[] key) {
        try (Transaction tr = db.createTransaction()) {
            return await(tr.get(key));
        }
    }

    protected String get(String suffix) {
        return str(getRaw(k(suffix)));
    }

    /** Everything in the test's space, read in a fresh transaction. */
    protected List<KeyValue> readSpace() {
        try (Transaction tr = db.createTransaction()) {
            return await(tr.getRange(spaceRange()).asList());
        }
    }

    // ---- futures and errors -----------------------------------------------------------------------------------

    /** Waits at most {@link #FUTURE_TIMEOUT}; a failed future rethrows its cause wrapped in CompletionException. */
    protected static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(FUTURE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new CompletionException(e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("future did not complete within " + FUTURE_TIMEOUT, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for a future", e);
        }
    }

    /** The FDBException in {@code t}'s cause chain, or null. */
    protected static FDBException fdbCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof FDBException fe) {
                return fe;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return null;
    }

    /**
     * Runs {@code action} and asserts that it fails with FDB error {@code expectedCode}, thrown directly or through
     * a future awaited inside the action.
     */
    protected static FDBException assertFdbError(int expectedCode, ThrowingRunnable action) {
        Throwable thrown = null;
        try {
            action.run();
        } catch (Throwable t) {
            thrown = t;
        }
        if (thrown == null) {
            fail("expected FDB error %d (%s) but the operation succeeded", expectedCode, ErrorNames.of(expectedCode));
        }
        FDBException fe = fdbCause(thrown);
        if (fe == null) {
            if (thrown instanceof AssertionError ae) {
                throw ae;
            }
            throw new AssertionError("expected FDB error " + expectedCode + " (" + ErrorNames.of(expectedCode)
                    + ") but got " + thrown, thrown);
        }
        assertThat(fe.getCode())
                .as("FDB error code (expected %d %s, got %d %s: %s)", expectedCode, ErrorNames.of(expectedCode),
                        fe.getCode(), ErrorNames.of(fe.getCode()), fe.getMessage())
                .isEqualTo(expectedCode);
        return fe;
    }

    /** Asserts that {@code future} fails with FDB error {@code expectedCode}. */
    protected static FDBException assertFailsWith(int expectedCode, CompletableFuture<?> future) {
        return assertFdbError(expectedCode, () -> await(future));
    }
}
