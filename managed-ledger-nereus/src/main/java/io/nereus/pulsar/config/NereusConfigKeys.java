package io.nereus.pulsar.config;

import io.nereus.stream.StorageConfig;
import io.nereus.wal.WalConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.pulsar.broker.ServiceConfiguration;

/**
 * The table of Nereus broker settings, in documentation order. Static defaults are those of
 * {@link WalConfig#defaults()} and {@link StorageConfig#defaults()}; limits are those of their validation,
 * plus an upper bound on durations so they fit a 64-bit count of nanoseconds (about 292 years), which the
 * WAL writer schedules with.
 */
public final class NereusConfigKeys {
    /** Largest microseconds (and seconds) whose duration still fits in a signed 64-bit count of nanoseconds. */
    static final long MAX_MICROS = Long.MAX_VALUE / 1_000;
    static final long MAX_SECONDS = Long.MAX_VALUE / 1_000_000_000;
    static final int MAX_METADATA_ROOT_LENGTH = 255;
    /** Longest WAL writer lease and slice recovery interval: an abandoned slice is sealed within about both. */
    static final long MAX_RECOVERY_SECONDS = 3_600;

    private static final WalConfig WAL = WalConfig.defaults();
    private static final StorageConfig STORAGE = StorageConfig.defaults();

    public static final ConfigKey<Optional<Path>> FDB_CLUSTER_FILE = new ConfigKey<>("nereusFdbClusterFile",
            ConfigType.OPTIONAL_PATH, c -> Optional.empty(), "empty", "an existing file",
            p -> p.isEmpty() || Files.isRegularFile(p.get()),
            "FoundationDB cluster file of the metadata store. Empty: the embedded engine (EmbeddedFdb) in "
                    + "nereusEmbeddedFdbDir. A real cluster needs the FoundationDB 7.3 client library on the "
                    + "broker host.");

    public static final ConfigKey<Path> EMBEDDED_FDB_DIR = new ConfigKey<>("nereusEmbeddedFdbDir",
            ConfigType.PATH, c -> Path.of("data", "nereus", "metadata"), "data/nereus/metadata",
            "a directory path, not an existing file", p -> !Files.isRegularFile(p),
            "Directory of the embedded metadata engine, used when nereusFdbClusterFile is empty; a relative "
                    + "path is resolved against the broker's working directory, like the standalone's other "
                    + "data/ directories.");

    public static final ConfigKey<String> METADATA_ROOT = new ConfigKey<>("nereusMetadataRoot",
            ConfigType.STRING, ServiceConfiguration::getClusterName, "the broker's clusterName",
            "1 to " + MAX_METADATA_ROOT_LENGTH + " characters, no control characters",
            NereusConfigKeys::validRoot,
            "Root of this cluster's Nereus metadata: the FoundationDB directory (\"nereus\", root). Brokers of "
                    + "one Pulsar cluster share it.");

    public static final ConfigKey<Integer> WAL_ENSEMBLE_SIZE = brokerInt("nereusWalEnsembleSize",
            ServiceConfiguration::getManagedLedgerDefaultEnsembleSize, "managedLedgerDefaultEnsembleSize",
            ">= 1", "Bookies in the ensemble of each WAL slice (BookKeeper ledger).");

    public static final ConfigKey<Integer> WAL_WRITE_QUORUM = brokerInt("nereusWalWriteQuorum",
            ServiceConfiguration::getManagedLedgerDefaultWriteQuorum, "managedLedgerDefaultWriteQuorum",
            ">= 1 and <= nereusWalEnsembleSize", "Bookies that store each WAL batch.");

    public static final ConfigKey<Integer> WAL_ACK_QUORUM = brokerInt("nereusWalAckQuorum",
            ServiceConfiguration::getManagedLedgerDefaultAckQuorum, "managedLedgerDefaultAckQuorum",
            ">= 1 and <= nereusWalWriteQuorum",
            "Bookie acknowledgements a WAL batch needs before its entries commit.");

    public static final ConfigKey<Integer> WAL_FLUSH_BYTES = intKey("nereusWalFlushBytes", WAL.flushBytes(),
            "> 0 and <= nereusWalMaxBatchBytes", v -> v > 0,
            "A WAL batch is sealed and written once its payload reaches this many bytes.");

    public static final ConfigKey<Long> WAL_FLUSH_DELAY_MICROS = longKey("nereusWalFlushDelayMicros",
            WAL.flushDelay().toNanos() / 1_000, "0 to " + MAX_MICROS, v -> v >= 0 && v <= MAX_MICROS,
            "A non-empty WAL batch is sealed at the latest this many microseconds after its first entry.");

    public static final ConfigKey<Integer> WAL_MAX_BATCH_BYTES = intKey("nereusWalMaxBatchBytes",
            WAL.maxBatchBytes(), "> 0", v -> v > 0,
            "Largest WAL batch payload (one BookKeeper entry); a larger Pulsar entry is refused. Keep it below "
                    + "the nettyMaxFrameSizeBytes of brokers and bookies (5 MB by default).");

    public static final ConfigKey<Integer> WAL_MAX_IN_FLIGHT_BATCHES = intKey("nereusWalMaxInFlightBatches",
            WAL.maxInFlightBatches(), "> 0", v -> v > 0,
            "WAL batches written to BookKeeper and not yet acknowledged, at most.");

    public static final ConfigKey<Long> WAL_SLICE_MAX_BYTES = longKey("nereusWalSliceMaxBytes",
            WAL.sliceMaxBytes(), "> 0", v -> v > 0,
            "A WAL slice (BookKeeper ledger) is closed and a new one started after this many bytes.");

    public static final ConfigKey<Long> WAL_SLICE_MAX_AGE_SECONDS = longKey("nereusWalSliceMaxAgeSeconds",
            WAL.sliceMaxAge().toSeconds(), "1 to " + MAX_SECONDS, v -> v >= 1 && v <= MAX_SECONDS,
            "A WAL slice is closed and a new one started after this many seconds.");

    public static final ConfigKey<Integer> WAL_COMMIT_MAX_BATCHES = intKey("nereusWalCommitMaxBatches",
            WAL.maxCoalescedBatches(), "1 to " + WalConfig.MAX_COALESCED_BATCHES_LIMIT,
            v -> v >= 1 && v <= WalConfig.MAX_COALESCED_BATCHES_LIMIT,
            "Acknowledged consecutive WAL batches committed together in one metadata transaction, at most "
                    + "(1: no coalescing).");

    public static final ConfigKey<Integer> WAL_COMMIT_MAX_APPENDS = intKey("nereusWalCommitMaxAppends",
            WAL.maxCoalescedAppends(), "1 to " + WalConfig.MAX_COALESCED_APPENDS_LIMIT,
            v -> v >= 1 && v <= WalConfig.MAX_COALESCED_APPENDS_LIMIT,
            "Stream appends (one per stream per WAL batch) in one coalesced metadata transaction, at most; a "
                    + "single batch is always committed whole.");

    public static final ConfigKey<Long> WAL_WRITER_LEASE_SECONDS = longKey("nereusWalWriterLeaseSeconds",
            WAL.writerLease().toSeconds(), "1 to " + MAX_RECOVERY_SECONDS, v -> v >= 1 && v <= MAX_RECOVERY_SECONDS,
            "A broker's WAL writer renews its lease every third of this; once another broker has seen the lease "
                    + "unrenewed for this long, it fences and seals the WAL slices the writer left open.");

    public static final ConfigKey<Long> WAL_RECOVERY_INTERVAL_SECONDS = longKey("nereusWalRecoveryIntervalSeconds",
            WAL.recoveryInterval().toSeconds(), "1 to " + MAX_RECOVERY_SECONDS,
            v -> v >= 1 && v <= MAX_RECOVERY_SECONDS,
            "How often a broker looks for WAL slices left open by writers that are gone, and recovers them (also "
                    + "once at start).");

    public static final ConfigKey<Long> TAIL_CACHE_BYTES = longKey("nereusTailCacheBytes",
            STORAGE.tailCacheBytes(), ">= 0", v -> v >= 0,
            "Payload bytes of recently committed entries kept in memory for tailing readers (0: none).");

    public static final ConfigKey<Integer> READ_CACHED_BATCHES = intKey("nereusReadCachedBatches",
            STORAGE.cachedBatches(), ">= 1", v -> v >= 1, "Decoded WAL batches kept in memory for readers.");

    public static final ConfigKey<Integer> READ_CACHED_RESOLUTIONS = intKey("nereusReadCachedResolutions",
            STORAGE.cachedResolutions(), ">= 1", v -> v >= 1,
            "Resolved index records (offset ranges to their WAL location) kept in memory for readers.");

    public static final ConfigKey<Integer> REPAIR_MAX_BATCHES = intKey("nereusRepairMaxBatches",
            STORAGE.repairMaxEntries(), ">= 1", v -> v >= 1,
            "WAL batches one generation-0 repair (rebuilding a missing index record from WAL evidence) may read.");

    /** Every key, in documentation order. */
    static final List<ConfigKey<?>> ALL = List.of(FDB_CLUSTER_FILE, EMBEDDED_FDB_DIR, METADATA_ROOT,
            WAL_ENSEMBLE_SIZE, WAL_WRITE_QUORUM, WAL_ACK_QUORUM, WAL_FLUSH_BYTES, WAL_FLUSH_DELAY_MICROS,
            WAL_MAX_BATCH_BYTES, WAL_MAX_IN_FLIGHT_BATCHES, WAL_SLICE_MAX_BYTES, WAL_SLICE_MAX_AGE_SECONDS,
            WAL_COMMIT_MAX_BATCHES, WAL_COMMIT_MAX_APPENDS, WAL_WRITER_LEASE_SECONDS, WAL_RECOVERY_INTERVAL_SECONDS,
            TAIL_CACHE_BYTES, READ_CACHED_BATCHES,
            READ_CACHED_RESOLUTIONS, REPAIR_MAX_BATCHES);

    private NereusConfigKeys() {
    }

    private static ConfigKey<Integer> brokerInt(String name, Function<ServiceConfiguration, Integer> setting,
            String brokerKey, String allowed, String doc) {
        return new ConfigKey<>(name, ConfigType.INT, setting, "the broker's " + brokerKey, allowed, v -> v >= 1, doc);
    }

    private static ConfigKey<Integer> intKey(String name, int dflt, String allowed, Predicate<Integer> valid,
            String doc) {
        return new ConfigKey<>(name, ConfigType.INT, c -> dflt, Integer.toString(dflt), allowed, valid, doc);
    }

    private static ConfigKey<Long> longKey(String name, long dflt, String allowed, Predicate<Long> valid,
            String doc) {
        return new ConfigKey<>(name, ConfigType.LONG, c -> dflt, Long.toString(dflt), allowed, valid, doc);
    }

    private static boolean validRoot(String root) {
        return !root.isEmpty() && root.length() <= MAX_METADATA_ROOT_LENGTH
                && root.chars().noneMatch(Character::isISOControl) && root.strip().equals(root);
    }
}
