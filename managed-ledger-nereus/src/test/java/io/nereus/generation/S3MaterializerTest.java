package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.WalSliceState;
import io.nereus.object.ObjectStoreConfig;
import io.nereus.object.S3ObjectStore;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.S3ProxyServer;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The materializer writing to S3 (S3Proxy started by the tests): objects of several streams, one of them larger
 * than a part (a multipart upload), read back from S3 by a cold instance with the WAL deleted.
 */
@ExtendWith(S3ProxyServer.class)
@Timeout(180)
class S3MaterializerTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final long PART_BYTES = ObjectStoreConfig.S3.MIN_PART_BYTES;
    private static final StorageConfig CONFIG = StorageConfig.defaults()
            .withWal(WalConfig.defaults().withQuorums(1, 1, 1).withFlush(256 * 1024, Duration.ofMillis(1)))
            .withMaterializer(MaterializerConfig.defaults().withEnabled(false).withObjects(8L << 20, 64 * 1024));

    private static byte[] payload(int stream, int i, int size) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) ('a' + (stream + i) % 26));
        b[0] = (byte) stream;
        b[1] = (byte) i;
        b[2] = (byte) (i >> 8);
        return b;
    }

    @Test
    void streamsMaterializedToS3_oneAsAMultipartObject_readBackColdWithTheWalDeleted(S3ProxyServer s3)
            throws Exception {
        S3ObjectStore store = await(S3ObjectStore.open(s3.config("materializer", PART_BYTES)));
        try (EngineFixture engine = new EngineFixture(BK, "s3-materializer", store)) {
            StreamStorage storage = engine.storage("broker-a", CONFIG);
            int streams = 4;
            int[] sizes = {16 * 1024, 700, 3000, 100};
            int[] counts = {400, 50, 50, 50}; // stream 0: 6.4 MB, above one 5 MiB part
            List<NereusStream> handles = new ArrayList<>();
            List<CompletableFuture<?>> acks = new ArrayList<>();
            for (int s = 0; s < streams; s++) {
                NereusStream h = await(storage.openStream("s3-topic-" + s));
                await(h.acquireWriter());
                handles.add(h);
            }
            for (int i = 0; i < 400; i++) {
                for (int s = 0; s < streams; s++) {
                    if (i < counts[s]) {
                        acks.add(handles.get(s).append(List.of(AppendEntry.of(payload(s, i, sizes[s])))));
                    }
                }
            }
            acks.forEach(a -> await(a));
            await(storage.rollWalSlice());
            await(storage.materializeSealedSlices());
            assertThat(storage.materializerStats().objectsPublished()).isEqualTo(streams);

            IndexRecord big = await(engine.metadata.index().indexRecords(handles.get(0).id(), ReadView.COMMITTED))
                    .get(0);
            assertThat(((ObjectTarget) big.target()).objectSize()).isGreaterThan(PART_BYTES);
            for (long id : await(engine.metadata.slices().slices(WalSliceState.SEALED, 0, 100)).keySet()) {
                TestLedgers.delete(engine.bk, id);
            }
            StreamStorage cold = engine.storage("reader", CONFIG);
            for (int s = 0; s < streams; s++) {
                List<StreamEntry> read = readAll(await(cold.openStream("s3-topic-" + s)), 0, 64);
                assertThat(read).hasSize(counts[s]);
                for (int i = 0; i < counts[s]; i++) {
                    assertThat(read.get(i).bytes()).as("stream %d entry %d", s, i).isEqualTo(payload(s, i, sizes[s]));
                }
            }
            assertThat(cold.walBytesRead()).isZero();
            assertThat(cold.objectBytesRead()).isPositive();
        }
    }
}
