package io.nereus.testing;

import static io.nereus.testing.StreamTesting.await;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.metadata.MetadataExecutor;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.NereusKeyspace;
import io.nereus.object.FilesystemObjectStore;
import io.nereus.object.ObjectStore;
import io.nereus.object.ObjectStoreConfig;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.wal.WalObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.client.BookKeeper;

/**
 * One engine test's world: an in-memory EmbeddedFdb with the Nereus metadata under {@code ("nereus", root)},
 * a client of the class's in-process BookKeeper, a filesystem object store in a new directory, and the storage
 * instances the test creates, all closed by {@link #close()}.
 */
public final class EngineFixture implements AutoCloseable {
    public final EmbeddedFdb fdb;
    public final MetadataStore metadata;
    public final BookKeeper bk;
    public final ObjectStore objects;
    /** Completes the metadata's callbacks, as the broker's does ({@link MetadataExecutor}). */
    public final MetadataExecutor metadataExecutor = MetadataExecutor.create(2, "nereus-metadata");
    private final List<StreamStorage> storages = new ArrayList<>();

    public EngineFixture(BookKeeperClients cluster, String root) {
        this(cluster, root, temporaryObjectStore());
    }

    /** As {@link #EngineFixture(BookKeeperClients, String)} with the given object store, closed with the fixture. */
    public EngineFixture(BookKeeperClients cluster, String root, ObjectStore objects) {
        this(cluster, root, objects, EmbeddedFdb.inMemory());
    }

    /** With the given metadata engine (a durable one, say) and object store, both closed with the fixture. */
    public EngineFixture(BookKeeperClients cluster, String root, ObjectStore objects, EmbeddedFdb fdb) {
        this.fdb = fdb;
        metadata = await(MetadataStore.open(fdb, new NereusKeyspace(new Subspace(Tuple.from("nereus", root))),
                metadataExecutor));
        bk = cluster.newClient();
        this.objects = objects;
    }

    /** A storage instance writing as {@code writerId}, closed with the fixture. */
    public StreamStorage storage(String writerId, StorageConfig config) {
        return storage(writerId, config, Clock.systemUTC());
    }

    /** A storage instance writing as {@code writerId} and reading time from {@code clock}, closed with the fixture. */
    public StreamStorage storage(String writerId, StorageConfig config, Clock clock) {
        return storage(writerId, config, clock, WalObserver.NONE);
    }

    /** As {@link #storage(String, StorageConfig, Clock)}, its WAL writer reporting its timings to {@code observer}. */
    public StreamStorage storage(String writerId, StorageConfig config, Clock clock, WalObserver observer) {
        StreamStorage s = StreamStorage.create(config, bk, metadata, objects, writerId, clock, observer);
        storages.add(s);
        return s;
    }

    /** A filesystem object store in a new directory under java.io.tmpdir (target/ in Maven runs). */
    public static ObjectStore temporaryObjectStore() {
        try {
            Path dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "objects-");
            return await(FilesystemObjectStore.open(ObjectStoreConfig.Filesystem.of(dir)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Closes the storage instances (each seals its last slice and releases its lease), then the object store and
     * the metadata.
     */
    @Override
    public void close() {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        storages.forEach(s -> closing.add(s.closeAsync()));
        await(CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])));
        objects.close();
        fdb.close();
        metadataExecutor.shutdown();
    }
}
