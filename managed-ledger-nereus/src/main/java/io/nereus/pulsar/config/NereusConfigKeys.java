package io.nereus.pulsar.config;

import io.nereus.generation.CollectorConfig;
import io.nereus.generation.MaterializerConfig;
import io.nereus.object.ObjectStoreConfig;
import io.nereus.stream.StorageConfig;
import io.nereus.wal.SliceMirrors;
import io.nereus.wal.WalConfig;
import java.net.URI;
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

    /** Largest sync interval of the embedded engine: a minute. */
    static final long MAX_SYNC_INTERVAL_MILLIS = 60_000;

    public static final ConfigKey<Long> EMBEDDED_FDB_SYNC_INTERVAL_MILLIS = new ConfigKey<>(
            "nereusEmbeddedFdbSyncIntervalMillis", ConfigType.LONG, NereusConfigKeys::defaultSyncIntervalMillis,
            "the broker's journalSyncData: 1000 when it is false, else 0", "0 to " + MAX_SYNC_INTERVAL_MILLIS,
            v -> v >= 0 && v <= MAX_SYNC_INTERVAL_MILLIS,
            "How the embedded metadata engine makes a commit durable. 0: fsynced before it is acknowledged (with "
                    + "every commit that arrived meanwhile). Above 0: acknowledged once written to the operating "
                    + "system, so a crash of the broker process loses nothing, and fsynced in the background every "
                    + "this many milliseconds (no commit waits for it), so an OS crash or power loss may lose the last "
                    + "interval's commits, as the standalone's bookie with journalSyncData=false may lose the entries "
                    + "they point at. Match it to the bookies' durability. A real FoundationDB cluster "
                    + "(nereusFdbClusterFile) ignores it.");

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
            "While the WAL is busy, a non-empty WAL batch is sealed this many microseconds after its first entry "
                    + "(unless it filled first); see nereusWalFlushWhenIdle for the batches sealed at once.");

    public static final ConfigKey<Boolean> WAL_FLUSH_WHEN_IDLE = new ConfigKey<>("nereusWalFlushWhenIdle",
            ConfigType.BOOLEAN, c -> WAL.flushWhenIdle(), Boolean.toString(WAL.flushWhenIdle()), "true or false",
            v -> true,
            "Group commit: a WAL batch is sealed at once when its first entry finds the WAL idle, or fewer "
                    + "than nereusWalFlushBelowBatches batches being written or committed and no metadata commit "
                    + "running, and the moment that holds again. false: every batch waits for nereusWalFlushBytes or "
                    + "nereusWalFlushDelayMicros (fewer, larger BookKeeper entries under light load, higher latency).");

    public static final ConfigKey<Integer> WAL_FLUSH_BELOW_BATCHES = intKey("nereusWalFlushBelowBatches",
            WAL.flushBelowBatches(), "> 0", v -> v > 0,
            "With nereusWalFlushWhenIdle, the number of WAL batches being written or committed below which a "
                    + "batch is sealed at once while no metadata commit runs (an idle WAL seals it in any case). 1: "
                    + "only when the WAL is idle, so every entry that finds it busy also waits for the batch before it "
                    + "to commit; more lets that many batches overlap while they wait for BookKeeper, so under light "
                    + "load an entry waits for its own BookKeeper write and commit only (more, smaller BookKeeper "
                    + "entries).");

    /** Room above the broker's maxMessageSize for what the broker adds to a message (its entry metadata). */
    public static final int ENTRY_ALLOWANCE_BYTES = 1024;

    /**
     * Room above the broker's maxMessageSize a WAL batch may take: Pulsar sizes BookKeeper's frames for
     * maxMessageSize plus 10 KiB, and a batch needs a few bytes of its own beside its payload.
     */
    public static final int BATCH_ALLOWANCE_BYTES = 8192;

    public static final ConfigKey<Integer> WAL_MAX_BATCH_BYTES = new ConfigKey<>("nereusWalMaxBatchBytes",
            ConfigType.INT, c -> c.getMaxMessageSize() + ENTRY_ALLOWANCE_BYTES, "the broker's maxMessageSize + "
                    + ENTRY_ALLOWANCE_BYTES, "maxMessageSize + " + ENTRY_ALLOWANCE_BYTES + " to + " + BATCH_ALLOWANCE_BYTES,
            v -> v > 0,
            "Largest WAL batch payload (one BookKeeper entry). Every Pulsar entry the broker accepts (a message of "
                    + "up to maxMessageSize with the broker's entry metadata) must fit in one batch, and a batch must "
                    + "fit in the BookKeeper frame Pulsar sizes for maxMessageSize (maxMessageSize + 10 KiB).");

    public static final ConfigKey<Integer> WAL_MAX_IN_FLIGHT_BATCHES = intKey("nereusWalMaxInFlightBatches",
            WAL.maxInFlightBatches(), "> 0", v -> v > 0,
            "WAL batches written to BookKeeper and not yet acknowledged, at most.");

    public static final ConfigKey<Long> WAL_SLICE_MAX_BYTES = longKey("nereusWalSliceMaxBytes",
            WAL.sliceMaxBytes(), "> 0", v -> v > 0,
            "A WAL slice (BookKeeper ledger) is closed and a new one started after this many bytes.");

    public static final ConfigKey<Long> WAL_SLICE_MAX_AGE_SECONDS = longKey("nereusWalSliceMaxAgeSeconds",
            WAL.sliceMaxAge().toSeconds(), "1 to " + MAX_SECONDS, v -> v >= 1 && v <= MAX_SECONDS,
            "A WAL slice is closed and a new one started after this many seconds, an idle one too (within a third "
                    + "of nereusWalWriterLeaseSeconds), so that its data is materialized into objects.");

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
            "Payload bytes of recently committed entries kept in memory for tailing readers (0: none). A topic's added "
                    + "entries are kept only while one of its cursors is active, as Pulsar's managed ledger cache "
                    + "keeps them.");

    public static final ConfigKey<Integer> READ_CACHED_BATCHES = intKey("nereusReadCachedBatches",
            STORAGE.cachedBatches(), ">= 1", v -> v >= 1, "Decoded WAL batches kept in memory for readers.");

    public static final ConfigKey<Integer> READ_CACHED_RESOLUTIONS = intKey("nereusReadCachedResolutions",
            STORAGE.cachedResolutions(), ">= 1", v -> v >= 1,
            "Resolved index records (offset ranges to their WAL location) kept in memory for readers.");

    public static final ConfigKey<Integer> REPAIR_MAX_BATCHES = intKey("nereusRepairMaxBatches",
            STORAGE.repairMaxEntries(), ">= 1", v -> v >= 1,
            "WAL batches one generation-0 repair (rebuilding a missing index record from WAL evidence) may read.");

    /** The values of {@link #OBJECT_STORE_TYPE}. */
    public static final String FILESYSTEM = "filesystem";
    public static final String S3 = "s3";

    public static final ConfigKey<String> OBJECT_STORE_TYPE = new ConfigKey<>("nereusObjectStoreType",
            ConfigType.STRING, c -> FILESYSTEM, FILESYSTEM, FILESYSTEM + " or " + S3,
            t -> t.equals(FILESYSTEM) || t.equals(S3),
            "Where read-optimized objects (higher generations) are kept: filesystem, a local directory "
                    + "(nereusObjectStoreDir) for a single broker, or s3, a bucket of AWS S3 or an S3-compatible "
                    + "server shared by the cluster's brokers (the nereusS3* keys).");

    public static final ConfigKey<Path> OBJECT_STORE_DIR = new ConfigKey<>("nereusObjectStoreDir",
            ConfigType.PATH, c -> Path.of("data", "nereus", "objects"), "data/nereus/objects",
            "a directory path, not an existing file", p -> !Files.isRegularFile(p),
            "Directory of the filesystem object store, beside nereusEmbeddedFdbDir; a relative path is resolved "
                    + "against the broker's working directory. One broker at a time uses it (it is locked while "
                    + "open). Only with nereusObjectStoreType=filesystem.");

    public static final ConfigKey<Boolean> OBJECT_STORE_DIRECT_IO = new ConfigKey<>("nereusObjectStoreDirectIo",
            ConfigType.BOOLEAN, c -> true, "true", "true or false", v -> true,
            "Write and read the filesystem object store's files with direct I/O (O_DIRECT), past the operating "
                    + "system's page cache, where their filesystem allows it (checked at start; where it does not, "
                    + "the log says so and the page cache is used). Objects are written once and read through "
                    + "nereusObjectBlockCacheBytes, so the page cache mostly doubles them and costs a copy of every "
                    + "byte. false: through the page cache. Only with nereusObjectStoreType=filesystem.");

    public static final ConfigKey<Optional<String>> S3_BUCKET = new ConfigKey<>("nereusS3Bucket",
            ConfigType.OPTIONAL_STRING, c -> Optional.empty(), "empty",
            "3 to 63 of a-z 0-9 . - with a letter or digit at both ends",
            b -> b.isEmpty() || ObjectStoreConfig.S3.validBucket(b.get()),
            "The S3 bucket of the object store; it must exist. Required with nereusObjectStoreType=s3.");

    public static final ConfigKey<String> S3_PREFIX = new ConfigKey<>("nereusS3Prefix",
            ConfigType.STRING, c -> "", "empty",
            "segments of a-z 0-9 - _ . joined by /, at most " + ObjectStoreConfig.S3.MAX_PREFIX_LENGTH
                    + " characters",
            ObjectStoreConfig.S3::validPrefix,
            "Key prefix of this cluster's objects in the bucket: the object n is the key prefix/n (n alone when "
                    + "empty). No leading or trailing /, and no segment starting with a dot. Clusters sharing a "
                    + "bucket use different prefixes.");

    public static final ConfigKey<Optional<URI>> S3_ENDPOINT = new ConfigKey<>("nereusS3Endpoint",
            ConfigType.OPTIONAL_URL, c -> Optional.empty(), "empty", "an http:// or https:// URL with a host",
            u -> u.isEmpty() || ObjectStoreConfig.S3.validEndpoint(u.get()),
            "URL of an S3-compatible server, such as http://127.0.0.1:9000. Empty: AWS S3's endpoint of "
                    + "nereusS3Region.");

    public static final ConfigKey<String> S3_REGION = new ConfigKey<>("nereusS3Region",
            ConfigType.STRING, c -> "us-east-1", "us-east-1", "lowercase letters and digits in words joined by -",
            ObjectStoreConfig.S3::validRegion,
            "Region the S3 requests are signed for: the bucket's region on AWS S3; S3-compatible servers mostly "
                    + "accept any.");

    public static final ConfigKey<Boolean> S3_PATH_STYLE = new ConfigKey<>("nereusS3PathStyle",
            ConfigType.BOOLEAN, c -> false, "false", "true or false", v -> true,
            "Address the bucket in the URL path (endpoint/bucket/key), as most S3-compatible servers need, "
                    + "instead of in the host name (bucket.endpoint/key), as AWS S3 does.");

    public static final ConfigKey<Optional<String>> S3_ACCESS_KEY = new ConfigKey<>("nereusS3AccessKey",
            ConfigType.OPTIONAL_STRING, c -> Optional.empty(), "empty",
            "an access key id, set together with nereusS3SecretKey", k -> k.isEmpty() || !k.get().isBlank(),
            "Access key id of static S3 credentials. Empty, with nereusS3SecretKey empty too: the AWS SDK's "
                    + "default credentials chain (the AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY environment "
                    + "variables, Java system properties, the ~/.aws profile files, a container or instance role).");

    public static final ConfigKey<Optional<String>> S3_SECRET_KEY = new ConfigKey<>("nereusS3SecretKey",
            ConfigType.SECRET, c -> Optional.empty(), "empty",
            "a secret access key, set together with nereusS3AccessKey", k -> k.isEmpty() || !k.get().isBlank(),
            "Secret access key of static S3 credentials; messages never show it. Keep the file readable by the "
                    + "broker's user only, or leave both keys empty and use the default chain.");

    public static final ConfigKey<Long> S3_PART_BYTES = longKey("nereusS3PartBytes",
            ObjectStoreConfig.S3.DEFAULT_PART_BYTES,
            ObjectStoreConfig.S3.MIN_PART_BYTES + " to " + ObjectStoreConfig.S3.MAX_PART_BYTES,
            v -> v >= ObjectStoreConfig.S3.MIN_PART_BYTES && v <= ObjectStoreConfig.S3.MAX_PART_BYTES,
            "An object larger than this is uploaded to S3 in parts of this many bytes (a multipart upload of at "
                    + "most 10000 parts).");

    private static final MaterializerConfig MATERIALIZER = MaterializerConfig.defaults();

    public static final ConfigKey<Boolean> MATERIALIZER_ENABLED = new ConfigKey<>("nereusMaterializerEnabled",
            ConfigType.BOOLEAN, c -> MATERIALIZER.enabled(), Boolean.toString(MATERIALIZER.enabled()),
            "true or false", v -> true,
            "Rewrite the data of sealed WAL slices into per-topic objects (higher generations) in the background. "
                    + "Off: only offload requests (the admin API's trigger-offload) materialize.");

    public static final ConfigKey<Long> OBJECT_TARGET_BYTES = longKey("nereusObjectTargetBytes",
            MATERIALIZER.objectTargetBytes(), "1 to " + MaterializerConfig.MAX_OBJECT_TARGET_BYTES,
            v -> v >= 1 && v <= MaterializerConfig.MAX_OBJECT_TARGET_BYTES,
            "Payload bytes one object holds at most. A topic's objects smaller than a quarter of this are merged "
                    + "(nereusObjectMergeMinObjects at a time) into a larger one.");

    public static final ConfigKey<Integer> OBJECT_BLOCK_BYTES = intKey("nereusObjectBlockBytes",
            MATERIALIZER.blockBytes(), ">= 1", v -> v >= 1,
            "Bytes of one block of an object: the unit a read fetches and checks (one entry larger than this "
                    + "makes a block of its own).");

    public static final ConfigKey<Long> MATERIALIZER_INTERVAL_SECONDS = longKey("nereusMaterializerIntervalSeconds",
            MATERIALIZER.interval().toSeconds(), "1 to " + MAX_RECOVERY_SECONDS,
            v -> v >= 1 && v <= MAX_RECOVERY_SECONDS,
            "Pause between the materializer's passes over the sealed WAL slices, after a pass that found nothing to "
                    + "copy (a pass that copied slices is followed by the next at once). A slice's data is in objects "
                    + "at most about this long after the slice seals (nereusWalSliceMaxBytes, "
                    + "nereusWalSliceMaxAgeSeconds), when the materializer keeps up.");

    public static final ConfigKey<Long> MATERIALIZER_MAX_BYTES_PER_SECOND = longKey(
            "nereusMaterializerMaxBytesPerSecond", MATERIALIZER.maxBytesPerSecond(), ">= 1", v -> v >= 1,
            "Payload bytes per second the materializer reads from WAL slices at most, and writes as objects at most, so it never starves appends.");

    public static final ConfigKey<Integer> OBJECT_MERGE_MIN_OBJECTS = intKey("nereusObjectMergeMinObjects",
            MATERIALIZER.mergeMinObjects(), ">= 2", v -> v >= 2,
            "Consecutive small objects of one topic merged into one; bounds the number of objects per topic.");

    public static final ConfigKey<Long> OBJECT_BLOCK_CACHE_BYTES = longKey("nereusObjectBlockCacheBytes",
            MATERIALIZER.blockCacheBytes(), ">= 0", v -> v >= 0,
            "Bytes of object blocks kept in memory for readers (0: none). Blocks are read into pooled direct "
                    + "memory, which counts against the broker's -XX:MaxDirectMemorySize, as BookKeeper's read "
                    + "buffers do.");

    public static final ConfigKey<Integer> OBJECT_READ_AHEAD_BLOCKS = intKey("nereusObjectReadAheadBlocks",
            MATERIALIZER.readAheadBlocks(), "0 to 64", v -> v >= 0 && v <= 64,
            "Blocks of an object (nereusObjectBlockBytes each) fetched into the block cache ahead of a "
                    + "reader that goes through the object in order, such as a subscription catching up from "
                    + "objects, beyond the blocks of its current read (which are fetched at once), so that its next "
                    + "read does not wait for the object store. Blocks fetched ahead take room in "
                    + "nereusObjectBlockCacheBytes, at most half of it until they are read (beyond that readers "
                    + "fetch blocks as they reach them): it should hold a read's blocks (the broker's "
                    + "dispatcherMaxReadSizeBytes) and this many more for each reader catching up at the same time. "
                    + "0: nothing is fetched ahead, and a read fetches its blocks one after another (so too when "
                    + "nereusObjectBlockCacheBytes is 0).");

    public static final ConfigKey<Long> WAL_MIRROR_BYTES = longKey("nereusWalMirrorBytes",
            MATERIALIZER.mirrorBytes(), ">= 0", v -> v >= 0,
            "Bytes of local files (in the JVM's temporary directory, java.io.tmpdir, written with direct I/O) that "
                    + "hold copies of this broker's newest WAL slices until the materializer has copied them into "
                    + "objects, so that it reads them from there instead of from the bookies. A slice that does not "
                    + "fit, or whose mirror fails, is read from BookKeeper; the directory's filesystem must allow "
                    + "direct I/O (checked at start; where it does not, the log says so and nothing is mirrored). "
                    + "0: none. Only with nereusMaterializerEnabled=true.");

    public static final ConfigKey<Long> WAL_MIRROR_STAGING_BYTES = longKey("nereusWalMirrorStagingBytes",
            MATERIALIZER.mirrorStagingBytes(), "a positive multiple of " + SliceMirrors.STAGING_BYTES,
            SliceMirrors::validStagingBytes,
            "Direct memory (counted against the broker's -XX:MaxDirectMemorySize) that the WAL slice mirrors' writes "
                    + "go through on their way to the disk, in buffers of 1 MiB made as they are needed: while the "
                    + "disk is slower than the WAL (the bookie's own writes keep it busy), batches wait here, and "
                    + "once every buffer waits the mirror skips batches, which the materializer then reads from the "
                    + "bookies (pulsar.storage.nereus.wal.mirror.skipped.count). 128 MiB is about 0.4 s of a WAL "
                    + "written at 300 MB/s. Only with nereusWalMirrorBytes above 0.");

    private static final CollectorConfig COLLECTOR = CollectorConfig.defaults();

    public static final ConfigKey<Long> COLLECTOR_INTERVAL_SECONDS = longKey("nereusCollectorIntervalSeconds",
            COLLECTOR.interval().toSeconds(), "1 to " + MAX_RECOVERY_SECONDS, v -> v >= 1 && v <= MAX_RECOVERY_SECONDS,
            "Pause between the garbage collector's passes: WAL ledgers deleted, retired and unreferenced objects "
                    + "deleted, deleted topics purged, and the metadata census logged.");

    public static final ConfigKey<Long> WAL_DELETE_GRACE_SECONDS = longKey("nereusWalDeleteGraceSeconds",
            COLLECTOR.walDeleteGrace().toSeconds(), "0 to " + MAX_RECOVERY_SECONDS,
            v -> v >= 0 && v <= MAX_RECOVERY_SECONDS,
            "How long a WAL slice whose data is all in objects, trimmed or deleted stays before its BookKeeper "
                    + "ledger is deleted, for reads in flight.");

    public static final ConfigKey<Long> OBJECT_DELETE_GRACE_SECONDS = longKey("nereusObjectDeleteGraceSeconds",
            COLLECTOR.objectDeleteGrace().toSeconds(), "2 to " + MAX_RECOVERY_SECONDS * 24,
            v -> v >= 2 && v <= MAX_RECOVERY_SECONDS * 24,
            "How long an object that was merged or trimmed away, or never published, stays before it is deleted; "
                    + "the materializer gives up an object it could not publish within half of this.");

    /** The keys that only mean something with {@code nereusObjectStoreType=s3}. */
    static final List<ConfigKey<?>> S3_KEYS = List.of(S3_BUCKET, S3_PREFIX, S3_ENDPOINT, S3_REGION, S3_PATH_STYLE,
            S3_ACCESS_KEY, S3_SECRET_KEY, S3_PART_BYTES);

    /** Every key, in documentation order. */
    static final List<ConfigKey<?>> ALL = List.of(FDB_CLUSTER_FILE, EMBEDDED_FDB_DIR,
            EMBEDDED_FDB_SYNC_INTERVAL_MILLIS, METADATA_ROOT,
            WAL_ENSEMBLE_SIZE, WAL_WRITE_QUORUM, WAL_ACK_QUORUM, WAL_FLUSH_BYTES, WAL_FLUSH_DELAY_MICROS, WAL_FLUSH_WHEN_IDLE,
            WAL_FLUSH_BELOW_BATCHES,
            WAL_MAX_BATCH_BYTES, WAL_MAX_IN_FLIGHT_BATCHES, WAL_SLICE_MAX_BYTES, WAL_SLICE_MAX_AGE_SECONDS,
            WAL_COMMIT_MAX_BATCHES, WAL_COMMIT_MAX_APPENDS, WAL_WRITER_LEASE_SECONDS, WAL_RECOVERY_INTERVAL_SECONDS,
            TAIL_CACHE_BYTES, READ_CACHED_BATCHES, READ_CACHED_RESOLUTIONS, REPAIR_MAX_BATCHES, OBJECT_STORE_TYPE,
            OBJECT_STORE_DIR, OBJECT_STORE_DIRECT_IO, S3_BUCKET, S3_PREFIX, S3_ENDPOINT, S3_REGION, S3_PATH_STYLE,
            S3_ACCESS_KEY, S3_SECRET_KEY, S3_PART_BYTES, MATERIALIZER_ENABLED, OBJECT_TARGET_BYTES, OBJECT_BLOCK_BYTES,
            MATERIALIZER_INTERVAL_SECONDS, MATERIALIZER_MAX_BYTES_PER_SECOND, OBJECT_MERGE_MIN_OBJECTS,
            OBJECT_BLOCK_CACHE_BYTES, OBJECT_READ_AHEAD_BLOCKS, WAL_MIRROR_BYTES, WAL_MIRROR_STAGING_BYTES,
            COLLECTOR_INTERVAL_SECONDS,
            WAL_DELETE_GRACE_SECONDS, OBJECT_DELETE_GRACE_SECONDS);

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

    /**
     * The standalone's in-process bookie takes {@code journalSyncData} from the broker's own configuration file:
     * when it acknowledges before syncing, so may the metadata describing its entries.
     */
    private static long defaultSyncIntervalMillis(ServiceConfiguration c) {
        String journalSyncData = c.getProperties().getProperty("journalSyncData");
        return journalSyncData != null && journalSyncData.strip().equalsIgnoreCase("false") ? 1000 : 0;
    }

    private static boolean validRoot(String root) {
        return !root.isEmpty() && root.length() <= MAX_METADATA_ROOT_LENGTH
                && root.chars().noneMatch(Character::isISOControl) && root.strip().equals(root);
    }
}
