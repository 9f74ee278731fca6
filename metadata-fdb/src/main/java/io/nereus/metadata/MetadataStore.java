package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;
import io.nereus.fdb.DatabaseLease;
import io.nereus.fdb.FdbDatabases;
import io.nereus.metadata.codec.FormatVersion;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The entry point to Nereus metadata under one root: opens the root (checking its stored layout version) and
 * hands out one store per job, all over the same {@link Database}, {@link NereusKeyspace} and executor, with one
 * shared {@link TransactionRunner}:
 * <ul>
 *   <li>{@link #catalog()}: managed-ledger names to stream incarnations, id allocation;</li>
 *   <li>{@link #streams()}: heads, writer acquisition and fencing, WAL batch commits, intents, seal, trim;</li>
 *   <li>{@link #index()}: the generation index: lookup, generation-0 repair, publication, quarantine,
 *       retirement;</li>
 *   <li>{@link #cursors()}: cursor state and managed-ledger properties;</li>
 *   <li>{@link #slices()}: WAL slices (state, writer, per-stream ranges) and the WAL writers' leases;</li>
 *   <li>{@link #producers()}: idempotent-producer state of streams written by the Kafka adapter;</li>
 *   <li>{@link #collection()}: the garbage collector's steps: WAL slices out of service and forgotten, object
 *       references, retired records forgotten, deleted streams purged, the metadata census.</li>
 * </ul>
 * A store is only reachable through an opened {@code MetadataStore}, so nothing reads or writes a root whose
 * layout this build does not know. Thread-safe; the stores follow the rules documented on
 * {@link TransactionRunner}: one transaction per operation (retried by the database), futures that never throw.
 *
 * <p>Lifecycle: {@link #open(Optional, Optional, List, Executor)} opens the database itself and the store holds
 * it: {@link #close()} gives the hold back (closing the database unless another store of the process shares the
 * same embedded directory), and the stores must not be used afterwards.
 * {@link #open(Database, NereusKeyspace, Executor)} uses a database the caller owns, and {@link #close()}
 * leaves it open. The executor always belongs to the caller.
 */
public final class MetadataStore implements AutoCloseable {
    private final Optional<DatabaseLease> owned;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final NereusKeyspace ks;
    private final CatalogStore catalog;
    private final StreamCommitStore streams;
    private final GenerationIndexStore index;
    private final CursorStore cursors;
    private final WalSliceStore slices;
    private final CollectionStore collection;
    private final ProducerStateStore producers;
    private final TransactionRunner tx;

    private MetadataStore(TransactionRunner tx, NereusKeyspace ks, Optional<DatabaseLease> owned) {
        this.tx = tx;
        this.owned = owned;
        this.ks = ks;
        StoredRecords records = new StoredRecords(ks);
        this.catalog = new CatalogStore(tx, ks);
        this.streams = new StreamCommitStore(tx, ks, records);
        this.index = new GenerationIndexStore(tx, ks, records);
        this.cursors = new CursorStore(tx, ks);
        this.slices = new WalSliceStore(tx, ks, records);
        this.collection = new CollectionStore(tx, ks, records, slices);
        this.producers = new ProducerStateStore(tx, ks);
    }

    /**
     * Opens everything Nereus metadata needs: the database ({@link FdbDatabases#open}: the FoundationDB cluster
     * of {@code clusterFile}, otherwise EmbeddedFdb in {@code embeddedDir}, or in memory when that is empty),
     * the DirectoryLayer directory {@code directoryPath} (created if absent) as the root, and the root's layout
     * version (see {@link #open(Database, NereusKeyspace, Executor)}). The returned store holds the database
     * through a {@link DatabaseLease}: stores of one process that name the same embedded directory share one
     * EmbeddedFdb ({@link FdbDatabases#acquire}).
     *
     * @param clusterFile   a FoundationDB cluster file; when present the real client is used
     * @param embeddedDir   where EmbeddedFdb keeps its data when no cluster file is given; empty means in memory
     * @param embeddedSyncInterval how EmbeddedFdb makes commits durable (see {@link FdbDatabases#open})
     * @param directoryPath the DirectoryLayer path of this cluster's metadata root, e.g. {@code ("nereus", name)}
     * @param executor      completes the callbacks of every metadata transaction; owned by the caller
     * @return a future failing, with the database closed again, when the cluster file is unreadable or the
     *         native client cannot be loaded (as {@link FdbDatabases#open} throws), when the directory cannot
     *         be created or opened, or with {@link FormatVersion.UnsupportedFormatVersionException} when the
     *         stored layout is unknown
     */
    public static CompletableFuture<MetadataStore> open(Optional<Path> clusterFile, Optional<Path> embeddedDir,
            Duration embeddedSyncInterval, List<String> directoryPath, Executor executor) {
        return guard(() -> {
            List<String> path = List.copyOf(directoryPath);
            Objects.requireNonNull(executor, "executor");
            DatabaseLease lease = FdbDatabases.acquire(clusterFile, embeddedDir, embeddedSyncInterval);
            Database db = lease.database();
            CompletableFuture<MetadataStore> opened;
            try {
                opened = DirectoryLayer.getDefault().createOrOpen(db, path)
                        .thenCompose(root -> open(db, new NereusKeyspace(root), executor, Optional.of(lease)));
            } catch (RuntimeException e) {
                lease.close();
                throw e;
            }
            return opened.whenComplete((store, error) -> {
                if (error != null) {
                    lease.close();
                }
            });
        });
    }

    /**
     * Opens the metadata under {@code keyspace} of a database the caller owns and closes: writes the current
     * layout version on first use and fails with {@link FormatVersion.UnsupportedFormatVersionException} when
     * the stored layout is unknown.
     */
    public static CompletableFuture<MetadataStore> open(Database db, NereusKeyspace keyspace, Executor executor) {
        return open(db, keyspace, executor, Optional.empty());
    }

    private static CompletableFuture<MetadataStore> open(Database db, NereusKeyspace keyspace, Executor executor,
            Optional<DatabaseLease> owned) {
        return guard(() -> {
            TransactionRunner tx = new TransactionRunner(db, executor);
            MetadataStore store = new MetadataStore(tx, Objects.requireNonNull(keyspace, "keyspace"), owned);
            byte[] key = keyspace.formatKey();
            return tx.run(tr -> tr.get(key).thenApply(v -> {
                if (v == null) {
                    tr.set(key, FormatVersion.encodeCurrent());
                } else {
                    FormatVersion.check(v);
                }
                return store;
            }));
        });
    }

    public NereusKeyspace keyspace() {
        return ks;
    }

    /** Managed-ledger names to stream incarnations. */
    public CatalogStore catalog() {
        return catalog;
    }

    /** Stream heads, writers, commits, intents, seal and trim. */
    public StreamCommitStore streams() {
        return streams;
    }

    /** The generation index. */
    public GenerationIndexStore index() {
        return index;
    }

    /** Cursor state and managed-ledger properties. */
    public CursorStore cursors() {
        return cursors;
    }

    /** WAL slices and WAL writer leases. */
    public WalSliceStore slices() {
        return slices;
    }

    /** Idempotent-producer state (the Kafka adapter's). */
    public ProducerStateStore producers() {
        return producers;
    }

    /** The garbage collector's metadata steps. */
    public CollectionStore collection() {
        return collection;
    }

    /**
     * Read-write transactions re-run after a conflict (FoundationDB error 1020) or another retriable error, an unknown
     * commit result (1021) included, by all stores of this instance since it opened.
     */
    public long transactionRetries() {
        return tx.retries();
    }

    /**
     * Gives back this store's hold on the database if it opened it (the last holder of a shared embedded database
     * closes it, see {@link FdbDatabases#acquire}); otherwise does nothing. Idempotent.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            owned.ifPresent(DatabaseLease::close);
        }
    }
}
