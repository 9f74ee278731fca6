package io.nereus.pulsar.ledger;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.apache.bookkeeper.mledger.Position;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.metadata.api.MetadataStoreConfig;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention on a Nereus managed ledger follows Pulsar's rule (each limit on its own, -1 never asks for a trim) at
 * segment granularity, over a real in-process bookie and EmbeddedFdb, with a fixed clock and the publish times the
 * entries carry.
 */
class LedgerRetentionTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final StorageConfig CONFIG = StorageConfig.defaults().withWal(WalConfig.defaults()
            .withQuorums(1, 1, 1).withFlush(64 * 1024, Duration.ofMillis(1)));
    private static final long NOW = Instant.parse("2026-01-01T12:00:00Z").toEpochMilli();
    private static final long MINUTE = 60_000;
    private static final int KIB = 1024;

    private EngineFixture engine;
    private MetadataStoreExtended pulsarMetadata;
    private NereusManagedLedgerFactory factory;
    private final List<AutoCloseable> closers = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        engine = new EngineFixture(BK, "retention");
        pulsarMetadata = MetadataStoreExtended.create("memory:local", MetadataStoreConfig.builder().build());
        StreamStorage streams = engine.storage("b1", CONFIG);
        OrderedExecutor executor = OrderedExecutor.newBuilder().name("test-retention").numThreads(2).build();
        factory = new NereusManagedLedgerFactory(engine.metadata, streams, new TopicNodes(pulsarMetadata), executor,
                Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC), 1);
        closers.add(executor::shutdownNow);
        closers.add(() -> factory.shutdownAsync().get());
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closers.size() - 1; i >= 0; i--) {
            closers.get(i).close();
        }
        engine.close();
        pulsarMetadata.close();
    }

    /** A Pulsar entry: message metadata with {@code publishTime}, then {@code payloadBytes} of payload. */
    private static byte[] message(long publishTime, int payloadBytes) {
        MessageMetadata md = new MessageMetadata().setProducerName("p").setSequenceId(0).setPublishTime(publishTime);
        ByteBuf b = Commands.serializeMetadataAndPayload(Commands.ChecksumType.None, md,
                Unpooled.wrappedBuffer(new byte[payloadBytes]));
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    private static ManagedLedgerConfig segmentsOf2(long retentionMinutes, long retentionMb) {
        return new ManagedLedgerConfig().setMaxEntriesPerLedger(2).setRetentionTime((int) retentionMinutes,
                TimeUnit.MINUTES).setRetentionSizeInMB(retentionMb);
    }

    /** Appends the entries, marks all but the last {@code unconsumed} deleted on one cursor, then trims. */
    private static ManagedLedger consumeAndTrim(ManagedLedger ml, List<byte[]> entries, int unconsumed)
            throws Exception {
        ManagedCursor cursor = ml.openCursor("c", InitialPosition.Earliest);
        List<Position> p = new ArrayList<>();
        for (byte[] e : entries) {
            p.add(ml.addEntry(e));
        }
        cursor.markDelete(p.get(entries.size() - 1 - unconsumed));
        CompletableFuture<Void> trimmed = new CompletableFuture<>();
        ml.trimConsumedLedgersInBackground(trimmed);
        await(trimmed);
        return ml;
    }

    private static List<byte[]> published(long... minutesAgo) {
        List<byte[]> out = new ArrayList<>();
        for (long m : minutesAgo) {
            out.add(message(NOW - m * MINUTE, 10));
        }
        return out;
    }

    private static List<byte[]> sized(int count, int bytes) {
        List<byte[]> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(new byte[bytes]);
        }
        return out;
    }

    @Test
    void timeOnly_trimsTheConsumedSegmentsWhoseNewestEntryIsOlderThanTheRetentionTime() throws Exception {
        ManagedLedger ml = factory.open("by-time", segmentsOf2(10, -1));

        // offsets 0-2 published 30 minutes ago, 3-6 one minute ago; 0-5 consumed
        consumeAndTrim(ml, published(30, 30, 30, 1, 1, 1, 1), 1);

        assertThat(ml.getFirstPosition().getEntryId()).as("[0, 2) expired; [2, 4) holds a young entry")
                .isEqualTo(1);
        assertThat(ml.getNumberOfEntries()).isEqualTo(5);
    }

    @Test
    void timeOnly_overManySegments_findsTheNewestExpiredSegment() throws Exception {
        ManagedLedger ml = factory.open("by-time-many", segmentsOf2(10, -1));
        long[] minutesAgo = new long[21];
        for (int i = 0; i < minutesAgo.length; i++) {
            minutesAgo[i] = i <= 12 ? 40 - i : 1; // 0-12 older than 10 minutes, 13-20 younger
        }

        consumeAndTrim(ml, published(minutesAgo), 0);

        assertThat(ml.getNumberOfEntries()).as("[12, 14) holds the young 13 and stays").isEqualTo(9);
    }

    @Test
    void sizeOnly_trimsConsumedSegmentsWhileTheRestHoldsTheRetentionSize() throws Exception {
        ManagedLedger ml = factory.open("by-size", segmentsOf2(-1, 1));

        // 8 entries of 256 KiB, 7 consumed: dropping [0, 4) leaves 1 MiB, dropping [4, 6) too would leave less
        consumeAndTrim(ml, sized(8, 256 * KIB), 1);

        assertThat(ml.getNumberOfEntries()).isEqualTo(4);
        assertThat(ml.getTotalSize()).isEqualTo(1024 * KIB);
    }

    @Test
    void timeAndSize_eitherLetsASegmentGo_andOnlyWholeSegmentsGo() throws Exception {
        // nothing is older than 60 minutes, but 8 entries of 400 KiB are over the 1 MiB quota: [0, 4) goes, as
        // dropping [4, 6) would leave 800 KiB (and 3 entries, 1200 KiB, are no segment boundary)
        ManagedLedger bySize = factory.open("young-but-large", segmentsOf2(60, 1));
        List<byte[]> young = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            young.add(message(NOW, 400 * KIB));
        }
        consumeAndTrim(bySize, young, 1);
        assertThat(bySize.getNumberOfEntries()).isEqualTo(4);

        // 100 MB is far from reached, but the first three are older than 10 minutes: [0, 2) goes, [2, 4) stays
        ManagedLedger byTime = factory.open("small-but-old", segmentsOf2(10, 100));
        consumeAndTrim(byTime, published(30, 30, 30, 1, 1, 1, 1), 1);
        assertThat(byTime.getNumberOfEntries()).isEqualTo(5);
    }

    @Test
    void bothNegative_keepEverything_andAZeroLimitLetsEverythingConsumedGo() throws Exception {
        ManagedLedger kept = consumeAndTrim(factory.open("kept", segmentsOf2(-1, -1)), published(30, 30, 30, 30, 1), 0);
        assertThat(kept.getNumberOfEntries()).isEqualTo(5);

        ManagedLedger sizeZero = consumeAndTrim(factory.open("size-zero", segmentsOf2(-1, 0)), sized(5, 10), 0);
        assertThat(sizeZero.getNumberOfEntries()).as("the last segment, with the last entry, stays").isEqualTo(1);
    }

    @Test
    void truncate_letsEverythingConsumedGoWhateverTheRetention() throws Exception {
        ManagedLedger ml = factory.open("truncated", segmentsOf2(-1, -1));
        ManagedCursor cursor = ml.openCursor("c", InitialPosition.Earliest);
        for (byte[] e : sized(5, 10)) {
            ml.addEntry(e);
        }

        await(ml.asyncTruncate());

        assertThat(cursor.getNumberOfEntriesInBacklog(false)).isZero();
        assertThat(ml.getNumberOfEntries()).as("all but the segment of the last entry").isEqualTo(1);
    }

    @Test
    void sizeBound_isTheHighestBoundaryWhoseRestHoldsTheQuota() {
        // 10 stored entries of 1 byte each from offset 3 (the trim point, not a boundary) to 13, segments of 4
        LongUnaryOperator bytesFrom = o -> Math.max(0, 13 - Math.max(o, 3));
        assertThat(LedgerTrimmer.sizeBound(3, 12, 4, 5, bytesFrom)).as("from 8 five bytes remain").isEqualTo(8);
        assertThat(LedgerTrimmer.sizeBound(3, 12, 4, 0, bytesFrom)).isEqualTo(12);
        assertThat(LedgerTrimmer.sizeBound(3, 12, 4, 10, bytesFrom)).as("no boundary keeps 10").isEqualTo(3);
        assertThat(LedgerTrimmer.sizeBound(3, 12, 4, 9, bytesFrom)).isEqualTo(4);
    }
}
