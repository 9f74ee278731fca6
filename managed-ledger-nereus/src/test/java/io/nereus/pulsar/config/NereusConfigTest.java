package io.nereus.pulsar.config;

import io.nereus.object.ObjectStoreConfig;
import io.nereus.object.S3Credentials;
import io.nereus.pulsar.NereusManagedLedgerStorage;
import io.nereus.stream.StorageConfig;
import io.nereus.wal.WalConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NereusConfigTest {

    /** A broker configuration with the given raw broker.conf lines (key, value, key, value, ...). */
    static ServiceConfiguration broker(String... keyValues) {
        ServiceConfiguration conf = new ServiceConfiguration();
        conf.setClusterName("cluster-a");
        Properties p = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            p.setProperty(keyValues[i], keyValues[i + 1]);
        }
        conf.setProperties(p);
        return conf;
    }

    @Test
    void from_noNereusKeys_returnsDefaults() {
        ServiceConfiguration conf = broker("brokerServicePort", "6650");
        NereusConfig c = NereusConfig.from(conf);

        assertThat(c.fdbClusterFile()).isEmpty();
        assertThat(c.embeddedFdbDir()).isEqualTo(Path.of("data/nereus/metadata"));
        assertThat(c.embeddedFdbSyncInterval()).as("no journalSyncData=false: fsync every commit").isZero();
        assertThat(c.metadataRoot()).isEqualTo("cluster-a");
        assertThat(c.metadataDirectory()).containsExactly("nereus", "cluster-a");
        assertThat(c.objectStore()).isEqualTo(ObjectStoreConfig.Filesystem.of(Path.of("data/nereus/objects")));
        StorageConfig expected = StorageConfig.defaults().withWal(WalConfig.defaults().withQuorums(
                conf.getManagedLedgerDefaultEnsembleSize(), conf.getManagedLedgerDefaultWriteQuorum(),
                conf.getManagedLedgerDefaultAckQuorum()).withMaxBatchBytes(conf.getMaxMessageSize() + 1024));
        assertSameStorage(c.storage(), expected);
    }

    @Test
    void embeddedSyncInterval_followsTheStandalonesJournalSyncData_unlessSet() {
        assertThat(NereusConfig.from(broker("journalSyncData", "false")).embeddedFdbSyncInterval())
                .isEqualTo(Duration.ofSeconds(1));
        assertThat(NereusConfig.from(broker("journalSyncData", " FALSE ")).embeddedFdbSyncInterval())
                .isEqualTo(Duration.ofSeconds(1));
        assertThat(NereusConfig.from(broker("journalSyncData", "true")).embeddedFdbSyncInterval()).isZero();
        assertThat(NereusConfig.from(broker("journalSyncData", "false", "nereusEmbeddedFdbSyncIntervalMillis", "0"))
                .embeddedFdbSyncInterval()).isZero();
        assertThat(NereusConfig.from(broker("nereusEmbeddedFdbSyncIntervalMillis", "250")).embeddedFdbSyncInterval())
                .isEqualTo(Duration.ofMillis(250));
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusEmbeddedFdbSyncIntervalMillis", "60001")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nereusEmbeddedFdbSyncIntervalMillis=60001: must be 0 to 60000");
    }

    @Test
    void from_walQuorumsUnset_followBrokerManagedLedgerDefaults() {
        ServiceConfiguration conf = broker();
        conf.setManagedLedgerDefaultEnsembleSize(5);
        conf.setManagedLedgerDefaultWriteQuorum(3);
        conf.setManagedLedgerDefaultAckQuorum(2);

        WalConfig wal = NereusConfig.from(conf).storage().wal();

        assertThat(List.of(wal.ensembleSize(), wal.writeQuorum(), wal.ackQuorum())).containsExactly(5, 3, 2);
    }

    @Test
    void from_walQuorumsSet_overrideBrokerDefaults() {
        ServiceConfiguration conf = broker("nereusWalEnsembleSize", "3", "nereusWalWriteQuorum", "3",
                "nereusWalAckQuorum", "2");
        conf.setManagedLedgerDefaultEnsembleSize(1);
        conf.setManagedLedgerDefaultWriteQuorum(1);
        conf.setManagedLedgerDefaultAckQuorum(1);

        WalConfig wal = NereusConfig.from(conf).storage().wal();

        assertThat(List.of(wal.ensembleSize(), wal.writeQuorum(), wal.ackQuorum())).containsExactly(3, 3, 2);
    }

    @Test
    void from_emptyOrBlankValue_meansDefault() {
        NereusConfig c = NereusConfig.from(broker("nereusWalFlushBytes", "", "nereusMetadataRoot", "   ",
                "nereusEmbeddedFdbDir", ""));

        assertThat(c.storage().wal().flushBytes()).isEqualTo(WalConfig.defaults().flushBytes());
        assertThat(c.metadataRoot()).isEqualTo("cluster-a");
        assertThat(c.embeddedFdbDir()).isEqualTo(Path.of("data/nereus/metadata"));
    }

    @Test
    void from_valueWithSurroundingSpaces_isTrimmed() {
        NereusConfig c = NereusConfig.from(broker("nereusWalFlushBytes", " 1024 "));

        assertThat(c.storage().wal().flushBytes()).isEqualTo(1024);
    }

    static Stream<Arguments> everyKeyParsed() {
        return Stream.of(
                parsed("nereusEmbeddedFdbDir", "/var/lib/nereus/meta", c -> c.embeddedFdbDir(),
                        Path.of("/var/lib/nereus/meta")),
                parsed("nereusMetadataRoot", "prod-east", NereusConfig::metadataRoot, "prod-east"),
                parsed("nereusEmbeddedFdbSyncIntervalMillis", "5000", NereusConfig::embeddedFdbSyncInterval,
                        Duration.ofSeconds(5)),
                parsed("nereusWalEnsembleSize", "4", c -> c.storage().wal().ensembleSize(), 4),
                parsed("nereusWalFlushBytes", "65536", c -> c.storage().wal().flushBytes(), 65536),
                parsed("nereusWalFlushDelayMicros", "500", c -> c.storage().wal().flushDelay(),
                        Duration.ofNanos(500_000)),
                parsed("nereusWalFlushDelayMicros", "0", c -> c.storage().wal().flushDelay(), Duration.ZERO),
                parsed("nereusWalFlushWhenIdle", "false", c -> c.storage().wal().flushWhenIdle(), false),
                parsed("nereusWalFlushBelowBatches", "1", c -> c.storage().wal().flushBelowBatches(), 1),
                parsed("nereusWalMaxBatchBytes", "5246976", c -> c.storage().wal().maxBatchBytes(), 5246976),
                parsed("nereusWalMaxInFlightBatches", "3", c -> c.storage().wal().maxInFlightBatches(), 3),
                parsed("nereusWalSliceMaxBytes", "10737418240", c -> c.storage().wal().sliceMaxBytes(),
                        10_737_418_240L),
                parsed("nereusWalSliceMaxAgeSeconds", "90", c -> c.storage().wal().sliceMaxAge(),
                        Duration.ofSeconds(90)),
                parsed("nereusWalCommitMaxBatches", "1", c -> c.storage().wal().maxCoalescedBatches(), 1),
                parsed("nereusWalCommitMaxAppends", "16384", c -> c.storage().wal().maxCoalescedAppends(), 16384),
                parsed("nereusWalWriterLeaseSeconds", "90", c -> c.storage().wal().writerLease(), Duration.ofSeconds(90)),
                parsed("nereusWalRecoveryIntervalSeconds", "1", c -> c.storage().wal().recoveryInterval(),
                        Duration.ofSeconds(1)),
                parsed("nereusTailCacheBytes", "0", c -> c.storage().tailCacheBytes(), 0L),
                parsed("nereusReadCachedBatches", "7", c -> c.storage().cachedBatches(), 7),
                parsed("nereusReadCachedResolutions", "12345", c -> c.storage().cachedResolutions(), 12345),
                parsed("nereusRepairMaxBatches", "99", c -> c.storage().repairMaxEntries(), 99),
                parsed("nereusObjectStoreType", "filesystem", c -> c.objectStore().getClass(),
                        ObjectStoreConfig.Filesystem.class),
                parsed("nereusObjectStoreDir", "/var/lib/nereus/objects", c -> c.objectStore(),
                        ObjectStoreConfig.Filesystem.of(Path.of("/var/lib/nereus/objects"))),
                parsed("nereusObjectStoreDirectIo", "false", c -> ((ObjectStoreConfig.Filesystem) c.objectStore())
                        .directIo(), false),
                parsed("nereusMaterializerEnabled", "false", c -> c.storage().materializer().enabled(), false),
                parsed("nereusObjectTargetBytes", "1048576", c -> c.storage().materializer().objectTargetBytes(),
                        1_048_576L),
                parsed("nereusObjectBlockBytes", "4096", c -> c.storage().materializer().blockBytes(), 4096),
                parsed("nereusMaterializerIntervalSeconds", "5", c -> c.storage().materializer().interval(),
                        Duration.ofSeconds(5)),
                parsed("nereusMaterializerMaxBytesPerSecond", "1000",
                        c -> c.storage().materializer().maxBytesPerSecond(), 1000L),
                parsed("nereusObjectMergeMinObjects", "3", c -> c.storage().materializer().mergeMinObjects(), 3),
                parsed("nereusObjectBlockCacheBytes", "0", c -> c.storage().materializer().blockCacheBytes(), 0L),
                parsed("nereusObjectReadAheadBlocks", "5", c -> c.storage().materializer().readAheadBlocks(), 5),
                parsed("nereusWalMirrorBytes", "0", c -> c.storage().materializer().mirrorBytes(), 0L),
                parsed("nereusWalMirrorStagingBytes", "2097152",
                        c -> c.storage().materializer().mirrorStagingBytes(), 2_097_152L),
                parsed("nereusCollectorIntervalSeconds", "7", c -> c.storage().collector().interval(),
                        Duration.ofSeconds(7)),
                parsed("nereusWalDeleteGraceSeconds", "0", c -> c.storage().collector().walDeleteGrace(),
                        Duration.ZERO),
                parsed("nereusObjectDeleteGraceSeconds", "90", c -> c.storage().collector().objectDeleteGrace(),
                        Duration.ofSeconds(90)));
    }

    /** With nereusObjectStoreType=s3 and a bucket, each S3 key lands in its field of the S3 configuration. */
    static Stream<Arguments> everyS3KeyParsed() {
        return Stream.of(
                s3("nereusObjectStoreType", "s3", ObjectStoreConfig.S3::bucket, "bucket-1"),
                s3("nereusS3Bucket", "other.bucket", ObjectStoreConfig.S3::bucket, "other.bucket"),
                s3("nereusS3Prefix", "nereus/prod", ObjectStoreConfig.S3::prefix, "nereus/prod"),
                s3("nereusS3Endpoint", "http://127.0.0.1:9000", ObjectStoreConfig.S3::endpoint,
                        Optional.of(URI.create("http://127.0.0.1:9000"))),
                s3("nereusS3Region", "eu-central-1", ObjectStoreConfig.S3::region, "eu-central-1"),
                s3("nereusS3PathStyle", "TRUE", ObjectStoreConfig.S3::pathStyle, true),
                s3("nereusS3PathStyle", "false", ObjectStoreConfig.S3::pathStyle, false),
                s3("nereusS3PartBytes", "5242880", ObjectStoreConfig.S3::partBytes, 5_242_880L));
    }

    private static Arguments s3(String key, String text, Function<ObjectStoreConfig.S3, Object> read,
            Object expected) {
        return Arguments.of(key, text, read, expected);
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("everyS3KeyParsed")
    void from_s3KeySet_parsesIntoTheS3Config(String key, String text, Function<ObjectStoreConfig.S3, Object> read,
            Object expected) {
        ServiceConfiguration conf = broker("nereusObjectStoreType", "s3", "nereusS3Bucket", "bucket-1");
        conf.getProperties().setProperty(key, text);

        ObjectStoreConfig.S3 s3 = (ObjectStoreConfig.S3) NereusConfig.from(conf).objectStore();

        assertThat(read.apply(s3)).isEqualTo(expected);
    }

    @Test
    void from_s3Defaults_awsEndpointOfUsEast1_virtualHosted_defaultCredentialChain_8MiBParts() {
        ObjectStoreConfig.S3 s3 = (ObjectStoreConfig.S3) NereusConfig.from(broker("nereusObjectStoreType", "s3",
                "nereusS3Bucket", "bucket-1")).objectStore();

        assertThat(s3).isEqualTo(new ObjectStoreConfig.S3("bucket-1", "", Optional.empty(), "us-east-1", false,
                Optional.empty(), 8L << 20));
    }

    @Test
    void from_s3StaticKeys_becomeTheCredentials() {
        ObjectStoreConfig.S3 s3 = (ObjectStoreConfig.S3) NereusConfig.from(broker("nereusObjectStoreType", "s3",
                "nereusS3Bucket", "bucket-1", "nereusS3AccessKey", "AKIA1", "nereusS3SecretKey", "s3cr3t"))
                .objectStore();

        assertThat(s3.credentials()).contains(new S3Credentials("AKIA1", "s3cr3t"));
    }

    @Test
    void from_s3WithoutBucket_refusedNamingTheBucketKey() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusObjectStoreType", "s3")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusS3Bucket= (default: empty): must be set when nereusObjectStoreType=s3");
    }

    @Test
    void from_s3KeySetWhileTheStoreIsTheFilesystem_refusedNamingTheKey() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusS3Bucket", "bucket-1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusS3Bucket=bucket-1: must be the default (empty) unless nereusObjectStoreType=s3");
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusS3PathStyle", "true")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusS3PathStyle=true: must be the default (false) unless nereusObjectStoreType=s3");
    }

    @Test
    void from_s3KeysAtTheirDefaultsWithTheFilesystemStore_accepted() {
        NereusConfig c = NereusConfig.from(broker("nereusS3PathStyle", "false", "nereusS3Region", "us-east-1",
                "nereusS3PartBytes", "8388608"));

        assertThat(c.objectStore()).isInstanceOf(ObjectStoreConfig.Filesystem.class);
    }

    @Test
    void from_objectStoreDirectIoOffWhileTheStoreIsS3_refusedNamingTheKey() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusObjectStoreType", "s3", "nereusS3Bucket", "b-1",
                "nereusObjectStoreDirectIo", "false")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusObjectStoreDirectIo=false: must be the default (true) unless "
                        + "nereusObjectStoreType=filesystem");
    }

    @Test
    void from_objectStoreDirSetWhileTheStoreIsS3_refusedNamingTheKey() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusObjectStoreType", "s3", "nereusS3Bucket", "b-1",
                "nereusObjectStoreDir", "/srv/objects")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusObjectStoreDir=/srv/objects: must be the default (data/nereus/objects) unless "
                        + "nereusObjectStoreType=filesystem");
    }

    @Test
    void from_oneCredentialKeyWithoutTheOther_refusedNamingTheMissingOne() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusObjectStoreType", "s3", "nereusS3Bucket", "b-1",
                "nereusS3AccessKey", "AKIA1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusS3SecretKey= (default: empty): must be set when nereusS3AccessKey is set");
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusObjectStoreType", "s3", "nereusS3Bucket", "b-1",
                "nereusS3SecretKey", "s3cr3t")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusS3AccessKey= (default: empty): must be set when nereusS3SecretKey is set")
                .hasMessageNotContaining("s3cr3t");
    }

    @Test
    void messages_neverShowTheSecretKey() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusS3SecretKey", "s3cr3t")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusS3SecretKey=(hidden): must be the default (empty) unless nereusObjectStoreType=s3");
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusS3SecretKy", "s3cr3t")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("nereusS3SecretKy=(hidden): not a Nereus key (did you mean nereusS3SecretKey?)")
                .hasMessageNotContaining("s3cr3t");
        ServiceConfiguration conf = broker("nereusObjectStoreType", "s3", "nereusS3Bucket", "b-1",
                "nereusS3AccessKey", "AKIA1", "nereusS3SecretKey", "s3cr3t");
        assertThat(NereusConfig.from(conf).toString()).doesNotContain("s3cr3t");
    }

    private static Arguments parsed(String key, String text, Function<NereusConfig, Object> read, Object expected) {
        return Arguments.of(key, text, read, expected);
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("everyKeyParsed")
    void from_keySet_parsesIntoItsField(String key, String text, Function<NereusConfig, Object> read,
            Object expected) {
        NereusConfig c = NereusConfig.from(broker(key, text));

        assertThat(read.apply(c)).isEqualTo(expected);
    }

    @Test
    void from_quorumKeysSet_parseIntoWal() {
        WalConfig wal = NereusConfig.from(broker("nereusWalEnsembleSize", "3", "nereusWalWriteQuorum", "2",
                "nereusWalAckQuorum", "1")).storage().wal();

        assertThat(List.of(wal.ensembleSize(), wal.writeQuorum(), wal.ackQuorum())).containsExactly(3, 2, 1);
    }

    @Test
    void from_everyKeyOfTheTable_isCoveredByAParseCase() {
        Set<String> covered = new HashSet<>(List.of("nereusFdbClusterFile", "nereusWalWriteQuorum",
                "nereusWalAckQuorum"));
        everyKeyParsed().forEach(a -> covered.add((String) a.get()[0]));
        everyS3KeyParsed().forEach(a -> covered.add((String) a.get()[0]));
        covered.addAll(List.of("nereusS3AccessKey", "nereusS3SecretKey")); // from_s3StaticKeys_becomeTheCredentials

        assertThat(covered).containsExactlyInAnyOrderElementsOf(
                NereusConfig.keys().stream().map(ConfigKey::name).toList());
    }

    @Test
    void from_fdbClusterFileExists_isUsed(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("fdb.cluster"), "test:test@127.0.0.1:4500\n");

        NereusConfig c = NereusConfig.from(broker("nereusFdbClusterFile", file.toString()));

        assertThat(c.fdbClusterFile()).contains(file);
    }

    @Test
    void from_fdbClusterFileMissing_rejectedNamingKey(@TempDir Path dir) {
        Path missing = dir.resolve("absent.cluster");

        assertThatThrownBy(() -> NereusConfig.from(broker("nereusFdbClusterFile", missing.toString())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusFdbClusterFile=" + missing + ": must be an existing file");
    }

    @Test
    void from_embeddedFdbDirIsAFile_rejectedNamingKey(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("plain-file"), "x");

        assertThatThrownBy(() -> NereusConfig.from(broker("nereusEmbeddedFdbDir", file.toString())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusEmbeddedFdbDir=" + file + ": must be a directory path, not an existing file");
    }

    static Stream<Arguments> invalidValues() {
        return Stream.of(
                Arguments.of("nereusWalFlushBytes", "-1", "nereusWalFlushBytes=-1: must be > 0 and <= nereusWalMaxBatchBytes"),
                Arguments.of("nereusWalFlushBytes", "0", "nereusWalFlushBytes=0: must be > 0"),
                Arguments.of("nereusWalFlushBelowBatches", "0", "nereusWalFlushBelowBatches=0: must be > 0"),
                Arguments.of("nereusWalFlushBytes", "abc",
                        "nereusWalFlushBytes=abc: must be a whole number from -2147483648 to 2147483647, > 0"),
                Arguments.of("nereusWalFlushBytes", "2147483648", "nereusWalFlushBytes=2147483648: must be a whole number"),
                Arguments.of("nereusWalFlushBytes", "1.5", "nereusWalFlushBytes=1.5: must be a whole number"),
                Arguments.of("nereusWalFlushDelayMicros", "-1", "nereusWalFlushDelayMicros=-1: must be 0 to 9223372036854775"),
                Arguments.of("nereusWalFlushDelayMicros", "9223372036854776",
                        "nereusWalFlushDelayMicros=9223372036854776: must be 0 to 9223372036854775"),
                Arguments.of("nereusWalMaxBatchBytes", "0", "nereusWalMaxBatchBytes=0: must be maxMessageSize + 1024 to + 8192"),
                Arguments.of("nereusWalMaxInFlightBatches", "0", "nereusWalMaxInFlightBatches=0: must be > 0"),
                Arguments.of("nereusWalSliceMaxBytes", "-5", "nereusWalSliceMaxBytes=-5: must be > 0"),
                Arguments.of("nereusWalSliceMaxBytes", "1GiB", "nereusWalSliceMaxBytes=1GiB: must be a whole number"),
                Arguments.of("nereusWalSliceMaxAgeSeconds", "0", "nereusWalSliceMaxAgeSeconds=0: must be 1 to 9223372036"),
                Arguments.of("nereusWalSliceMaxAgeSeconds", "9223372037",
                        "nereusWalSliceMaxAgeSeconds=9223372037: must be 1 to 9223372036"),
                Arguments.of("nereusWalCommitMaxBatches", "0", "nereusWalCommitMaxBatches=0: must be 1 to 64"),
                Arguments.of("nereusWalCommitMaxBatches", "65", "nereusWalCommitMaxBatches=65: must be 1 to 64"),
                Arguments.of("nereusWalCommitMaxAppends", "16385", "nereusWalCommitMaxAppends=16385: must be 1 to 16384"),
                Arguments.of("nereusWalWriterLeaseSeconds", "0", "nereusWalWriterLeaseSeconds=0: must be 1 to 3600"),
                Arguments.of("nereusWalWriterLeaseSeconds", "3601", "nereusWalWriterLeaseSeconds=3601: must be 1 to 3600"),
                Arguments.of("nereusWalRecoveryIntervalSeconds", "0",
                        "nereusWalRecoveryIntervalSeconds=0: must be 1 to 3600"),
                Arguments.of("nereusWalEnsembleSize", "0", "nereusWalEnsembleSize=0: must be >= 1"),
                Arguments.of("nereusWalWriteQuorum", "0", "nereusWalWriteQuorum=0: must be >= 1"),
                Arguments.of("nereusWalAckQuorum", "-2", "nereusWalAckQuorum=-2: must be >= 1"),
                Arguments.of("nereusTailCacheBytes", "-1", "nereusTailCacheBytes=-1: must be >= 0"),
                Arguments.of("nereusWalMirrorBytes", "-1", "nereusWalMirrorBytes=-1: must be >= 0"),
                Arguments.of("nereusWalMirrorStagingBytes", "1000000",
                        "nereusWalMirrorStagingBytes=1000000: must be a positive multiple of 1048576"),
                Arguments.of("nereusObjectReadAheadBlocks", "65", "nereusObjectReadAheadBlocks=65: must be 0 to 64"),
                Arguments.of("nereusReadCachedBatches", "0", "nereusReadCachedBatches=0: must be >= 1"),
                Arguments.of("nereusReadCachedResolutions", "0", "nereusReadCachedResolutions=0: must be >= 1"),
                Arguments.of("nereusRepairMaxBatches", "0", "nereusRepairMaxBatches=0: must be >= 1"),
                Arguments.of("nereusMetadataRoot", "a\tb", "nereusMetadataRoot=a\tb: must be 1 to 255 characters"),
                Arguments.of("nereusMetadataRoot", "x".repeat(256), "nereusMetadataRoot=" + "x".repeat(256)
                        + ": must be 1 to 255 characters, no control characters"),
                Arguments.of("nereusEmbeddedFdbDir", "bad\0path", "nereusEmbeddedFdbDir=bad\0path: must be a file system path"),
                Arguments.of("nereusObjectStoreType", "S3", "nereusObjectStoreType=S3: must be filesystem or s3"),
                Arguments.of("nereusObjectStoreType", "gcs", "nereusObjectStoreType=gcs: must be filesystem or s3"),
                Arguments.of("nereusObjectStoreDir", "bad\0path", "nereusObjectStoreDir=bad\0path: must be a file system path"),
                Arguments.of("nereusS3Bucket", "Bad_Bucket", "nereusS3Bucket=Bad_Bucket: must be 3 to 63 of a-z 0-9 . -"),
                Arguments.of("nereusS3Bucket", "ab", "nereusS3Bucket=ab: must be 3 to 63"),
                Arguments.of("nereusS3Prefix", "/nereus", "nereusS3Prefix=/nereus: must be segments of a-z 0-9 - _ ."),
                Arguments.of("nereusS3Prefix", "nereus/", "nereusS3Prefix=nereus/: must be segments"),
                Arguments.of("nereusS3Endpoint", "ftp://host", "nereusS3Endpoint=ftp://host: must be an http:// or https:// URL"),
                Arguments.of("nereusS3Endpoint", "http://a b", "nereusS3Endpoint=http://a b: must be a URL, an http://"),
                Arguments.of("nereusS3Region", "US-EAST-1", "nereusS3Region=US-EAST-1: must be lowercase letters"),
                Arguments.of("nereusS3PathStyle", "yes", "nereusS3PathStyle=yes: must be true or false"),
                Arguments.of("nereusObjectStoreDirectIo", "on", "nereusObjectStoreDirectIo=on: must be true or false"),
                Arguments.of("nereusS3PartBytes", "1048576", "nereusS3PartBytes=1048576: must be 5242880 to 5368709120"));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("invalidValues")
    void from_invalidValue_rejectedNamingKeyValueAndAllowed(String key, String value, String messageStart) {
        assertThatThrownBy(() -> NereusConfig.from(broker(key, value)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(messageStart);
    }

    /** A value that does not parse is refused alone, whichever configuration its key belongs to, saying it once. */
    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "nereusMaterializerEnabled|maybe|nereusMaterializerEnabled=maybe: must be true or false",
        "nereusObjectStoreDirectIo|maybe|nereusObjectStoreDirectIo=maybe: must be true or false",
        "nereusWalFlushWhenIdle|1|nereusWalFlushWhenIdle=1: must be true or false",
        "nereusCollectorIntervalSeconds|soon|nereusCollectorIntervalSeconds=soon: must be a whole number from "
                + "-9223372036854775808 to 9223372036854775807, 1 to 3600"})
    void from_valueThatDoesNotParse_refusedWithExactlyItsOwnMessage(String key, String value, String message) {
        assertThatThrownBy(() -> NereusConfig.from(broker(key, value)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }

    @Test
    void from_flushBytesAboveMaxBatchBytes_rejectedNamingBothKeys() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusWalFlushBytes", "5300000",
                "nereusWalMaxBatchBytes", "5246976")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusWalFlushBytes=5300000: must be <= nereusWalMaxBatchBytes=5246976");
    }

    @Test
    void from_maxBatchBytesBelowWhatTheBrokerAccepts_rejectedNamingMaxMessageSize() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusWalMaxBatchBytes", "4194304")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusWalMaxBatchBytes=4194304: must be >= the broker's maxMessageSize (5242880) + 1024, "
                        + "so that every message the broker accepts fits in one WAL batch");
    }

    @Test
    void from_maxBatchBytesAboveTheBookKeeperFrame_rejectedNamingMaxMessageSize() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusWalMaxBatchBytes", "8388608")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusWalMaxBatchBytes=8388608: must be <= the broker's maxMessageSize (5242880) + 8192, "
                        + "so that every WAL batch fits in the BookKeeper frame Pulsar sizes for maxMessageSize "
                        + "(maxMessageSize + 10 KiB)");
    }

    @Test
    void from_flushBytesAboveDefaultMaxBatchBytes_rejectedShowingTheDefault() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusWalFlushBytes", "8388608")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusWalFlushBytes=8388608: must be <= nereusWalMaxBatchBytes=5243904 (default: the broker's "
                        + "maxMessageSize + 1024)");
    }

    @Test
    void from_writeQuorumAboveEnsemble_rejectedNamingBothKeys() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusWalEnsembleSize", "2", "nereusWalWriteQuorum", "3",
                "nereusWalAckQuorum", "1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusWalWriteQuorum=3: must be <= nereusWalEnsembleSize=2");
    }

    @Test
    void from_ackQuorumAboveBrokerDefaultWriteQuorum_rejectedNamingTheBrokerSetting() {
        ServiceConfiguration conf = broker("nereusWalAckQuorum", "2");
        conf.setManagedLedgerDefaultEnsembleSize(1);
        conf.setManagedLedgerDefaultWriteQuorum(1);
        conf.setManagedLedgerDefaultAckQuorum(1);

        assertThatThrownBy(() -> NereusConfig.from(conf))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusWalAckQuorum=2: must be <= nereusWalWriteQuorum=1 "
                        + "(default: the broker's managedLedgerDefaultWriteQuorum)");
    }

    @Test
    void from_brokerDefaultQuorumInvalid_rejectedNamingTheNereusKeyAndOrigin() {
        ServiceConfiguration conf = broker();
        conf.setManagedLedgerDefaultEnsembleSize(0);

        assertThatThrownBy(() -> NereusConfig.from(conf))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nereusWalEnsembleSize=0 (default: the broker's managedLedgerDefaultEnsembleSize): "
                        + "must be >= 1");
    }

    @Test
    void from_noClusterNameAndNoRoot_rejectedNamingMetadataRoot() {
        ServiceConfiguration conf = broker();
        conf.setClusterName(null);

        assertThatThrownBy(() -> NereusConfig.from(conf))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("nereusMetadataRoot= (default: the broker's clusterName): must be 1 to 255");
    }

    @Test
    void from_unknownNereusKey_rejectedWithSuggestion() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusWalFlushBytez", "1024")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("nereusWalFlushBytez=1024: not a Nereus key (did you mean nereusWalFlushBytes?)")
                .hasMessageContaining("Known keys: nereusFdbClusterFile, ");
    }

    @Test
    void from_nereusKeyInOtherCase_rejectedAsUnknown() {
        assertThatThrownBy(() -> NereusConfig.from(broker("NereusWalFlushBytes", "1024")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("NereusWalFlushBytes=1024: not a Nereus key (did you mean nereusWalFlushBytes?)");
    }

    @Test
    void from_severalUnknownKeys_namesEveryOne() {
        assertThatThrownBy(() -> NereusConfig.from(broker("nereusFoo", "1", "nereusWalAckQuorom", "1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nereusFoo=1: not a Nereus key")
                .hasMessageContaining("nereusWalAckQuorom=1: not a Nereus key (did you mean nereusWalAckQuorum?)");
    }

    @Test
    void from_otherBrokerKeys_ignored() {
        NereusConfig c = NereusConfig.from(broker("managedLedgerStorageClassName",
                "io.nereus.pulsar.NereusManagedLedgerStorage", "bookkeeperNumberOfChannels", "4"));

        assertThat(c.metadataRoot()).isEqualTo("cluster-a");
    }

    @Test
    void keys_namesUniqueWithNereusPrefixAndDocumented() {
        List<String> names = NereusConfig.keys().stream().map(ConfigKey::name).toList();

        assertThat(names).doesNotHaveDuplicates().allMatch(n -> n.startsWith("nereus"));
        assertThat(names).hasSize(47);
        assertThat(NereusConfig.keys()).allSatisfy(k -> {
            assertThat(k.doc()).as(k.name()).isNotBlank().endsWith(".");
            assertThat(k.allowed()).as(k.name()).isNotBlank();
            assertThat(k.defaultDoc()).as(k.name()).isNotBlank();
        });
    }

    @Test
    void configKey_nameWithoutPrefix_refused() {
        assertThatThrownBy(() -> new ConfigKey<>("walFlushBytes", ConfigType.INT, c -> 1, "1", "> 0", v -> v > 0, "d."))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("walFlushBytes");
    }

    @Test
    void record_blankMetadataRoot_refused() {
        assertThatThrownBy(() -> new NereusConfig(Optional.empty(), Path.of("d"), Duration.ZERO, " ", StorageConfig.defaults(),
                ObjectStoreConfig.Filesystem.of(Path.of("o"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("metadataRoot");
    }

    /** StorageConfig equality is by field (WalConfig holds a byte[] password, compared by identity). */
    static void assertSameStorage(StorageConfig actual, StorageConfig expected) {
        assertThat(actual).usingRecursiveComparison().isEqualTo(expected);
    }
}
