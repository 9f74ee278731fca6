package io.nereus.wal;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.NereusKeyspace;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSectionRef;
import io.nereus.testing.BookKeeperCluster;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.apache.bookkeeper.client.BookKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Group commit with batches overlapping while they wait for BookKeeper ({@link WalConfig#flushBelowBatches}), on a
 * bookie whose journal holds every write for {@value #JOURNAL_MILLIS} ms, so the adds in flight are known: appends
 * {@value #SPACING_MILLIS} ms apart to an otherwise idle WAL.
 */
class WalBatchOverlapTest {
    static final long JOURNAL_MILLIS = 1000;
    static final long SPACING_MILLIS = 100;

    @RegisterExtension
    static final BookKeeperCluster BK = BookKeeperCluster.withJournalGrouping(JOURNAL_MILLIS);

    /** Batches cut only by the group commit here: 1 MiB and a minute are never reached. */
    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(1 << 20, Duration.ofMinutes(1));

    private EmbeddedFdb fdb;
    private MetadataStore metadata;
    private BookKeeper bk;
    private ScheduledExecutorService scheduler;

    @BeforeEach
    void setUp() {
        fdb = EmbeddedFdb.inMemory();
        metadata = await(MetadataStore.open(fdb, new NereusKeyspace(new Subspace(Tuple.from("nereus", "overlap"))),
                fdb.getExecutor()));
        bk = BK.newClient();
        scheduler = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterEach
    void tearDown() {
        scheduler.shutdownNow();
        fdb.close();
    }

    /**
     * The entry ids of the batches holding the appends to five streams: the first to an idle WAL, the next three
     * {@value #SPACING_MILLIS} ms apart while the journal holds the earlier ones, the fifth right after the fourth.
     */
    private List<Long> fiveAppends(int flushBelowBatches) throws InterruptedException {
        String writerId = "broker-" + flushBelowBatches;
        WalWriter writer = new WalWriter(bk, metadata.streams(), metadata.slices(),
                WAL.withFlushBelowBatches(flushBelowBatches), writerId, scheduler, Clock.systemUTC(),
                WalObserver.NONE);
        try {
            List<StreamId> ids = new ArrayList<>();
            List<Long> epochs = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                StreamId id = await(metadata.catalog().openStream(writerId + "-s" + i)).streamId();
                ids.add(id);
                epochs.add(await(metadata.streams().acquireWriter(id, writerId)).writerEpoch());
            }
            // the slice is created and registered with the first append: done before the appends that count
            StreamId warm = await(metadata.catalog().openStream(writerId + "-warm")).streamId();
            await(writer.append(warm, await(metadata.streams().acquireWriter(warm, writerId)).writerEpoch(), 0,
                    List.of(payload("warm")), () -> true));
            List<CompletableFuture<StreamHead>> appends = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                if (i > 0 && i < 4) {
                    Thread.sleep(SPACING_MILLIS);
                }
                appends.add(writer.append(ids.get(i), epochs.get(i), 0, List.of(payload("e" + i)), () -> true));
            }
            appends.forEach(f -> assertThat(await(f).committedEnd()).isEqualTo(1));
            List<Long> entries = new ArrayList<>();
            for (StreamId id : ids) {
                List<WalSectionRef> sections = await(metadata.index().indexRecords(id, ReadView.COMMITTED)).stream()
                        .flatMap(r -> r.walSections().stream()).toList();
                assertThat(sections).hasSize(1);
                entries.add(sections.get(0).entryId());
            }
            return entries;
        } finally {
            writer.close();
        }
    }

    private static AppendEntry payload(String text) {
        return AppendEntry.of(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void threeBatches_eachOfTheFirstThreeWrittenAtOnce_theRestCollectUntilTheCountDrops() throws Exception {
        List<Long> entries = fiveAppends(3);
        long first = entries.get(0);
        // appends 1-3 each found fewer than three batches unfinished and no commit running: three BookKeeper entries
        // in flight together; 4 and 5 waited for them and share one
        assertThat(entries).containsExactly(first, first + 1, first + 2, first + 3, first + 3);
    }

    @Test
    void oneBatch_everyAppendThatFindsTheWalBusyWaitsForItToDrain() throws Exception {
        List<Long> entries = fiveAppends(1);
        long first = entries.get(0);
        assertThat(entries).containsExactly(first, first + 1, first + 1, first + 1, first + 1);
    }
}
