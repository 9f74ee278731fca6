package io.nereus.wal;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.encoded;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.StreamId;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.TestLedgers;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.OpenBuilder;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reader going through several slices on a real bookie, through BookKeeper's ReadHandle: consecutive batches of
 * a slice come in one request each read-ahead, closed and open slices alike (an open slice's last-add-confirmed is
 * asked of its bookies when the handle knows too few), every LedgerEntries read is released, and an entry past a
 * closed slice's end is missing without a request.
 */
class WalReaderAcrossSlicesTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final byte[] PASSWORD = new byte[0];

    /** The client seen by the reader: every LedgerEntries it is handed is recorded with whether it was closed. */
    private static final class Tracking {
        final BookKeeper client;
        final List<AtomicBoolean> entriesClosed = new CopyOnWriteArrayList<>();

        Tracking(BookKeeper real) {
            client = proxy(BookKeeper.class, real, (m, r) -> m.getName().equals("newOpenLedgerOp")
                    ? openBuilder((OpenBuilder) r) : r);
        }

        private OpenBuilder openBuilder(OpenBuilder real) {
            OpenBuilder[] self = new OpenBuilder[1];
            self[0] = proxy(OpenBuilder.class, real, (m, r) -> {
                if (r == real) {
                    return self[0];
                }
                if (m.getName().equals("execute")) {
                    return ((CompletableFuture<?>) r).thenApply(h -> readHandle((ReadHandle) h));
                }
                return r;
            });
            return self[0];
        }

        private ReadHandle readHandle(ReadHandle real) {
            return proxy(ReadHandle.class, real, (m, r) -> m.getName().startsWith("read")
                    && m.getReturnType() == CompletableFuture.class && r instanceof CompletableFuture<?> f
                    ? f.thenApply(e -> e instanceof LedgerEntries le ? tracked(le) : e) : r);
        }

        private LedgerEntries tracked(LedgerEntries real) {
            AtomicBoolean closed = new AtomicBoolean();
            entriesClosed.add(closed);
            return proxy(LedgerEntries.class, real, (m, r) -> {
                if (m.getName().equals("close")) {
                    closed.set(true);
                }
                return r;
            });
        }

        long unreleased() {
            return entriesClosed.stream().filter(c -> !c.get()).count();
        }
    }

    private interface After {
        Object apply(Method method, Object result) throws Exception;
    }

    /** A {@code type} delegating to {@code real}, each result passed through {@code after}. */
    private static <T> T proxy(Class<T> type, T real, After after) {
        InvocationHandler h = (p, m, args) -> {
            Object r;
            try {
                r = m.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            return after.apply(m, r);
        };
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h));
    }

    private static void append(WriteHandle lh, int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            WalSection s = WalSection.of(StreamId.of(7), i, List.of(
                    new AppendEntry(("batch-" + i).getBytes(StandardCharsets.UTF_8), 1)));
            lh.append(encoded(new WalBatch(lh.getId(), i, List.of(s))));
        }
    }

    private static long closedSlice(org.apache.bookkeeper.client.BookKeeper bk, int batches) throws Exception {
        WriteHandle lh = TestLedgers.create(bk, PASSWORD);
        append(lh, 0, batches);
        lh.close();
        return lh.getId();
    }

    /** The first payload of a fetched batch, which it releases. */
    private static String payload(FetchedBatch b) {
        try {
            return b.batch().sections().get(0).entries().get(0).payload().toString(StandardCharsets.UTF_8);
        } finally {
            b.release();
        }
    }

    @Test
    void readingSlicesThrough_fetchesConsecutiveBatchesTogether_andReleasesEveryRead() throws Exception {
        org.apache.bookkeeper.client.BookKeeper bk = BK.newClient();
        long a = closedSlice(bk, 20);
        long b = closedSlice(bk, 12);
        Tracking tracking = new Tracking(BK.newClient());
        try (WalReader reader = new WalReader(tracking.client, PASSWORD, 64)) { // read-ahead 8
            for (long slice : new long[] {a, b}) {
                int batches = slice == a ? 20 : 12;
                for (int e = 0; e < batches; e++) {
                    assertThat(payload(await(reader.read(slice, e)))).isEqualTo("batch-" + e);
                }
            }
            // a: 0, 1..8, 9..16, 17..19; b: 0, 1..8, 9..11
            assertThat(reader.requests()).isEqualTo(7);
            assertThat(tracking.entriesClosed).hasSize(7);
        }
        assertThat(tracking.unreleased()).as("LedgerEntries read and not closed").isZero();
    }

    @Test
    void anOpenSlice_readAheadGoesPastWhatTheHandleFirstKnew() throws Exception {
        org.apache.bookkeeper.client.BookKeeper bk = BK.newClient();
        WriteHandle open = TestLedgers.create(bk, PASSWORD);
        append(open, 0, 10);
        Tracking tracking = new Tracking(BK.newClient());
        try (WalReader reader = new WalReader(tracking.client, PASSWORD, 64)) { // read-ahead 8
            assertThat(payload(await(reader.read(open.getId(), 0)))).isEqualTo("batch-0");
            append(open, 10, 40); // the writer goes on after the reader opened the slice
            for (int e = 1; e < 40; e++) {
                assertThat(payload(await(reader.read(open.getId(), e)))).isEqualTo("batch-" + e);
            }
            // 0 alone, then 1..39 in five read-aheads of at most 8, some after asking the bookies for the
            // last-add-confirmed; a handle that never learnt more than at its open (entry 8) would read 1..8 together
            // and each of the 31 batches after on its own (33 requests), one request per batch would be 40
            assertThat(reader.requests()).isBetween(6L, 10L);
        }
        assertThat(tracking.unreleased()).as("LedgerEntries read and not closed").isZero();
        open.close();
    }

    @Test
    void pastTheEndOfAClosedSlice_isMissing_withoutARequest() throws Exception {
        long slice = closedSlice(BK.newClient(), 3);
        Tracking tracking = new Tracking(BK.newClient());
        try (WalReader reader = new WalReader(tracking.client, PASSWORD, 64)) {
            assertThat(payload(await(reader.readUncached(slice, 2)))).isEqualTo("batch-2");
            assertThat(reader.requests()).isEqualTo(1);
            assertThatThrownBy(() -> await(reader.readUncached(slice, 3)))
                    .isInstanceOfSatisfying(NereusException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.TARGET_MISSING));
            assertThat(reader.requests()).isEqualTo(1);
            assertThatThrownBy(() -> await(reader.readRange(slice, 1, 3)))
                    .isInstanceOfSatisfying(NereusException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.TARGET_MISSING));
        }
        assertThat(tracking.unreleased()).as("LedgerEntries read and not closed").isZero();
    }
}
