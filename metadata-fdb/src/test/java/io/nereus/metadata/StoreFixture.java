package io.nereus.metadata;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.FdbDatabases;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A MetadataStore and its job stores for the operation tests: on an in-memory EmbeddedFdb, or, when the system property
 * {@code nereus.fdb.clusterFile} names a cluster file, on that real cluster under a fresh root that is
 * cleared on close. Tests that inject faults call {@link #embedded()} and are skipped on a real cluster.
 */
final class StoreFixture implements AutoCloseable {
    final Database db;
    final NereusKeyspace ks;
    final MetadataStore store;
    final CatalogStore catalog;
    final StreamCommitStore streams;
    final GenerationIndexStore index;
    final CursorStore cursors;
    final WalSliceStore slices;
    private long lease;

    StoreFixture() {
        String clusterFile = System.getProperty("nereus.fdb.clusterFile", "");
        boolean real = !clusterFile.isBlank() && !clusterFile.startsWith("${");
        db = real ? FdbDatabases.open(Optional.of(Path.of(clusterFile)), Optional.empty(), Duration.ZERO)
                : EmbeddedFdb.inMemory();
        ks = new NereusKeyspace(new Subspace(Tuple.from("nereus-test", UUID.randomUUID().toString())));
        store = await(MetadataStore.open(db, ks, executor()));
        catalog = store.catalog();
        streams = store.streams();
        index = store.index();
        cursors = store.cursors();
        slices = store.slices();
    }

    Executor executor() {
        return db instanceof EmbeddedFdb e ? e.getExecutor() : ForkJoinPool.commonPool();
    }

    /** The EmbeddedFdb under test; skips the calling test on a real cluster. */
    EmbeddedFdb embedded() {
        Assumptions.assumeTrue(db instanceof EmbeddedFdb, "needs EmbeddedFdb fault injection");
        return (EmbeddedFdb) db;
    }

    static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    StreamId newStream(String name) {
        return await(catalog.openStream(name)).streamId();
    }

    /** Acquires writer "w" for {@code s} and returns its epoch. */
    long acquire(StreamId s) {
        return await(streams.acquireWriter(s, "w")).writerEpoch();
    }

    /**
     * Registers WAL slices {@code ids} OPEN for writer "w" (under one lease it takes the first time), as the WAL
     * writer registers every slice before writing to it: a commit into an unregistered slice is refused.
     */
    void openSlices(long... ids) {
        if (lease == 0) {
            lease = await(slices.takeLease("w", java.time.Duration.ofSeconds(30)));
        }
        for (long id : ids) {
            SliceRegistration r = await(slices.register(id, "w", lease));
            if (!(r instanceof SliceRegistration.Registered)) {
                throw new IllegalStateException("slice " + id + " not registered: " + r);
            }
        }
    }

    static StreamAppend append(StreamId s, long epoch, long start, long end, long slice, long entry, int pos) {
        return new StreamAppend(s, epoch, OffsetRange.of(start, end), new WalTarget(slice, entry, pos),
                Checksum.crc32c(start * 31 + end), end - start, 10 * (end - start));
    }

    @Override
    public void close() {
        if (!(db instanceof EmbeddedFdb)) {
            db.run(tr -> {
                tr.clear(ks.root().range());
                return null;
            });
        }
        db.close();
    }
}
