package io.nereus.stream;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.OffsetRange;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The payload buffers an appender lends to a stream (pooled direct ones, as the broker's): every reference the
 * stream, the WAL and the tail cache take is released, whether the append commits, is refused, fails fenced or is
 * pending when the storage closes, so the appender's own reference is all that is left.
 */
class AppendOwnershipTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(1, 1, 1)
            .withFlush(64 * 1024, Duration.ofMillis(1));

    private EngineFixture engine;

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "ownership");
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private static ByteBuf pooled(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(b.length + 8);
        buf.writeLong(-1).writeBytes(b);
        buf.readerIndex(8); // only the readable bytes are the payload
        return buf;
    }

    /** The stream "topic" of {@code storage}, its writer acquired. */
    private static NereusStream writer(StreamStorage storage) {
        NereusStream s = await(storage.openStream("topic"));
        await(s.acquireWriter());
        return s;
    }

    private static ErrorCode failure(CompletableFuture<?> f) {
        Throwable t = await(f.handle((r, e) -> e));
        assertThat(t).isNotNull();
        return ((NereusException) Failures.unwrap(t)).code();
    }

    @Test
    void committedAppends_areCachedAsTheBuffersThemselves_andEveryReferenceIsReleasedByClose() {
        StreamStorage storage = engine.storage("broker-a", StorageConfig.defaults().withWal(WAL));
        NereusStream s = writer(storage);
        ByteBuf p0 = pooled("p0");
        ByteBuf p1 = pooled("p1");
        try {
            assertThat(await(s.append(List.of(AppendEntry.of(p0))))).isEqualTo(OffsetRange.single(0));
            assertThat(await(s.append(List.of(AppendEntry.of(p1))))).isEqualTo(OffsetRange.single(1));
            assertThat(p0.refCnt()).as("the tail cache's slice holds the buffer").isGreaterThan(1);
            assertThat(storage.tailCacheStats().bytes()).isEqualTo(4);
            assertThat(readAll(s, 0, 10)).extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8))
                    .containsExactly("p0", "p1");
            assertThat(p0.readerIndex()).as("the appender's indices are its own").isEqualTo(8);
            await(storage.closeAsync());
            assertThat(p0.refCnt()).isEqualTo(1);
            assertThat(p1.refCnt()).isEqualTo(1);
        } finally {
            p0.release();
            p1.release();
        }
    }

    @Test
    void appendsNotToBeCached_releaseTheirReferencesOnCommit_andReadBackFromTheWal() {
        StreamStorage storage = engine.storage("broker-a", StorageConfig.defaults().withWal(WAL));
        NereusStream s = writer(storage);
        ByteBuf p0 = pooled("p0");
        ByteBuf p1 = pooled("p1");
        try {
            assertThat(await(s.append(List.of(AppendEntry.of(p0)), false))).isEqualTo(OffsetRange.single(0));
            assertThat(await(s.append(List.of(AppendEntry.of(p1)), true))).isEqualTo(OffsetRange.single(1));
            // the WAL lets go of a batch's payloads on its own thread once the batch has finished
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(p0.refCnt())
                    .as("committed and not cached: only the appender's reference").isEqualTo(1));
            assertThat(storage.tailCacheStats().bytes()).as("only p1").isEqualTo(2);
            assertThat(readAll(s, 0, 10)).extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8))
                    .containsExactly("p0", "p1");
            await(storage.closeAsync());
            assertThat(p1.refCnt()).isEqualTo(1);
        } finally {
            p0.release();
            p1.release();
        }
    }

    @Test
    void refusedAndFencedAppends_releaseEverything() {
        StreamStorage a = engine.storage("broker-a", StorageConfig.defaults().withWal(WAL));
        StreamStorage b = engine.storage("broker-b", StorageConfig.defaults().withWal(WAL));
        NereusStream sa = await(a.openStream("topic"));
        ByteBuf refused = pooled("no writer");
        ByteBuf kept = pooled("kept");
        ByteBuf fenced = pooled("fenced");
        try {
            assertThat(failure(sa.append(List.of(AppendEntry.of(refused))))).isEqualTo(ErrorCode.NOT_WRITABLE);
            assertThat(refused.refCnt()).isEqualTo(1);

            await(sa.acquireWriter());
            assertThat(await(sa.append(List.of(AppendEntry.of(kept))))).isEqualTo(OffsetRange.single(0));
            NereusStream sb = await(b.openStream("topic"));
            await(sb.acquireWriter());
            assertThat(failure(sa.append(List.of(AppendEntry.of(fenced))))).isEqualTo(ErrorCode.FENCED);
            await(a.closeAsync());
            assertThat(fenced.refCnt()).isEqualTo(1);
            await(b.closeAsync());
            assertThat(kept.refCnt()).isEqualTo(1);
        } finally {
            kept.release();
            refused.release();
            fenced.release();
        }
    }

    @Test
    void appendsPendingInTheOpenBatch_whenTheStorageCloses_failClosed_andReleaseEverything() {
        // the open batch is cut only after 20 s: the appends are still in it when the storage closes
        StreamStorage storage = engine.storage("broker-a", StorageConfig.defaults()
                .withWal(WAL.withFlush(1 << 20, Duration.ofSeconds(20)).withFlushWhenIdle(false)));
        NereusStream s = await(storage.openStream("topic"));
        await(s.acquireWriter());
        ByteBuf p = pooled("pending");
        try {
            CompletableFuture<OffsetRange> pending = s.append(List.of(AppendEntry.of(p), AppendEntry.of(p)));
            assertThat(pending).isNotDone();
            assertThat(p.refCnt()).as("the stream's two slices and the WAL's references").isGreaterThan(1);
            await(storage.closeAsync());
            assertThat(failure(pending)).isEqualTo(ErrorCode.CLOSED);
            assertThat(p.refCnt()).isEqualTo(1);
        } finally {
            p.release();
        }
    }
}
