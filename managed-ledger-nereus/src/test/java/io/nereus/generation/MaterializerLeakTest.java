package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.LeakDetection;
import io.nereus.wal.WalConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The materializer copies each entry once, from BookKeeper's pooled buffers into the pooled direct blocks of the
 * object it writes (or into its spill file); every one of those buffers is released on every path, checked with
 * Netty's leak detector at PARANOID ({@link LeakDetection}) and the BookKeeper client reading into pooled buffers
 * (the v2 protocol, as in a broker): a stream held in memory over several objects, a hundred streams spilled,
 * publications that fail after the object is written, and merges.
 */
@Timeout(180)
class MaterializerLeakTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    @RegisterExtension
    static final LeakDetection LEAKS = new LeakDetection();

    /** 16 KiB objects of 2 KiB blocks, merged four at a time; background passes off (the test runs them). */
    private static final StorageConfig CONFIG = StorageConfig.defaults()
            .withWal(WalConfig.defaults().withQuorums(1, 1, 1).withFlush(64 * 1024, Duration.ofMillis(1)))
            .withMaterializer(MaterializerConfig.defaults().withEnabled(false).withObjects(16 * 1024, 2048)
                    .withMergeMinObjects(4));

    private static String payload(String stream, int i) {
        return stream + "-" + i + "-" + "x".repeat(60 + i % 90);
    }

    /** Appends payloads {@code from}..{@code to - 1} to {@code s} as pooled direct buffers; returns them. */
    private static List<String> append(NereusStream s, String name, int from, int to) {
        List<String> out = new ArrayList<>();
        List<CompletableFuture<OffsetRange>> acks = new ArrayList<>();
        for (int i = from; i < to; i++) {
            String p = payload(name, i);
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
            b.writeCharSequence(p, StandardCharsets.UTF_8);
            acks.add(s.append(List.of(new AppendEntry(b, 1))));
            b.release(); // lent: the stream took its own reference
            out.add(p);
        }
        acks.forEach(f -> await(f));
        return out;
    }

    private static List<String> texts(List<StreamEntry> entries) {
        return entries.stream().map(e -> new String(e.bytes(), StandardCharsets.UTF_8)).toList();
    }

    @Test
    void everyPath_releasesTheFetchedBatchesAndTheObjectsBlocks() {
        EngineFixture engine = new EngineFixture(BK::newV2Client, "materializer-leaks");
        try {
            StreamStorage storage = engine.storage("broker-a", CONFIG);
            List<NereusStream> streams = new ArrayList<>();
            List<List<String>> expected = new ArrayList<>();
            for (int i = 0; i < 101; i++) {
                NereusStream s = await(storage.openStream("leak-" + i));
                await(s.acquireWriter());
                streams.add(s);
                expected.add(new ArrayList<>());
            }
            // stream 0 large (several objects, held in memory), the hundred others small (spilled)
            expected.get(0).addAll(append(streams.get(0), "leak-0", 0, 600));
            for (int i = 1; i < streams.size(); i++) {
                expected.get(i).addAll(append(streams.get(i), "leak-" + i, 0, 12));
            }
            await(storage.rollWalSlice());

            // the first pass: every publication fails after its object is written and verified
            AtomicInteger failed = new AtomicInteger();
            storage.materializer().beforePublish(request -> {
                failed.incrementAndGet();
                return CompletableFuture.failedFuture(new IllegalStateException("publication failed on purpose"));
            });
            storage.materializeSealedSlices().handle((ignored, error) -> null).join();
            assertThat(failed.get()).isPositive();
            storage.materializer().beforePublish(request -> CompletableFuture.completedFuture(null));
            await(storage.materializeSealedSlices());
            assertThat(storage.materializerStats().bytesSpilled()).as("the small streams spilled").isPositive();

            // merges: small objects of one stream over several slices
            NereusStream slow = streams.get(1);
            for (int slice = 0; slice < 5; slice++) {
                expected.get(1).addAll(append(slow, "leak-1", 12 + slice * 3, 15 + slice * 3));
                await(storage.rollWalSlice());
                await(storage.materializeSealedSlices());
            }
            assertThat(storage.materializerStats().mergesPublished()).isPositive();

            storage.clearTailCache();
            for (int i = 0; i < streams.size(); i++) {
                assertThat(await(engine.metadata.index().indexRecords(streams.get(i).id(), ReadView.COMMITTED)))
                        .allSatisfy(r -> assertThat(r.target()).isInstanceOf(ObjectTarget.class));
                List<StreamEntry> read = readAll(streams.get(i), 0, 10_000);
                assertThat(texts(read)).containsExactlyElementsOf(expected.get(i));
            }
        } finally {
            engine.close();
        }
        assertThat(LEAKS.leaks()).as("leaks reported by Netty's detector").isEmpty();
    }
}
