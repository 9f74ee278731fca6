package io.nereus.generation;

import static io.nereus.testing.StreamTesting.await;
import static io.nereus.testing.StreamTesting.mirrorReadable;
import static io.nereus.testing.StreamTesting.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.WalSliceState;
import io.nereus.object.FilesystemObjectStore;
import io.nereus.object.ObjectStoreConfig;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.testing.TestLedgers;
import io.nereus.wal.SliceMirrors;
import io.nereus.wal.WalConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The materializer reading a sealed slice of its own writer from the slice's local mirror on a real bookie and
 * filesystem: the objects hold exactly what was appended, nothing of the copy is read from the bookies, and the
 * mirror is released once the slice is copied. A mirror whose file went bad on disk is dropped and the slice is read
 * from the bookies instead, with the same objects.
 */
@Timeout(120)
class WalMirrorMaterializeTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static final int STREAMS = 3;
    private static final int ENTRIES = 100;
    /** Background passes on (they mirror slices) but an hour apart: the tests run them. */
    private static final StorageConfig CONFIG = StorageConfig.defaults()
            .withWal(WalConfig.defaults().withQuorums(1, 1, 1).withFlush(64 * 1024, Duration.ofMillis(1)))
            .withMaterializer(MaterializerConfig.defaults().withInterval(Duration.ofHours(1))
                    .withObjects(8L << 20, 64 * 1024));
    private static final StorageConfig READER = CONFIG.withMaterializer(CONFIG.materializer().withEnabled(false));

    @TempDir
    Path objectDir;
    private EngineFixture engine;
    private final Instant started = Instant.now();

    @BeforeEach
    void setUp() {
        engine = new EngineFixture(BK, "wal-mirror",
                await(FilesystemObjectStore.open(ObjectStoreConfig.Filesystem.of(objectDir))));
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private static byte[] payload(int stream, int i) {
        byte[] b = new byte[3000 + i];
        Arrays.fill(b, (byte) ('a' + (stream + i) % 26));
        b[0] = (byte) stream;
        b[1] = (byte) i;
        return b;
    }

    /** Appends the streams' entries interleaved and rolls the slice over; returns the storage. */
    private StreamStorage written() {
        StreamStorage storage = engine.storage("broker-a", CONFIG);
        assertThat(storage.walMirrors()).as("direct I/O in java.io.tmpdir").isNotSameAs(SliceMirrors.NONE);
        List<NereusStream> handles = new ArrayList<>();
        for (int s = 0; s < STREAMS; s++) {
            NereusStream h = await(storage.openStream("mirrored-" + s));
            await(h.acquireWriter());
            handles.add(h);
        }
        List<CompletableFuture<?>> acks = new ArrayList<>();
        for (int i = 0; i < ENTRIES; i++) {
            for (int s = 0; s < STREAMS; s++) {
                acks.add(handles.get(s).append(List.of(AppendEntry.of(payload(s, i)))));
            }
        }
        acks.forEach(a -> await(a));
        await(storage.rollWalSlice());
        return storage;
    }

    /** With the WAL's ledgers deleted, a cold instance reads every stream's entries from the objects. */
    private void objectsHoldWhatWasAppended() throws Exception {
        for (long id : await(engine.metadata.slices().slices(WalSliceState.SEALED, 0, 100)).keySet()) {
            TestLedgers.delete(engine.bk, id);
        }
        StreamStorage cold = engine.storage("reader", READER);
        for (int s = 0; s < STREAMS; s++) {
            List<StreamEntry> read = readAll(await(cold.openStream("mirrored-" + s)), 0, 64);
            assertThat(read).hasSize(ENTRIES);
            for (int i = 0; i < ENTRIES; i++) {
                assertThat(read.get(i).bytes()).as("stream %d entry %d", s, i).isEqualTo(payload(s, i));
            }
        }
        assertThat(cold.walBytesRead()).isZero();
    }

    @Test
    void sealedSlice_copiedFromItsMirror_noBookieRead_mirrorReleased() throws Exception {
        StreamStorage storage = written();
        SliceMirrors mirrors = storage.walMirrors();
        assertThat(mirrors.bytes()).as("the sealed slice's mirror").isPositive();
        long slice = await(engine.metadata.slices().slices(WalSliceState.SEALED, 0, 100)).firstKey();
        // the mirror's last writes go to disk on its own thread after the seal; until then the copy reads BookKeeper
        await().atMost(Duration.ofSeconds(10)).until(() -> mirrorReadable(mirrors, slice));
        long fromBookies = storage.walBytesRead();

        await(storage.materializeSealedSlices());
        assertThat(storage.materializerStats().objectsPublished()).isEqualTo(STREAMS);
        assertThat(mirrors.bytesRead()).as("the copy read the mirror").isPositive();
        assertThat(storage.walBytesRead()).as("and nothing from the bookies").isEqualTo(fromBookies);
        assertThat(mirrors.droppedMirrors()).isZero();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(mirrors.bytes())
                .as("the copied slice's mirror is released").isZero());
        objectsHoldWhatWasAppended();
    }

    @Test
    void mirrorFileDamagedOnDisk_dropped_sliceCopiedFromTheBookies_sameObjects() throws Exception {
        StreamStorage storage = written();
        SliceMirrors mirrors = storage.walMirrors();
        long slice = await(engine.metadata.slices().slices(WalSliceState.SEALED, 0, 100)).firstKey();
        // the mirror's last writes go to disk on its own thread after the seal: damage it only once it is whole
        await().atMost(Duration.ofSeconds(10)).until(() -> mirrorReadable(mirrors, slice));
        List<Path> files = mirrorFilesSinceStart();
        assertThat(files).as("one sealed slice, one mirror file").hasSize(1);
        try (FileChannel ch = FileChannel.open(files.get(0), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap("not a WAL batch!".getBytes()), 40);
            ch.force(true);
        }
        long fromBookies = storage.walBytesRead();

        await(storage.materializeSealedSlices());
        assertThat(storage.materializerStats().objectsPublished()).isEqualTo(STREAMS);
        assertThat(mirrors.droppedMirrors()).isEqualTo(1);
        assertThat(storage.walBytesRead()).as("the slice was read from the bookies").isGreaterThan(fromBookies);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(mirrors.bytes()).isZero();
            assertThat(files.get(0)).as("the dropped mirror's file is deleted").doesNotExist();
        });
        objectsHoldWhatWasAppended();
    }

    /** This process's mirror files in java.io.tmpdir modified since the test started. */
    private List<Path> mirrorFilesSinceStart() throws IOException {
        String prefix = SliceMirrors.PREFIX + ProcessHandle.current().pid() + "-";
        FileTime since = FileTime.from(started.minusSeconds(1));
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return s.filter(p -> p.getFileName().toString().startsWith(prefix)).filter(p -> {
                try {
                    return Files.getLastModifiedTime(p).compareTo(since) >= 0;
                } catch (IOException e) {
                    return false; // deleted meanwhile
                }
            }).toList();
        }
    }
}
