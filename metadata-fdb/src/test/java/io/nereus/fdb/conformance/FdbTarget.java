package io.nereus.fdb.conformance;

import com.apple.foundationdb.Database;
import io.nereus.fdb.FdbDatabases;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The database a conformance test runs against: a fresh {@link EmbeddedFdb} per test, driven by a
 * {@link MutableClock}, or, when the system property {@value #CLUSTER_FILE_PROPERTY} names a cluster file, one
 * shared connection to that real FoundationDB cluster.
 *
 * <p>Lifecycle: {@link #open()} per test, {@link #close()} after it. The real-cluster connection is opened once per
 * JVM and never closed (the native client cannot be restarted in one process).
 */
final class FdbTarget implements AutoCloseable {
    static final String CLUSTER_FILE_PROPERTY = "nereus.fdb.clusterFile";
    /** FoundationDB's MVCC window (MAX_READ/WRITE_TRANSACTION_LIFE_VERSIONS = 5 s of versions). */
    static final Duration MVCC_WINDOW = Duration.ofSeconds(5);

    private static Database sharedCluster;

    private final Database database;
    private final EmbeddedFdb embedded;
    private final MutableClock clock;

    private FdbTarget(Database database, EmbeddedFdb embedded, MutableClock clock) {
        this.database = database;
        this.embedded = embedded;
        this.clock = clock;
    }

    /** The configured cluster file; empty when the property is unset, blank or an unexpanded Maven placeholder. */
    static Optional<Path> configuredClusterFile() {
        String value = System.getProperty(CLUSTER_FILE_PROPERTY);
        if (value == null || value.isBlank() || value.startsWith("${")) {
            return Optional.empty();
        }
        return Optional.of(Path.of(value.trim()));
    }

    static FdbTarget open() {
        Optional<Path> clusterFile = configuredClusterFile();
        if (clusterFile.isPresent()) {
            return new FdbTarget(sharedCluster(clusterFile.get()), null, null);
        }
        MutableClock clock = new MutableClock();
        EmbeddedFdb engine = EmbeddedFdb.builder()
                .mvccWindow(MVCC_WINDOW)
                .clock(clock)
                .build();
        return new FdbTarget(engine, engine, clock);
    }

    private static synchronized Database sharedCluster(Path clusterFile) {
        if (sharedCluster == null) {
            sharedCluster = FdbDatabases.openCluster(clusterFile);
        }
        return sharedCluster;
    }

    Database database() {
        return database;
    }

    boolean isEmbedded() {
        return embedded != null;
    }

    Optional<EmbeddedFdb> embedded() {
        return Optional.ofNullable(embedded);
    }

    /**
     * Lets more than the MVCC window pass, so a transaction that already has a read version becomes too old.
     * Embedded: moves the fake clock; a real cluster has no fake time, so there (only) this sleeps 6 s.
     */
    void letMvccWindowPass() {
        letTimePass(MVCC_WINDOW.plusSeconds(1));
    }

    /** Lets {@code amount} of (fake, when embedded) time pass. */
    void letTimePass(Duration amount) {
        if (clock != null) {
            clock.advance(amount);
            return;
        }
        try {
            Thread.sleep(amount.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while letting time pass", e);
        }
    }

    /** "EmbeddedFdb" or "FoundationDB cluster (path)", for reports. */
    String describe() {
        return isEmbedded() ? "EmbeddedFdb (in memory, fake clock)"
                : "FoundationDB cluster (" + configuredClusterFile().orElseThrow() + ")";
    }

    @Override
    public void close() {
        if (embedded != null) {
            embedded.close();
        }
    }
}
