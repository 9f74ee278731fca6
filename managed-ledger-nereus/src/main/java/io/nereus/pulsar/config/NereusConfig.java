package io.nereus.pulsar.config;

import static io.nereus.pulsar.config.NereusConfigKeys.COLLECTOR_INTERVAL_SECONDS;
import static io.nereus.pulsar.config.NereusConfigKeys.EMBEDDED_FDB_DIR;
import static io.nereus.pulsar.config.NereusConfigKeys.EMBEDDED_FDB_SYNC_INTERVAL_MILLIS;
import static io.nereus.pulsar.config.NereusConfigKeys.FDB_CLUSTER_FILE;
import static io.nereus.pulsar.config.NereusConfigKeys.MATERIALIZER_ENABLED;
import static io.nereus.pulsar.config.NereusConfigKeys.MATERIALIZER_INTERVAL_SECONDS;
import static io.nereus.pulsar.config.NereusConfigKeys.MATERIALIZER_MAX_BYTES_PER_SECOND;
import static io.nereus.pulsar.config.NereusConfigKeys.METADATA_ROOT;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_BLOCK_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_BLOCK_CACHE_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_DELETE_GRACE_SECONDS;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_MERGE_MIN_OBJECTS;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_READ_AHEAD_BLOCKS;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_STORE_DIR;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_STORE_DIRECT_IO;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_STORE_TYPE;
import static io.nereus.pulsar.config.NereusConfigKeys.OBJECT_TARGET_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.READ_CACHED_BATCHES;
import static io.nereus.pulsar.config.NereusConfigKeys.READ_CACHED_RESOLUTIONS;
import static io.nereus.pulsar.config.NereusConfigKeys.REPAIR_MAX_BATCHES;
import static io.nereus.pulsar.config.NereusConfigKeys.S3_ACCESS_KEY;
import static io.nereus.pulsar.config.NereusConfigKeys.S3_BUCKET;
import static io.nereus.pulsar.config.NereusConfigKeys.S3_ENDPOINT;
import static io.nereus.pulsar.config.NereusConfigKeys.S3_PART_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.S3_PATH_STYLE;
import static io.nereus.pulsar.config.NereusConfigKeys.S3_PREFIX;
import static io.nereus.pulsar.config.NereusConfigKeys.S3_REGION;
import static io.nereus.pulsar.config.NereusConfigKeys.S3_SECRET_KEY;
import static io.nereus.pulsar.config.NereusConfigKeys.TAIL_CACHE_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_ACK_QUORUM;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_COMMIT_MAX_APPENDS;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_COMMIT_MAX_BATCHES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_DELETE_GRACE_SECONDS;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_ENSEMBLE_SIZE;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_FLUSH_BELOW_BATCHES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_FLUSH_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_FLUSH_DELAY_MICROS;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_FLUSH_WHEN_IDLE;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_MAX_BATCH_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_MAX_IN_FLIGHT_BATCHES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_MIRROR_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_MIRROR_STAGING_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_RECOVERY_INTERVAL_SECONDS;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_SLICE_MAX_AGE_SECONDS;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_SLICE_MAX_BYTES;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_WRITER_LEASE_SECONDS;
import static io.nereus.pulsar.config.NereusConfigKeys.WAL_WRITE_QUORUM;

import io.nereus.generation.CollectorConfig;
import io.nereus.generation.MaterializerConfig;
import io.nereus.object.ObjectStoreConfig;
import io.nereus.object.S3Credentials;
import io.nereus.pulsar.config.ConfigKey.Setting;
import io.nereus.stream.StorageConfig;
import io.nereus.wal.WalConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.pulsar.broker.ServiceConfiguration;

/**
 * The Nereus settings of one broker, read once from broker.conf ({@code nereus*} keys, table in
 * {@link #keys()}, documented in {@code conf/nereus.conf}). Immutable and validated.
 *
 * @param fdbClusterFile the FoundationDB cluster file; empty: the embedded engine in {@code embeddedFdbDir}
 * @param embeddedFdbDir the embedded engine's durable directory (relative: to the broker's working directory)
 * @param embeddedFdbSyncInterval how the embedded engine makes commits durable: zero fsyncs before acknowledging,
 *                       above zero acknowledges once written and fsyncs at least that often
 * @param metadataRoot   the FoundationDB directory of this cluster's metadata is {@code ("nereus", metadataRoot)}
 * @param storage        the engine's settings (WAL, caches, repair budget)
 * @param objectStore    where objects are kept (the filesystem store's directory, or the S3 bucket and client
 *                       settings)
 */
public record NereusConfig(Optional<Path> fdbClusterFile, Path embeddedFdbDir, Duration embeddedFdbSyncInterval,
        String metadataRoot, StorageConfig storage, ObjectStoreConfig objectStore) {

    /** First element of the FoundationDB directory path of Nereus metadata. */
    public static final String DIRECTORY_PREFIX = "nereus";

    public NereusConfig {
        Objects.requireNonNull(fdbClusterFile, "fdbClusterFile");
        Objects.requireNonNull(embeddedFdbDir, "embeddedFdbDir");
        Objects.requireNonNull(embeddedFdbSyncInterval, "embeddedFdbSyncInterval");
        Objects.requireNonNull(metadataRoot, "metadataRoot");
        Objects.requireNonNull(storage, "storage");
        Objects.requireNonNull(objectStore, "objectStore");
        if (metadataRoot.isBlank()) {
            throw new IllegalArgumentException("metadataRoot must not be blank");
        }
    }

    /**
     * Reads the {@code nereus*} keys from {@code conf.getProperties()} (every raw broker.conf key is there);
     * absent or empty keys take their defaults, some of which come from the broker's own settings.
     *
     * @throws IllegalArgumentException naming the key, the bad value and what is allowed, for the first invalid
     *         value; or naming every unknown {@code nereus*} key (a typo must not pass silently)
     */
    public static NereusConfig from(ServiceConfiguration conf) {
        Objects.requireNonNull(conf, "conf");
        Map<String, String> raw = nereusEntries(conf.getProperties());
        rejectUnknown(raw);

        Optional<Path> clusterFile = get(FDB_CLUSTER_FILE, raw, conf).value();
        Path embeddedDir = get(EMBEDDED_FDB_DIR, raw, conf).value();
        Duration syncInterval = Duration.ofMillis(get(EMBEDDED_FDB_SYNC_INTERVAL_MILLIS, raw, conf).value());
        String root = get(METADATA_ROOT, raw, conf).value();

        Setting<Integer> ensemble = get(WAL_ENSEMBLE_SIZE, raw, conf);
        Setting<Integer> write = get(WAL_WRITE_QUORUM, raw, conf);
        Setting<Integer> ack = get(WAL_ACK_QUORUM, raw, conf);
        requireAtMost(write, ensemble);
        requireAtMost(ack, write);
        Setting<Integer> flushBytes = get(WAL_FLUSH_BYTES, raw, conf);
        Setting<Integer> maxBatchBytes = get(WAL_MAX_BATCH_BYTES, raw, conf);
        long maxMessageSize = conf.getMaxMessageSize();
        if (maxBatchBytes.value() < maxMessageSize + NereusConfigKeys.ENTRY_ALLOWANCE_BYTES) {
            throw maxBatchBytes.invalid(">= the broker's maxMessageSize (" + maxMessageSize + ") + "
                    + NereusConfigKeys.ENTRY_ALLOWANCE_BYTES + ", so that every message the broker accepts fits in "
                    + "one WAL batch");
        }
        if (maxBatchBytes.value() > maxMessageSize + NereusConfigKeys.BATCH_ALLOWANCE_BYTES) {
            throw maxBatchBytes.invalid("<= the broker's maxMessageSize (" + maxMessageSize + ") + "
                    + NereusConfigKeys.BATCH_ALLOWANCE_BYTES + ", so that every WAL batch fits in the BookKeeper "
                    + "frame Pulsar sizes for maxMessageSize (maxMessageSize + 10 KiB)");
        }
        requireAtMost(flushBytes, maxBatchBytes);

        long flushDelayMicros = get(WAL_FLUSH_DELAY_MICROS, raw, conf).value();
        int maxInFlight = get(WAL_MAX_IN_FLIGHT_BATCHES, raw, conf).value();
        int flushBelowBatches = get(WAL_FLUSH_BELOW_BATCHES, raw, conf).value();
        long sliceMaxBytes = get(WAL_SLICE_MAX_BYTES, raw, conf).value();
        long sliceMaxAgeSeconds = get(WAL_SLICE_MAX_AGE_SECONDS, raw, conf).value();
        int commitMaxBatches = get(WAL_COMMIT_MAX_BATCHES, raw, conf).value();
        int commitMaxAppends = get(WAL_COMMIT_MAX_APPENDS, raw, conf).value();
        long writerLeaseSeconds = get(WAL_WRITER_LEASE_SECONDS, raw, conf).value();
        long recoveryIntervalSeconds = get(WAL_RECOVERY_INTERVAL_SECONDS, raw, conf).value();
        long tailCacheBytes = get(TAIL_CACHE_BYTES, raw, conf).value();
        int cachedBatches = get(READ_CACHED_BATCHES, raw, conf).value();
        int cachedResolutions = get(READ_CACHED_RESOLUTIONS, raw, conf).value();
        int repairMaxBatches = get(REPAIR_MAX_BATCHES, raw, conf).value();

        // every key resolved (and refused alone, naming itself) before the configurations are built
        boolean flushWhenIdle = get(WAL_FLUSH_WHEN_IDLE, raw, conf).value();
        boolean materializerEnabled = get(MATERIALIZER_ENABLED, raw, conf).value();
        long objectTargetBytes = get(OBJECT_TARGET_BYTES, raw, conf).value();
        int objectBlockBytes = get(OBJECT_BLOCK_BYTES, raw, conf).value();
        long materializerIntervalSeconds = get(MATERIALIZER_INTERVAL_SECONDS, raw, conf).value();
        long materializerMaxBytesPerSecond = get(MATERIALIZER_MAX_BYTES_PER_SECOND, raw, conf).value();
        int objectMergeMinObjects = get(OBJECT_MERGE_MIN_OBJECTS, raw, conf).value();
        long objectBlockCacheBytes = get(OBJECT_BLOCK_CACHE_BYTES, raw, conf).value();
        int objectReadAheadBlocks = get(OBJECT_READ_AHEAD_BLOCKS, raw, conf).value();
        long walMirrorBytes = get(WAL_MIRROR_BYTES, raw, conf).value();
        long walMirrorStagingBytes = get(WAL_MIRROR_STAGING_BYTES, raw, conf).value();
        long collectorIntervalSeconds = get(COLLECTOR_INTERVAL_SECONDS, raw, conf).value();
        long walDeleteGraceSeconds = get(WAL_DELETE_GRACE_SECONDS, raw, conf).value();
        long objectDeleteGraceSeconds = get(OBJECT_DELETE_GRACE_SECONDS, raw, conf).value();
        StorageConfig storage;
        try {
            WalConfig wal = new WalConfig(flushBytes.value(), Duration.of(flushDelayMicros, ChronoUnit.MICROS),
                    maxBatchBytes.value(), maxInFlight, sliceMaxBytes, Duration.ofSeconds(sliceMaxAgeSeconds),
                    ensemble.value(), write.value(), ack.value(), new byte[0], commitMaxBatches, commitMaxAppends,
                    Duration.ofSeconds(writerLeaseSeconds), Duration.ofSeconds(recoveryIntervalSeconds),
                    flushWhenIdle, flushBelowBatches);
            MaterializerConfig materializer = new MaterializerConfig(materializerEnabled, objectTargetBytes,
                    objectBlockBytes, Duration.ofSeconds(materializerIntervalSeconds), materializerMaxBytesPerSecond,
                    objectMergeMinObjects, objectBlockCacheBytes, objectReadAheadBlocks, walMirrorBytes,
                    walMirrorStagingBytes);
            CollectorConfig collector = new CollectorConfig(Duration.ofSeconds(collectorIntervalSeconds),
                    Duration.ofSeconds(walDeleteGraceSeconds), Duration.ofSeconds(objectDeleteGraceSeconds));
            storage = new StorageConfig(wal, tailCacheBytes, cachedBatches, cachedResolutions, repairMaxBatches,
                    materializer, collector);
        } catch (IllegalArgumentException e) {
            // The per-key checks above cover WalConfig's and StorageConfig's; this reports a future rule they miss.
            throw new IllegalArgumentException("the nereusWal*, nereusRead*, nereusRepairMaxBatches, "
                    + "nereusTailCacheBytes, nereusMaterializer*, nereusObject*, nereusCollector* and "
                    + "nereusWalDeleteGraceSeconds settings are inconsistent: "
                    + e.getMessage(), e);
        }
        return new NereusConfig(clusterFile, embeddedDir, syncInterval, root, storage, objectStore(raw, conf));
    }

    /**
     * The object store settings. With {@code filesystem}, every {@code nereusS3*} key must keep its default (a
     * bucket set while the type was forgotten must not pass silently); with {@code s3}, {@code nereusObjectStoreDir}
     * and {@code nereusObjectStoreDirectIo}
     * must, the bucket is required and the two credential keys go together.
     */
    private static ObjectStoreConfig objectStore(Map<String, String> raw, ServiceConfiguration conf) {
        String type = get(OBJECT_STORE_TYPE, raw, conf).value();
        Setting<Path> dir = get(OBJECT_STORE_DIR, raw, conf);
        Setting<Boolean> directIo = get(OBJECT_STORE_DIRECT_IO, raw, conf);
        List<Setting<?>> s3 = new ArrayList<>();
        for (ConfigKey<?> key : NereusConfigKeys.S3_KEYS) {
            s3.add(get(key, raw, conf));
        }
        if (type.equals(NereusConfigKeys.FILESYSTEM)) {
            for (Setting<?> s : s3) {
                requireDefault(s, conf, NereusConfigKeys.S3);
            }
            return new ObjectStoreConfig.Filesystem(dir.value(), ObjectStoreConfig.Filesystem.DEFAULT_IO_THREADS,
                    directIo.value());
        }
        requireDefault(dir, conf, NereusConfigKeys.FILESYSTEM);
        requireDefault(directIo, conf, NereusConfigKeys.FILESYSTEM);
        Setting<Optional<String>> bucket = get(S3_BUCKET, raw, conf);
        Setting<Optional<String>> accessKey = get(S3_ACCESS_KEY, raw, conf);
        Setting<Optional<String>> secretKey = get(S3_SECRET_KEY, raw, conf);
        if (bucket.value().isEmpty()) {
            throw bucket.invalid("set when " + OBJECT_STORE_TYPE.name() + "=" + NereusConfigKeys.S3);
        }
        if (accessKey.value().isPresent() != secretKey.value().isPresent()) {
            Setting<Optional<String>> unset = accessKey.value().isEmpty() ? accessKey : secretKey;
            Setting<Optional<String>> set = unset == accessKey ? secretKey : accessKey;
            throw unset.invalid("set when " + set.key().name() + " is set");
        }
        Optional<S3Credentials> credentials = accessKey.value()
                .map(a -> new S3Credentials(a, secretKey.value().orElseThrow()));
        return new ObjectStoreConfig.S3(bucket.value().get(), get(S3_PREFIX, raw, conf).value(),
                get(S3_ENDPOINT, raw, conf).value(), get(S3_REGION, raw, conf).value(),
                get(S3_PATH_STYLE, raw, conf).value(), credentials, get(S3_PART_BYTES, raw, conf).value());
    }

    private static void requireDefault(Setting<?> s, ServiceConfiguration conf, String type) {
        if (!s.isDefault(conf)) {
            throw s.invalid("the default (" + s.key().defaultDoc() + ") unless " + OBJECT_STORE_TYPE.name() + "="
                    + type);
        }
    }

    /** The settings table, in documentation order. */
    public static List<ConfigKey<?>> keys() {
        return NereusConfigKeys.ALL;
    }

    /** The FoundationDB directory path holding this cluster's metadata: {@code ("nereus", metadataRoot)}. */
    public List<String> metadataDirectory() {
        return List.of(DIRECTORY_PREFIX, metadataRoot);
    }

    private static Map<String, String> nereusEntries(Properties props) {
        Map<String, String> out = new TreeMap<>();
        if (props == null) {
            return out;
        }
        for (Map.Entry<Object, Object> e : props.entrySet()) {
            String key = String.valueOf(e.getKey());
            if (key.regionMatches(true, 0, ConfigKey.PREFIX, 0, ConfigKey.PREFIX.length())) {
                out.put(key, e.getValue() == null ? "" : String.valueOf(e.getValue()));
            }
        }
        return out;
    }

    private static void rejectUnknown(Map<String, String> raw) {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> e : raw.entrySet()) {
            if (keys().stream().noneMatch(k -> k.name().equals(e.getKey()))) {
                Optional<String> closest = closest(e.getKey());
                problems.add(e.getKey() + "=" + shownUnknown(e.getKey(), closest, e.getValue().trim())
                        + ": not a Nereus key" + closest.map(k -> " (did you mean " + k + "?)").orElse(""));
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems) + ". Known keys: "
                    + keys().stream().map(ConfigKey::name).collect(Collectors.joining(", ")));
        }
    }

    /** An unknown key's value as messages show it: hidden when the key looks like a misspelt secret. */
    private static String shownUnknown(String key, Optional<String> closest, String value) {
        boolean secret = key.toLowerCase(Locale.ROOT).contains("secret") || closest.flatMap(c -> keys().stream()
                .filter(k -> k.name().equals(c)).findFirst()).map(k -> k.type().secret()).orElse(false);
        return secret && !value.isEmpty() ? ConfigKey.HIDDEN : value;
    }

    /** The known key nearest to {@code unknown} (same letters ignoring case, or at most 3 edits away). */
    private static Optional<String> closest(String unknown) {
        String u = unknown.toLowerCase(Locale.ROOT);
        String best = null;
        int bestDistance = 4;
        for (ConfigKey<?> k : keys()) {
            int d = editDistance(u, k.name().toLowerCase(Locale.ROOT));
            if (d < bestDistance) {
                best = k.name();
                bestDistance = d;
            }
        }
        return Optional.ofNullable(best);
    }

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int subst = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(subst, Math.min(prev[j], cur[j - 1]) + 1);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    private static <T> Setting<T> get(ConfigKey<T> key, Map<String, String> raw, ServiceConfiguration conf) {
        return key.resolve(Optional.ofNullable(raw.get(key.name())), conf);
    }

    private static void requireAtMost(Setting<Integer> small, Setting<Integer> large) {
        if (small.value() > large.value()) {
            throw small.invalid("<= " + large.describe());
        }
    }
}
