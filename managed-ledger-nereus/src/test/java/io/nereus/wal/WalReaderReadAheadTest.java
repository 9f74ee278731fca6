package io.nereus.wal;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.encoded;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.StreamId;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.TestLedgers;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A reader going through a slice batch after batch fetches the following batches with it, in one request. */
class WalReaderReadAheadTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final byte[] PASSWORD = new byte[0];

    private static long sliceOf(BookKeeper bk, int batches) throws Exception {
        WriteHandle lh = TestLedgers.create(bk, PASSWORD);
        for (int i = 0; i < batches; i++) {
            WalSection s = WalSection.of(StreamId.of(5), i, List.of(
                    new AppendEntry(("batch-" + i).getBytes(StandardCharsets.UTF_8), 1)));
            lh.append(encoded(new WalBatch(lh.getId(), i, List.of(s))));
        }
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
    void sequentialReads_fetchAnEighthOfTheCacheAtATime_neverPastTheSlicesEnd() throws Exception {
        BookKeeper bk = BK.newClient();
        long slice = sliceOf(bk, 20);
        try (WalReader reader = new WalReader(bk, PASSWORD, 64)) { // read-ahead 8
            for (int e = 0; e < 20; e++) {
                assertThat(payload(await(reader.read(slice, e)))).isEqualTo("batch-" + e);
            }
            // entry 0 alone (nothing before it was read), then 1..8, 9..16 and 17..19 (the slice ends at 19)
            assertThat(reader.requests()).isEqualTo(4);
        }
    }

    @Test
    void readsThatDoNotFollowOn_fetchOneBatchEach() throws Exception {
        BookKeeper bk = BK.newClient();
        long slice = sliceOf(bk, 20);
        try (WalReader reader = new WalReader(bk, PASSWORD, 64)) {
            for (int e : new int[] {15, 3, 9, 0}) {
                assertThat(payload(await(reader.read(slice, e)))).isEqualTo("batch-" + e);
            }
            assertThat(reader.requests()).isEqualTo(4);
            // following on from 3 reads ahead from 4 up to the next batch already cached (9)
            assertThat(payload(await(reader.read(slice, 4)))).isEqualTo("batch-4");
            assertThat(reader.requests()).isEqualTo(5);
            for (int e = 5; e < 9; e++) {
                assertThat(payload(await(reader.read(slice, e)))).isEqualTo("batch-" + e);
            }
            assertThat(reader.requests()).as("5..8 came with 4").isEqualTo(5);
        }
    }

    @Test
    void aSmallCache_readsOneBatchAtATime() throws Exception {
        BookKeeper bk = BK.newClient();
        long slice = sliceOf(bk, 6);
        try (WalReader reader = new WalReader(bk, PASSWORD, 4)) { // read-ahead 1: off
            for (int e = 0; e < 6; e++) {
                assertThat(payload(await(reader.read(slice, e)))).isEqualTo("batch-" + e);
            }
            assertThat(reader.requests()).isEqualTo(6);
        }
    }

    @Test
    void batchesHandedOut_stayValidAfterEviction_andEveryReferenceIsReleasedByTheirHoldersAndTheCache()
            throws Exception {
        BookKeeper bk = BK.newClient();
        long slice = sliceOf(bk, 12);
        List<FetchedBatch> held = new ArrayList<>();
        WalReader reader = new WalReader(bk, PASSWORD, 4); // a cache of 4 batches: most are evicted while held
        for (int e = 0; e < 12; e++) {
            FetchedBatch b = await(reader.read(slice, e));
            held.add(b);
            FetchedBatch again = await(reader.read(slice, e)); // a cache hit: the same batch, one more reference
            assertThat(again).isSameAs(b);
            again.release();
        }
        assertThat(reader.cachedBatches()).isEqualTo(4);
        assertThat(held.subList(0, 8)).allSatisfy(b -> assertThat(b.refCnt()).as("evicted: the holder's").isOne());
        assertThat(held.subList(8, 12)).allSatisfy(b -> assertThat(b.refCnt()).as("cached and held").isEqualTo(2));
        for (int e = 0; e < 12; e++) {
            StreamEntryText.assertPayload(held.get(e), "batch-" + e); // evicted batches are still intact
        }
        held.forEach(FetchedBatch::release);
        assertThat(held.subList(0, 8)).allSatisfy(b -> assertThat(b.refCnt()).isZero());
        reader.close(); // releases what the cache held
        assertThat(reader.cachedBatches()).isZero();
        assertThat(held).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    /** Reads a payload without releasing anything. */
    private static final class StreamEntryText {
        static void assertPayload(FetchedBatch b, String expected) {
            assertThat(b.batch().sections().get(0).entries().get(0).payload().toString(StandardCharsets.UTF_8))
                    .isEqualTo(expected);
        }
    }
}
