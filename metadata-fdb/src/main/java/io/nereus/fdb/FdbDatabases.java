package io.nereus.fdb;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDB;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Opens the {@link Database} that Nereus metadata lives in: the real FoundationDB client when a cluster file
 * is configured, {@link EmbeddedFdb} otherwise. Everything above this class talks to {@code Database} only,
 * so the same code runs on both.
 */
public final class FdbDatabases {
    /** The fdb-java API version Nereus is written against (fdb-java 7.3.x). */
    public static final int API_VERSION = 730;

    /** Durable embedded databases open in this process, by absolute directory; guarded by itself. */
    private static final Map<Path, SharedEmbedded> SHARED_EMBEDDED = new HashMap<>();

    /** An embedded database shared by {@code holders} leases. */
    private static final class SharedEmbedded {
        final EmbeddedFdb database;
        final Duration syncInterval;
        int holders;

        SharedEmbedded(EmbeddedFdb database, Duration syncInterval) {
            this.database = database;
            this.syncInterval = syncInterval;
        }
    }

    private FdbDatabases() {
    }

    /**
     * Opens the metadata database.
     *
     * @param clusterFile  a FoundationDB cluster file; when present the real client is used
     * @param embeddedDir  where EmbeddedFdb keeps its data when no cluster file is given; empty means in memory
     * @param embeddedSyncInterval how EmbeddedFdb makes commits durable ({@link EmbeddedFdb.Builder#syncInterval}:
     *                     zero fsyncs every commit group before acknowledging it); a real cluster keeps its own
     * @throws IllegalArgumentException when the cluster file does not exist or cannot be read
     * @throws IllegalStateException    when a cluster file is given but the native client cannot be loaded
     */
    public static Database open(Optional<Path> clusterFile, Optional<Path> embeddedDir, Duration embeddedSyncInterval) {
        Objects.requireNonNull(clusterFile, "clusterFile");
        Objects.requireNonNull(embeddedDir, "embeddedDir");
        Objects.requireNonNull(embeddedSyncInterval, "embeddedSyncInterval");
        if (clusterFile.isPresent()) {
            return openCluster(clusterFile.get());
        }
        return embeddedDir.<Database>map(dir -> EmbeddedFdb.builder().directory(dir).syncInterval(embeddedSyncInterval)
                .build()).orElseGet(EmbeddedFdb::inMemory);
    }

    /**
     * Like {@link #open}, as a {@link DatabaseLease}: every caller naming the same {@code embeddedDir} (no cluster
     * file) in this process shares one {@link EmbeddedFdb}, opened by the first and closed when the last lease is
     * closed, so that several brokers of one JVM (tests that run two) use one embedded metadata store the way
     * brokers share a FoundationDB cluster. A directory can be open only once at a time, so without sharing the
     * second would fail. A cluster file or no directory gives a lease on a database of its own.
     *
     * @throws IllegalArgumentException when the cluster file is unreadable, or when {@code embeddedDir} is already
     *                                  open in this process with another {@code embeddedSyncInterval}
     * @throws IllegalStateException    when a cluster file is given but the native client cannot be loaded
     */
    public static DatabaseLease acquire(Optional<Path> clusterFile, Optional<Path> embeddedDir,
            Duration embeddedSyncInterval) {
        Objects.requireNonNull(clusterFile, "clusterFile");
        Objects.requireNonNull(embeddedDir, "embeddedDir");
        Objects.requireNonNull(embeddedSyncInterval, "embeddedSyncInterval");
        if (clusterFile.isPresent() || embeddedDir.isEmpty()) {
            Database db = open(clusterFile, embeddedDir, embeddedSyncInterval);
            return new DatabaseLease(db, db::close);
        }
        Path dir = embeddedDir.get().toAbsolutePath().normalize();
        synchronized (SHARED_EMBEDDED) {
            SharedEmbedded shared = SHARED_EMBEDDED.get(dir);
            if (shared == null) {
                shared = new SharedEmbedded(EmbeddedFdb.builder().directory(dir).syncInterval(embeddedSyncInterval)
                        .build(), embeddedSyncInterval);
                SHARED_EMBEDDED.put(dir, shared);
            } else if (!shared.syncInterval.equals(embeddedSyncInterval)) {
                throw new IllegalArgumentException("the embedded FoundationDB in " + dir + " is already open in this"
                        + " process with a sync interval of " + shared.syncInterval.toMillis() + " ms, not "
                        + embeddedSyncInterval.toMillis() + " ms");
            }
            shared.holders++;
            SharedEmbedded held = shared;
            return new DatabaseLease(shared.database, () -> release(dir, held));
        }
    }

    private static void release(Path dir, SharedEmbedded shared) {
        synchronized (SHARED_EMBEDDED) {
            if (--shared.holders > 0) {
                return;
            }
            SHARED_EMBEDDED.remove(dir, shared);
        }
        shared.database.close();
    }

    /** Opens a real FoundationDB cluster through the native client. */
    public static Database openCluster(Path clusterFile) {
        if (!Files.isReadable(clusterFile)) {
            throw new IllegalArgumentException("FoundationDB cluster file " + clusterFile
                    + " does not exist or is not readable");
        }
        try {
            return FDB.selectAPIVersion(API_VERSION).open(clusterFile.toString());
        } catch (UnsatisfiedLinkError | NoClassDefFoundError | ExceptionInInitializerError e) {
            throw new IllegalStateException("A FoundationDB cluster file is configured (" + clusterFile
                    + ") but the FoundationDB native client (libfdb_c " + API_VERSION / 100 + "."
                    + API_VERSION % 100 / 10 + ") could not be loaded; install the FoundationDB client package"
                    + " or remove the cluster file setting to use the embedded engine", e);
        }
    }
}
