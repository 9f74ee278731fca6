package io.nereus.stream;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readDensePayloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.WalTarget;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Faults on the append path, on a real in-process bookie: a failed BookKeeper write and a takeover by a second
 * writer. Each test checks the stream's invariants afterwards from a second storage instance (no tail cache):
 * offsets dense from 0, and the stored content exactly the acknowledged payloads in order.
 */
class WalFaultsTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1));

    private EngineFixture engine;
    private MetadataStore metadata;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "faults");
        metadata = engine.metadata;
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private StreamStorage storage(String writerId, WalConfig wal) {
        return engine.storage(writerId, StorageConfig.defaults().withWal(wal));
    }

    /**
     * The WAL slice's ledger is fenced by a recovery open from another BookKeeper client (what a takeover or
     * an auditor does), so the writer's next add is refused by the bookie. Both streams of the failing batch
     * fail, nothing of the batch is committed or readable, and both continue at their committed ends in a new
     * slice.
     */
    @Test
    void bookKeeperWriteFails_appendsOfTheBatchFail_nothingCommitted_streamsContinueAtTheirHeads() throws Exception {
        // a batch is sealed when it reaches 1 KiB; the delay is long so the test decides what shares a batch
        StreamStorage storage = storage("broker-a", WAL.withFlush(1024, Duration.ofSeconds(20)).withFlushWhenIdle(false));
        NereusStream x = await(storage.openStream("x"));
        NereusStream y = await(storage.openStream("y"));
        await(x.acquireWriter());
        await(y.acquireWriter());
        byte[] x0 = filled(2048, 'a');
        assertThat(await(x.append(List.of(AppendEntry.of(x0))))).isEqualTo(OffsetRange.single(0));
        long brokenSlice = sliceOf(x, 0);

        ReadHandle recovered = TestLedgers.recover(BK.newClient(), brokenSlice, WAL.password());
        assertThat(recovered.isClosed()).isTrue();
        assertThat(recovered.getLastAddConfirmed()).isEqualTo(0);

        // one batch holding both streams: y's small append stays open, x's large one seals it
        CompletableFuture<OffsetRange> yLost = y.append(List.of(AppendEntry.of(payload("y-lost"))));
        CompletableFuture<OffsetRange> xLost = x.append(List.of(AppendEntry.of(filled(2048, 'z'))));
        for (CompletableFuture<OffsetRange> f : List.of(xLost, yLost)) {
            assertThatThrownBy(() -> await(f)).isInstanceOfSatisfying(NereusException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_WRITE_FAILED);
                assertThat(e.retriable()).isTrue();
            });
        }
        assertThat(await(x.head()).committedEnd()).isEqualTo(1);
        assertThat(await(y.head()).committedEnd()).isEqualTo(0);
        assertThat(await(x.read(ReadView.COMMITTED, 1, 10, 1 << 20, BoundaryMode.EXACT_START)).entries()).isEmpty();
        assertThat(await(y.read(ReadView.COMMITTED, 0, 10, 1 << 20, BoundaryMode.EXACT_START)).entries()).isEmpty();

        byte[] x1 = filled(2048, 'b');
        byte[] y0 = filled(2048, 'c');
        assertThat(await(x.append(List.of(AppendEntry.of(x1))))).isEqualTo(OffsetRange.single(1));
        assertThat(await(y.append(List.of(AppendEntry.of(y0))))).isEqualTo(OffsetRange.single(0));
        assertThat(sliceOf(x, 1)).isNotEqualTo(brokenSlice);

        StreamStorage cold = storage("reader", WAL);
        assertThat(readDensePayloads(await(cold.openStream("x")))).containsExactly(x0, x1);
        assertThat(readDensePayloads(await(cold.openStream("y")))).containsExactly(y0);
        assertThat(await(metadata.index().indexRecords(x.id(), ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.single(0), OffsetRange.single(1));
    }

    /**
     * Writer A keeps appends in flight while writer B takes the stream over. Every append of A is either
     * acknowledged or fails FENCED (none with another error); the acknowledged ones are a prefix of A's
     * appends; B continues right after them; the stream holds exactly A's acknowledged payloads followed by
     * B's, at dense offsets.
     */
    @Test
    void takeover_withAppendsInFlight_firstWriterFailsFenced_onlyAcknowledgedAppendsAreVisible() {
        NereusStream a = await(storage("broker-a", WAL).openStream("contended"));
        await(a.acquireWriter());
        List<byte[]> aPayloads = new ArrayList<>();
        List<CompletableFuture<OffsetRange>> aAcks = new ArrayList<>();
        NereusStream b = await(storage("broker-b", WAL).openStream("contended"));
        CompletableFuture<Long> takeover = null;
        for (int i = 0; i < 200; i++) {
            if (i == 100) {
                takeover = b.acquireWriter();
            }
            byte[] p = payload("a-" + i);
            aPayloads.add(p);
            aAcks.add(a.append(List.of(AppendEntry.of(p))));
        }
        await(takeover);
        byte[] afterTakeover = payload("a-after");
        aPayloads.add(afterTakeover);
        aAcks.add(a.append(List.of(AppendEntry.of(afterTakeover))));

        List<byte[]> acknowledged = new ArrayList<>();
        int firstFenced = -1;
        for (int i = 0; i < aAcks.size(); i++) {
            CompletableFuture<OffsetRange> f = aAcks.get(i);
            Throwable failure = await(f.handle((range, error) -> error));
            if (failure == null) {
                assertThat(firstFenced).as("append %d acknowledged after append %d failed", i, firstFenced)
                        .isEqualTo(-1);
                assertThat(f.join()).isEqualTo(OffsetRange.single(i));
                acknowledged.add(aPayloads.get(i));
            } else {
                assertThat(Failures.unwrap(failure)).as("append %d", i).isInstanceOfSatisfying(NereusException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCED));
                firstFenced = firstFenced == -1 ? i : firstFenced;
            }
        }
        assertThat(firstFenced).isBetween(0, aAcks.size() - 1);
        assertThatThrownBy(() -> await(a.append(List.of(AppendEntry.of(payload("a-late")))))).isInstanceOfSatisfying(
                NereusException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCED));

        List<CompletableFuture<OffsetRange>> bAcks = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            byte[] p = payload("b-" + i);
            bAcks.add(b.append(List.of(AppendEntry.of(p))));
            acknowledged.add(p);
        }
        for (int i = 0; i < bAcks.size(); i++) {
            assertThat(await(bAcks.get(i))).isEqualTo(OffsetRange.single(firstFenced + i));
        }

        NereusStream cold = await(storage("reader", WAL).openStream("contended"));
        assertThat(await(cold.head()).committedEnd()).isEqualTo(acknowledged.size());
        assertThat(readDensePayloads(cold)).containsExactlyElementsOf(acknowledged);
    }

    private long sliceOf(NereusStream s, long offset) {
        return await(metadata.index().indexRecords(s.id(), ReadView.COMMITTED)).stream()
                .filter(r -> r.range().contains(offset))
                .map(r -> ((WalTarget) r.target()).sliceId())
                .findFirst().orElseThrow();
    }


    private static byte[] filled(int size, char c) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) c);
        return b;
    }

    private static byte[] payload(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

}
