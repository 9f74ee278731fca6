package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.Database;
import io.nereus.metadata.codec.FormatVersion;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The entry point to Nereus metadata under one root: opens the root (checking its stored layout version) and
 * hands out one store per job, all over the same {@link Database}, {@link NereusKeyspace} and executor, with one
 * shared {@link TransactionRunner}:
 * <ul>
 *   <li>{@link #catalog()}: managed-ledger names to stream incarnations, id allocation;</li>
 *   <li>{@link #streams()}: heads, writer acquisition and fencing, WAL batch commits, intents, seal, trim;</li>
 *   <li>{@link #index()}: the generation index: lookup, generation-0 repair, publication, quarantine,
 *       retirement and the garbage collector's steps;</li>
 *   <li>{@link #cursors()}: cursor state and managed-ledger properties.</li>
 * </ul>
 * A store is only reachable through an opened {@code MetadataStore}, so nothing reads or writes a root whose
 * layout this build does not know. Immutable and thread-safe; the stores follow the rules documented on
 * {@link TransactionRunner}: one transaction per operation (retried by the database), futures that never throw.
 */
public final class MetadataStore {
    private final NereusKeyspace ks;
    private final CatalogStore catalog;
    private final StreamCommitStore streams;
    private final GenerationIndexStore index;
    private final CursorStore cursors;

    private MetadataStore(TransactionRunner tx, NereusKeyspace ks) {
        this.ks = ks;
        StoredRecords records = new StoredRecords(ks);
        this.catalog = new CatalogStore(tx, ks);
        this.streams = new StreamCommitStore(tx, ks, records);
        this.index = new GenerationIndexStore(tx, ks, records);
        this.cursors = new CursorStore(tx, ks);
    }

    /**
     * Opens the metadata under {@code keyspace}: writes the current layout version on first use and fails
     * with {@link FormatVersion.UnsupportedFormatVersionException} when the stored layout is unknown.
     */
    public static CompletableFuture<MetadataStore> open(Database db, NereusKeyspace keyspace, Executor executor) {
        return guard(() -> {
            TransactionRunner tx = new TransactionRunner(db, executor);
            MetadataStore store = new MetadataStore(tx, Objects.requireNonNull(keyspace, "keyspace"));
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
}
