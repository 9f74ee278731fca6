package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.readDensePayloads;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.IndexRecordState;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalSectionRef;
import io.nereus.metadata.WalTarget;
import io.nereus.object.FilesystemObjectStore;
import io.nereus.object.ObjectStoreConfig;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import io.nereus.stream.ReadResult;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.MultiBookieCluster;
import io.nereus.testing.MutableClock;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.WalConfig;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.net.BookieId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Corrupt stored data under committed offsets, on three real bookies (slices written 3/2/2, DbLedgerStorage) and a
 * filesystem object store: a WAL entry whose bytes on its bookies no longer match BookKeeper's digest, and an object
 * file with a flipped byte. A read either
 * falls back to another representation and returns the committed bytes, or fails loudly with a NereusException
 * naming the stream and the offset; it never returns other bytes.
 */
class CorruptDataFaultsTest {
    @RegisterExtension
    static final MultiBookieCluster BK = new MultiBookieCluster(3);

    private static final WalConfig WAL = WalConfig.defaults().withQuorums(3, 2, 2)
            .withFlush(64 * 1024, Duration.ofMillis(1));
    private static final Duration WAL_GRACE = Duration.ofSeconds(60);
    /** Background passes off (the tests run them). */
    private static final StorageConfig CONFIG = StorageConfig.defaults().withWal(WAL)
            .withMaterializer(MaterializerConfig.defaults().withEnabled(false))
            .withCollector(new CollectorConfig(Duration.ofHours(1), WAL_GRACE, Duration.ofMinutes(10)));

    @TempDir
    Path objectDir;
    private EngineFixture engine;
    private final MutableClock clock = new MutableClock();

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "corrupt-data",
                await(FilesystemObjectStore.open(ObjectStoreConfig.Filesystem.of(objectDir))));
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    /**
     * Three appends, each its own batch (one BookKeeper entry) of a sealed slice written with ensemble 3 and write
     * quorum 2. The middle entry's bytes rot on the first bookie of its write set: a cold read returns every payload
     * (BookKeeper's digest check rejects that copy and reads the other). Then they rot on the second bookie too:
     * reads of offsets 0 and 2 return their payloads; a read of offset 1 fails CHECKSUM_MISMATCH, not retriable,
     * naming the stream and offset 1, and so does a read from offset 0 once it gets there. The materializer
     * publishes no object from the unreadable data, and offset 1 keeps failing the same way.
     */
    @Test
    void walEntryCorruptOnItsBookies_oneCopyReadsFromTheOther_bothFailChecksumMismatchNamingStreamAndOffset()
            throws Exception {
        StreamStorage storage = engine.storage("broker-a", CONFIG, clock);
        NereusStream s = await(storage.openStream("wal-rot"));
        await(s.acquireWriter());
        List<byte[]> payloads = List.of(payload("first", 3000), payload("second", 3000), payload("third", 3000));
        for (byte[] p : payloads) {
            await(s.append(List.of(AppendEntry.of(p))));
        }
        await(storage.rollWalSlice());
        WalSectionRef middle = section(s, 1);
        assertThat(section(s, 0).entryId()).isLessThan(middle.entryId());
        assertThat(section(s, 2).entryId()).isGreaterThan(middle.entryId());
        LedgerMetadata ledger = await(engine.bk.getLedgerMetadata(middle.sliceId()));
        List<BookieId> ensemble = ledger.getEnsembleAt(middle.entryId());
        int e = (int) middle.entryId();
        // round-robin placement: entry e is on bookies e and e + 1 of the ensemble (mod 3)
        BookieId firstCopy = ensemble.get(e % 3);
        BookieId secondCopy = ensemble.get((e + 1) % 3);
        byte[] rot = payload("not-the-batch", 3000);

        TestLedgers.addTornEntry(engine.bk, middle.sliceId(), WAL.password(), middle.entryId(), rot,
                List.of(firstCopy));
        NereusStream c1 = await(engine.storage("reader-1", CONFIG, clock).openStream("wal-rot"));
        assertThat(readDensePayloads(c1)).containsExactlyElementsOf(payloads);

        TestLedgers.addTornEntry(engine.bk, middle.sliceId(), WAL.password(), middle.entryId(), rot,
                List.of(secondCopy));
        NereusStream c2 = await(engine.storage("reader-2", CONFIG, clock).openStream("wal-rot"));
        assertThat(read(c2, 0).entries()).extracting(StreamEntry::bytes).containsExactly(payloads.get(0));
        assertThat(read(c2, 2).entries()).extracting(StreamEntry::bytes).containsExactly(payloads.get(2));
        assertCorrupt(c2, 1, 1);
        assertCorrupt(c2, 0, 1);

        await(storage.materializeSealedSlices().handle((ok, error) -> null));
        assertThat(await(engine.metadata.index().indexRecords(s.id(), ReadView.COMMITTED)))
                .as("nothing but the WAL records: no object published from unreadable data")
                .allSatisfy(r -> assertThat(r.target()).isInstanceOf(WalTarget.class));
        assertCorrupt(await(engine.storage("reader-3", CONFIG, clock).openStream("wal-rot")), 1, 1);
    }

    /**
     * A stream materialized into an object whose file then has a byte flipped on disk, the WAL still holding the
     * range: a cold read returns exactly the committed payloads (served by the WAL), and the object's record is
     * QUARANTINED, so no later reader tries it.
     */
    @Test
    void objectFileCorruptWithTheWalStillThere_readFallsBackToTheWal_recordQuarantined() throws Exception {
        StreamStorage storage = engine.storage("broker-a", CONFIG, clock);
        NereusStream s = await(storage.openStream("object-rot"));
        await(s.acquireWriter());
        List<byte[]> payloads = appendTen(s);
        await(storage.offload(s.id(), Long.MAX_VALUE));
        IndexRecord object = record(s, 0);
        flipByteOnDisk((ObjectTarget) object.target());

        StreamStorage cold = engine.storage("reader", CONFIG, clock);
        assertThat(readDensePayloads(await(cold.openStream("object-rot")))).containsExactlyElementsOf(payloads);
        assertThat(cold.quarantinedRecords()).isEqualTo(1);
        IndexRecord after = await(engine.metadata.index().indexRecords(s.id(), ReadView.COMMITTED)).get(0);
        assertThat(after.range()).isEqualTo(object.range());
        assertThat(after.state()).isEqualTo(IndexRecordState.QUARANTINED);
    }

    /**
     * The object is the only copy (the WAL slice was collected after materialization) and a byte of its file flips
     * on disk: a cold read fails CHECKSUM_MISMATCH naming the stream and the offset; nothing is returned for it.
     */
    @Test
    void objectFileCorruptAsTheOnlyCopy_readFailsChecksumMismatchNamingStreamAndOffset() throws Exception {
        StreamStorage storage = engine.storage("broker-a", CONFIG, clock);
        NereusStream s = await(storage.openStream("only-copy"));
        await(s.acquireWriter());
        List<byte[]> payloads = appendTen(s);
        await(storage.rollWalSlice());
        await(storage.materializeSealedSlices());
        await(storage.collectGarbage());
        clock.advance(WAL_GRACE);
        await(storage.collectGarbage());
        assertThat(await(engine.metadata.slices().slices(WalSliceState.SEALED, 0, 1000))).isEmpty();
        assertThat(await(engine.metadata.slices().slices(WalSliceState.COLLECTING, 0, 1000))).isEmpty();
        List<IndexRecord> records = await(engine.metadata.index().indexRecords(s.id(), ReadView.COMMITTED));
        assertThat(records).singleElement().satisfies(r -> assertThat(r.target()).isInstanceOf(ObjectTarget.class));
        assertThat(readDensePayloads(await(engine.storage("reader", CONFIG, clock).openStream("only-copy"))))
                .containsExactlyElementsOf(payloads);

        flipByteOnDisk((ObjectTarget) records.get(0).target());
        NereusStream c = await(engine.storage("reader-2", CONFIG, clock).openStream("only-copy"));
        assertCorrupt(c, 0, 0);
        assertThat(await(engine.metadata.index().indexRecords(s.id(), ReadView.COMMITTED)).get(0).state())
                .as("the only copy is never quarantined").isEqualTo(IndexRecordState.COMMITTED);
    }

    private static void assertCorrupt(NereusStream c, long from, long failingOffset) {
        assertThatThrownBy(() -> readFrom(c, from)).isInstanceOfSatisfying(NereusException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.CHECKSUM_MISMATCH);
            assertThat(e.retriable()).isFalse();
            assertThat(e.context()).containsEntry("stream", c.id()).containsEntry("offset", failingOffset);
        });
    }

    /** Every entry from {@code from}, one read at a time. */
    private static List<byte[]> readFrom(NereusStream c, long from) {
        List<byte[]> out = new ArrayList<>();
        long at = from;
        while (true) {
            ReadResult r = read(c, at);
            if (r.entries().isEmpty()) {
                return out;
            }
            r.entries().forEach(e -> out.add(e.bytes()));
            r.release();
            at = r.nextOffset();
        }
    }

    private static ReadResult read(NereusStream c, long from) {
        return await(c.read(ReadView.COMMITTED, from, 1, 1 << 20, BoundaryMode.EXACT_START));
    }

    private static List<byte[]> appendTen(NereusStream s) {
        List<byte[]> payloads = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            byte[] p = payload("entry-" + i, 200);
            payloads.add(p);
            assertThat(await(s.append(List.of(AppendEntry.of(p))))).isEqualTo(OffsetRange.single(i));
        }
        return payloads;
    }

    /** The WAL section holding {@code offset}, as the stream's generation-0 record lists it. */
    private WalSectionRef section(NereusStream s, long offset) {
        return record(s, offset).walSections().stream().filter(w -> w.range().contains(offset)).findFirst()
                .orElseThrow();
    }

    private IndexRecord record(NereusStream s, long offset) {
        return await(engine.metadata.index().indexRecords(s.id(), ReadView.COMMITTED)).stream()
                .filter(r -> r.range().contains(offset)).findFirst().orElseThrow();
    }

    /** Flips one bit of a byte inside the object's first entry, in place, as bit rot on the disk would. */
    private void flipByteOnDisk(ObjectTarget t) throws Exception {
        Path file = objectDir.resolve(t.key());
        assertThat(Files.size(file)).isEqualTo(t.objectSize());
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, 60);
            b.put(0, (byte) (b.get(0) ^ 0x10)).rewind();
            ch.write(b, 60);
            ch.force(false);
        }
    }

    private static byte[] payload(String prefix, int size) {
        byte[] p = new byte[size];
        byte[] head = prefix.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < size; i++) {
            p[i] = i < head.length ? head[i] : (byte) ('a' + i % 26);
        }
        return p;
    }
}
