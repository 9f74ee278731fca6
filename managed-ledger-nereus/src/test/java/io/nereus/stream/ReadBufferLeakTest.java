package io.nereus.stream;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.generation.CompactionPolicy;
import io.nereus.generation.CompactionResult;
import io.nereus.generation.KeyTable;
import io.nereus.generation.MaterializerConfig;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.LeakDetection;
import io.nereus.wal.WalConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every read path hands out retained slices and releases what it does not hand out, checked with Netty's leak
 * detector at PARANOID ({@link LeakDetection}): payloads are pooled direct buffers, the BookKeeper client speaks the
 * v2 protocol (entries read into pooled buffers, as in a broker), and every path is taken: tail-cache hits, WAL
 * reads (whole, partial, skipping entries before the offset, beyond the byte limit, failing, cancelled), object
 * reads (the block cache's {@link io.nereus.object.BlockCache#liveBytes} must fall to 0; the filesystem store reads
 * blocks into pooled direct buffers, which the detector tracks too), compaction and close. A test leaks on purpose
 * to show that the detector catches a leak of this code.
 */
class ReadBufferLeakTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    @RegisterExtension
    static final LeakDetection LEAKS = new LeakDetection();

    private static final StorageConfig CONFIG = StorageConfig.defaults()
            .withWal(WalConfig.defaults().withQuorums(1, 1, 1).withFlush(4 * 1024, Duration.ofMillis(1)))
            .withMaterializer(MaterializerConfig.defaults().withEnabled(false).withObjects(16 * 1024, 1024));

    private EngineFixture engine;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK::newV2Client, "leaks");
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private static ByteBuf pooled(String text, int size) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size);
        byte[] t = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        for (int i = 0; i < size; i++) {
            b.writeByte(t[i % t.length]);
        }
        return b;
    }

    /** Appends {@code n} entries of {@code records} offsets each, as pooled direct buffers, releasing the test's own. */
    private static void append(NereusStream s, int n, int records) {
        List<CompletableFuture<OffsetRange>> acks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ByteBuf p = pooled("k" + (i % 7) + "=v" + i + ";", 100 + 37 * (i % 13));
            acks.add(s.append(List.of(new AppendEntry(p, records))));
            p.release(); // the payload is lent: the stream took its own reference
        }
        acks.forEach(f -> await(f));
    }

    /** Reads [{@code from}, end) {@code perRead} entries at a time, checks the bytes are readable and releases all. */
    private static long readThrough(NereusStream s, long from, int perRead, long maxBytes) {
        long at = from;
        long entries = 0;
        while (true) {
            ReadResult r = await(s.read(ReadView.COMMITTED, at, perRead, maxBytes, BoundaryMode.CONTAINING_ENTRY));
            if (r.entries().isEmpty()) {
                return entries;
            }
            for (StreamEntry e : r.entries()) {
                assertThat(e.bytes()).hasSize(e.size());
            }
            entries += r.entries().size();
            at = r.nextOffset();
            r.release();
        }
    }

    @Test
    void everyReadPath_releasesWhatItDoesNotHandOut_andNothingLeaks() {
        StreamStorage writer = engine.storage("writer", CONFIG.withTailCacheBytes(64 * 1024));
        NereusStream w = await(writer.openStream("topic"));
        await(w.acquireWriter());
        append(w, 200, 1);
        NereusStream multi = await(writer.openStream("multi"));
        await(multi.acquireWriter());
        append(multi, 60, 3); // entries of 3 offsets: reads from inside an entry

        // the writer's reads: tail-cache hits (the newest entries) and WAL reads (what the cache evicted)
        assertThat(readThrough(w, 0, 7, 1 << 20)).isEqualTo(200);
        assertThat(readThrough(w, 0, 50, 500)).isEqualTo(200); // byte-limited: entries beyond the limit released
        assertThat(writer.tailCacheStats().hits()).isPositive();

        // another instance: no tail cache of its own, every read from the WAL (batches shared, read ahead)
        StreamStorage reader = engine.storage("reader", CONFIG);
        NereusStream r = await(reader.openStream("topic"));
        assertThat(readThrough(r, 0, 3, 1 << 20)).isEqualTo(200);
        assertThat(readThrough(r, 150, 1, 1 << 20)).isEqualTo(50); // the section's entries before 150 are skipped
        NereusStream rm = await(reader.openStream("multi"));
        assertThat(readThrough(rm, 4, 5, 1 << 20)).isEqualTo(59); // CONTAINING_ENTRY from inside an entry
        assertThatThrownBy(() -> await(rm.read(ReadView.COMMITTED, 4, 5, 1 << 20, BoundaryMode.EXACT_START)))
                .isInstanceOfSatisfying(NereusException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_ENTRY_BOUNDARY));
        assertThat(reader.walBytesRead()).isPositive();

        // cancelled reads, in flight or not: the entries are released when the read completes
        StreamStorage other = engine.storage("other", CONFIG);
        NereusStream o = await(other.openStream("topic"));
        CompletableFuture<ReadResult> cancelled = o.read(ReadView.COMMITTED, 100, 20, 1 << 20,
                BoundaryMode.EXACT_START);
        if (!cancelled.cancel(false)) {
            await(cancelled).release();
        }
        // the same batch read again: completed after the cancelled one (one fetch, readers served in order)
        await(o.read(ReadView.COMMITTED, 100, 20, 1 << 20, BoundaryMode.EXACT_START)).release();

        // objects: the writer offloads both streams; a fresh instance reads them from the objects' blocks
        await(writer.offload(w.id(), Long.MAX_VALUE));
        await(writer.offload(multi.id(), Long.MAX_VALUE));
        StreamStorage cold = engine.storage("cold", CONFIG);
        NereusStream c = await(cold.openStream("topic"));
        assertThat(readThrough(c, 0, 9, 1 << 20)).isEqualTo(200);
        assertThat(readThrough(c, 120, 2, 300)).isEqualTo(80);
        assertThat(readThrough(await(cold.openStream("multi")), 7, 4, 1 << 20)).isEqualTo(58);
        assertThat(cold.objectBytesRead()).isPositive();
        // once the blocks fetched ahead of these reads have landed in the cache
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                cold.objectBlocks().liveBytes()).as("only what the block cache holds")
                .isEqualTo(cold.objectBlocks().bytes()));

        // compaction reads the stream and its previous generation, and the compacted view is read back
        CompactionResult compacted = await(writer.compact(w, new KeepLatestPolicy()));
        assertThat(compacted).isInstanceOf(CompactionResult.Published.class);
        IndexRecord view = ((CompactionResult.Published) compacted).record();
        List<StreamEntry> kept = await(writer.compactor().read(view, 0, Integer.MAX_VALUE, Long.MAX_VALUE));
        assertThat(kept).hasSize(7);
        StreamEntry.releaseAll(kept);
        await(writer.compactor().last(view)).ifPresent(StreamEntry::release);
        append(w, 10, 1);
        assertThat(await(writer.compact(w, new KeepLatestPolicy()))).isInstanceOf(CompactionResult.Published.class);

        engine.close(); // releases the tail caches, the WAL readers' batches and the block caches
        engine = new EngineFixture(BK::newV2Client, "leaks-after");
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(cold.objectBlocks().liveBytes()).as("block bytes still referenced after close").isZero();
            assertThat(writer.objectBlocks().liveBytes()).isZero();
        });
        assertThat(LEAKS.leaks()).as("leaks reported by Netty's detector").isEmpty();
    }

    @Test
    void anEntryDroppedWithoutItsRelease_isReportedAsALeak() {
        StreamStorage writer = engine.storage("writer", CONFIG.withTailCacheBytes(0));
        NereusStream w = await(writer.openStream("dropped"));
        await(w.acquireWriter());
        append(w, 3, 1);
        ReadResult r = await(w.read(ReadView.COMMITTED, 0, 3, 1 << 20, BoundaryMode.EXACT_START));
        assertThat(r.entries()).hasSize(3);
        r.entries().get(0).release();
        r.entries().get(2).release();
        r = null; // entry 1 is dropped without its release: a leak of a slice the WAL reader made
        engine.close();
        engine = new EngineFixture(BK::newV2Client, "leaks-after");
        List<String> leaks = LEAKS.leaks();
        assertThat(leaks).isNotEmpty();
        assertThat(leaks).anySatisfy(records -> assertThat(records).contains("io.nereus.generation.WalTargetReader"));
        LEAKS.clear();
    }

    /** Keeps the latest entry of each key ("kN=..." payloads). */
    private static final class KeepLatestPolicy implements CompactionPolicy {
        private static String key(StreamEntry e) {
            String text = e.payload().toString(java.nio.charset.StandardCharsets.UTF_8);
            return text.substring(0, text.indexOf('='));
        }

        @Override
        public void scan(StreamEntry entry, KeyTable keys) {
            keys.put(key(entry), entry.range().start(), 0);
        }

        @Override
        public Optional<byte[]> retain(StreamEntry entry, KeyTable keys) {
            return keys.isLatest(key(entry), entry.range().start(), 0) ? Optional.of(entry.bytes()) : Optional.empty();
        }
    }
}
