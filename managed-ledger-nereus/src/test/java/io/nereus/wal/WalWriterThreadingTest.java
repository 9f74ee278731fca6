package io.nereus.wal;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.NereusKeyspace;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalTarget;
import io.nereus.testing.BookKeeperCluster;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.client.BookKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The writer's threading model on a real in-process bookie: appends from several threads at once, the batches
 * reaching the slice in sequence order, and the owner thread ending once a closed writer has finished.
 */
class WalWriterThreadingTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    /** Small batches, so that many are sealed, written and committed while appenders keep going. */
    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(2048, Duration.ofMillis(1));

    private EmbeddedFdb fdb;
    private MetadataStore metadata;
    private BookKeeper bk;
    private ScheduledExecutorService scheduler;
    private WalReader reader;

    @BeforeEach
    void setUp() {
        fdb = EmbeddedFdb.inMemory();
        metadata = await(MetadataStore.open(fdb, new NereusKeyspace(new Subspace(Tuple.from("nereus", "threading"))),
                fdb.getExecutor()));
        bk = BK.newClient();
        scheduler = Executors.newSingleThreadScheduledExecutor();
        reader = new WalReader(bk, WAL.password(), 16);
    }

    @AfterEach
    void tearDown() {
        reader.close();
        scheduler.shutdownNow();
        fdb.close();
    }

    @Test
    void appendsFromFourThreads_allCommitted_eachStreamInOffsetOrder_batchesStoredInSequenceOrder()
            throws Exception {
        WalWriter writer = new WalWriter(bk, metadata.streams(), metadata.slices(), WAL, "threading-order", scheduler,
                Clock.systemUTC(), WalObserver.NONE);
        int threads = 4;
        int streamsPerThread = 2;
        int appendsPerStream = 150;
        List<StreamId> ids = new ArrayList<>();
        List<Long> epochs = new ArrayList<>();
        for (int s = 0; s < threads * streamsPerThread; s++) {
            StreamId id = await(metadata.catalog().openStream("s" + s)).streamId();
            ids.add(id);
            epochs.add(await(metadata.streams().acquireWriter(id, "threading-order")).writerEpoch());
        }
        ExecutorService appenders = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<CompletableFuture<StreamHead>>>> submitted = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t * streamsPerThread;
                submitted.add(appenders.submit(() -> {
                    List<CompletableFuture<StreamHead>> acks = new ArrayList<>();
                    for (int i = 0; i < appendsPerStream; i++) {
                        for (int s = first; s < first + streamsPerThread; s++) {
                            acks.add(writer.append(ids.get(s), epochs.get(s), i,
                                    List.of(new AppendEntry(payload(s, i), 1)), () -> true));
                        }
                    }
                    return acks;
                }));
            }
            for (Future<List<CompletableFuture<StreamHead>>> f : submitted) {
                for (CompletableFuture<StreamHead> ack : f.get(30, TimeUnit.SECONDS)) {
                    await(ack);
                }
            }
        } finally {
            appenders.shutdownNow();
            writer.close();
        }

        for (int s = 0; s < ids.size(); s++) {
            StreamId id = ids.get(s);
            assertThat(await(metadata.streams().head(id)).orElseThrow().committedEnd()).isEqualTo(appendsPerStream);
            List<IndexRecord> records = await(metadata.index().indexRecords(id, ReadView.COMMITTED));
            long next = 0;
            long lastSequence = -1;
            for (IndexRecord r : records) {
                assertThat(r.range().start()).as("records of %s are dense", id).isEqualTo(next);
                next = r.range().end();
                WalTarget target = (WalTarget) r.target();
                FetchedBatch fetched = await(reader.read(target.sliceId(), target.entryId()));
                try {
                    WalBatch batch = fetched.batch();
                    WalSection section = batch.sections().get(target.positionInBatch());
                    assertThat(section.stream()).isEqualTo(id);
                    assertThat(batch.sequence()).as("a stream's later appends are in later batches")
                            .isGreaterThan(lastSequence);
                    lastSequence = batch.sequence();
                    for (int j = 0; j < section.entries().size(); j++) {
                        assertThat(io.netty.buffer.ByteBufUtil.getBytes(section.entries().get(j).payload()))
                                .isEqualTo(payload(s, (int) (section.firstOffset() + j)));
                    }
                } finally {
                    fetched.release();
                }
            }
            assertThat(next).isEqualTo(appendsPerStream);
        }
        long slice = ((WalTarget) await(metadata.index().indexRecords(ids.get(0), ReadView.COMMITTED)).get(0).target())
                .sliceId();
        long previous = -1;
        for (long entry = 0; ; entry++) {
            Optional<Long> sequence = sequenceIfPresent(slice, entry);
            if (sequence.isEmpty()) {
                assertThat(entry).as("batches in the slice").isGreaterThan(10);
                break;
            }
            assertThat(sequence.get()).as("entry %d of the slice", entry).isEqualTo(previous + 1);
            previous = sequence.get();
        }
    }

    @Test
    void close_openAppendsFailClosed_writtenOnesCommit_ownerThreadEnds() throws Exception {
        String writerId = "threading-close";
        WalWriter writer = new WalWriter(bk, metadata.streams(), metadata.slices(),
                WAL.withFlush(1024, Duration.ofSeconds(20)).withFlushWhenIdle(false), writerId, scheduler, Clock.systemUTC(),
                WalObserver.NONE);
        StreamId id = await(metadata.catalog().openStream("closing")).streamId();
        long epoch = await(metadata.streams().acquireWriter(id, writerId)).writerEpoch();
        // the slice exists before the close: the next batch is written at once, not after a slice creation
        assertThat(await(writer.append(id, epoch, 0, List.of(new AppendEntry(new byte[2048], 1)), () -> true))
                .committedEnd()).isEqualTo(1);
        CompletableFuture<StreamHead> sealed = writer.append(id, epoch, 1, List.of(new AppendEntry(new byte[2048], 1)),
                () -> true);
        CompletableFuture<StreamHead> open = writer.append(id, epoch, 2, List.of(new AppendEntry(new byte[10], 1)),
                () -> true);
        Thread owner = ownerThread(writerId);
        writer.close();

        assertThat(await(sealed).committedEnd()).isEqualTo(2);
        assertFailsClosed(open);
        assertFailsClosed(writer.append(id, epoch, 2, List.of(new AppendEntry(new byte[10], 1)), () -> true));
        owner.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(owner.isAlive()).as("owner thread of a closed, finished writer").isFalse();
        assertThat(await(writer.barrier())).isNull();
    }

    /**
     * The writer closes while its first slice is still being created, with one batch sealed and waiting for it:
     * the batch is written to that slice and committed, and the writer then ends (it used to close the new
     * slice at once and create another, without end).
     */
    @Test
    void close_whileTheSliceIsBeingCreated_sealedBatchCommits_ownerThreadEnds() throws Exception {
        String writerId = "threading-close-early";
        WalWriter writer = new WalWriter(bk, metadata.streams(), metadata.slices(),
                WAL.withFlush(1024, Duration.ofSeconds(20)).withFlushWhenIdle(false), writerId, scheduler, Clock.systemUTC(),
                WalObserver.NONE);
        StreamId id = await(metadata.catalog().openStream("closing-early")).streamId();
        long epoch = await(metadata.streams().acquireWriter(id, writerId)).writerEpoch();
        CompletableFuture<StreamHead> sealed = writer.append(id, epoch, 0, List.of(new AppendEntry(new byte[2048], 1)),
                () -> true);
        CompletableFuture<StreamHead> open = writer.append(id, epoch, 1, List.of(new AppendEntry(new byte[10], 1)),
                () -> true);
        Thread owner = ownerThread(writerId);
        writer.close();

        assertThat(await(sealed).committedEnd()).isEqualTo(1);
        assertFailsClosed(open);
        owner.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(owner.isAlive()).as("owner thread of a closed, finished writer").isFalse();
        List<IndexRecord> records = await(metadata.index().indexRecords(id, ReadView.COMMITTED));
        assertThat(records).hasSize(1);
        long slice = ((WalTarget) records.get(0).target()).sliceId();
        FetchedBatch fetched = await(reader.readUncached(slice, 0));
        assertThat(fetched.batch().sections().get(0).entries().get(0).size()).isEqualTo(2048);
        fetched.release();
    }

    private static void assertFailsClosed(CompletableFuture<StreamHead> append) {
        Throwable error = await(append.handle((head, e) -> e));
        assertThat(error).isInstanceOfSatisfying(NereusException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.CLOSED));
    }

    /** The sequence of the batch at {@code entry} of {@code slice}; empty when the slice has no such entry. */
    private Optional<Long> sequenceIfPresent(long slice, long entry) {
        try {
            FetchedBatch fetched = await(reader.readUncached(slice, entry));
            try {
                return Optional.of(fetched.batch().sequence());
            } finally {
                fetched.release();
            }
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Thread ownerThread(String writerId) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("nereus-wal-writer-" + writerId))
                .findFirst().orElseThrow();
    }

    private static byte[] payload(int stream, int offset) {
        return ("s" + stream + "-" + offset + "-" + "x".repeat(200)).getBytes(StandardCharsets.UTF_8);
    }
}
