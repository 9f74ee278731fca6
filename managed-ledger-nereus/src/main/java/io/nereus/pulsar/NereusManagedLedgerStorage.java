package io.nereus.pulsar;

import io.nereus.error.Failures;
import io.nereus.metadata.MetadataExecutor;
import io.nereus.metadata.MetadataStore;
import io.nereus.object.ObjectStore;
import io.nereus.object.ObjectStoreConfig;
import io.nereus.object.ObjectStores;
import io.nereus.pulsar.config.NereusConfig;
import io.nereus.pulsar.config.UnsupportedBrokerSettings;
import io.nereus.pulsar.ledger.NereusManagedLedgerFactory;
import io.nereus.pulsar.ledger.OpenLedger;
import io.nereus.pulsar.ledger.TopicNodes;
import io.nereus.stream.StreamStorage;
import io.nereus.wal.WalLedgerCheck;
import io.nereus.wal.WalStats;
import io.netty.channel.EventLoopGroup;
import io.opentelemetry.api.OpenTelemetry;
import java.io.IOException;
import java.time.Clock;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.common.util.OrderedExecutor;
import org.apache.pulsar.broker.BookKeeperClientFactory;
import org.apache.pulsar.broker.ManagedLedgerClientFactory;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.storage.BookkeeperManagedLedgerStorageClass;
import org.apache.pulsar.broker.storage.ManagedLedgerStorage;
import org.apache.pulsar.broker.storage.ManagedLedgerStorageClass;
import org.apache.pulsar.metadata.api.extended.MetadataStoreExtended;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Nereus as the managed-ledger storage of a stock Pulsar 4.0.8 broker: set
 * {@code managedLedgerStorageClassName=io.nereus.pulsar.NereusManagedLedgerStorage} in broker.conf.
 *
 * <p>Two storage classes: {@value #NEREUS} (the default) stores topics in Nereus; {@value #BOOKKEEPER} is the stock
 * BookKeeper storage, for namespaces an operator keeps there (persistence policy
 * {@code managedLedgerStorageClassName}). Both share one BookKeeper client, the stock one, which Nereus also uses
 * for its write-ahead log; the {@value #NEREUS} class returns it from {@code getBookKeeperClient()} so schema
 * storage, Pulsar's own compaction and other BookKeeper-based broker features keep working.
 *
 * <p>The {@value #NEREUS} class's factory routes by ledger name ({@link LedgerRoute}): ledgers Pulsar requires to be
 * stock {@code ManagedLedgerImpl}s (the transaction coordinator log) are stored by the stock factory of the
 * {@value #BOOKKEEPER} class, automatically; all others by Nereus ({@link RoutingManagedLedgerFactory}).
 *
 * <p>Lifecycle: the broker calls {@link #initialize} once at start (invalid {@code nereus*} settings, and broker
 * settings Nereus cannot support ({@link UnsupportedBrokerSettings}), stop the broker with a message naming the key)
 * and {@link #close} at shutdown, possibly while topic closes are still in flight: close waits a bounded time for the
 * ledgers, then for the engine (its WAL seals its last slice and releases its lease), then releases the object
 * store, the metadata store and BookKeeper.
 *
 * <p>The object store ({@code nereusObjectStoreType}) is opened at start, before the engine, and handed to it
 * ({@link StreamStorage#objects()}), so a directory that cannot be locked, a missing bucket, wrong credentials or an
 * unreachable endpoint stop the broker at start with a message naming the keys, even before anything writes an
 * object.
 */
public class NereusManagedLedgerStorage implements ManagedLedgerStorage {
    public static final String NEREUS = "nereus";
    public static final String BOOKKEEPER = "bookkeeper";
    private static final Logger LOG = LoggerFactory.getLogger(NereusManagedLedgerStorage.class);
    /** How long the broker's start waits for the object store to open (an S3 bucket check retries a while). */
    static final long OBJECT_STORE_OPEN_SECONDS = 60;

    private ManagedLedgerClientFactory stock;
    private CompletableFuture<MetadataStore> metadataOpened;
    private CompletableFuture<ObjectStore> objectsOpened;
    private MetadataExecutor metadataExecutor;
    private OrderedExecutor ledgerExecutor;
    private StreamStorage streams;
    private NereusMetrics metrics;
    private NereusManagedLedgerFactory factory;
    private NereusStorageClass nereusClass;
    private ManagedLedgerStorageClass bookkeeperClass;

    /** Instantiated by the broker by reflection. */
    public NereusManagedLedgerStorage() {
    }

    @Override
    public void initialize(ServiceConfiguration conf, MetadataStoreExtended metadataStore,
            BookKeeperClientFactory bookkeeperProvider, EventLoopGroup eventLoopGroup, OpenTelemetry openTelemetry)
            throws Exception {
        UnsupportedBrokerSettings.requireSupported(conf);
        NereusConfig config = NereusConfig.from(conf);
        stock = new ManagedLedgerClientFactory();
        stock.initialize(conf, metadataStore, bookkeeperProvider, eventLoopGroup, openTelemetry);
        try {
            bookkeeperClass = stock.getDefaultStorageClass();
            BookkeeperManagedLedgerStorageClass bkClass = (BookkeeperManagedLedgerStorageClass) bookkeeperClass;
            BookKeeper bk = bkClass.getBookKeeperClient();
            // a commit's chain of callbacks runs on one of these threads, each step right after the one before
            metadataExecutor = MetadataExecutor.create(2, "nereus-metadata");
            metadataOpened = MetadataStore.open(config.fdbClusterFile(), Optional.of(config.embeddedFdbDir()),
                    config.embeddedFdbSyncInterval(), config.metadataDirectory(), metadataExecutor);
            MetadataStore metadata = metadataOpened.get(30, TimeUnit.SECONDS);
            String metadataLocation = config.fdbClusterFile().map(f -> "the FoundationDB cluster of " + f)
                    .orElse("the embedded store " + config.embeddedFdbDir()) + " (root " + config.metadataRoot() + ")";
            try {
                WalLedgerCheck.verify(bk, metadata.slices(), metadataLocation).get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
            objectsOpened = ObjectStores.open(config.objectStore());
            ObjectStore objects = opened(objectsOpened, config.objectStore());
            String writerId = "nereus-" + conf.getAdvertisedAddress() + "-" + UUID.randomUUID();
            metrics = new NereusMetrics(openTelemetry, config.storage().wal().flushBytes());
            streams = StreamStorage.create(config.storage(), bk, metadata, objects, writerId, Clock.systemUTC(),
                    metrics.walObserver());
            metrics.observe(streams);
            // the WAL's lease and first slice now, not at the first append: stock storage creates a topic's ledger
            // when the topic loads, and Pulsar's tests expect the first append to be as quick as the ones after it
            streams.openWal();
            // as many threads (at least two) as the executor of Pulsar's own managed ledgers, the BookKeeper
            // client's worker pool (bookkeeperClientNumWorkerThreads, by default one per core): with more threads
            // than cores, a thread that has run its share of a commit's completions parks, and is woken again for
            // the next one (8 threads on 2 cores: a third of these threads' CPU time in the kernel, about a tenth
            // with 2; docs/benchmarks.md)
            ledgerExecutor = OrderedExecutor.newBuilder().name("nereus-ml")
                    .numThreads(Math.max(2, conf.getBookkeeperClientNumWorkerThreads())).build();
            factory = new NereusManagedLedgerFactory(metadata, streams, new TopicNodes(metadataStore), ledgerExecutor,
                    Clock.systemUTC(), config.storage().wal().writeQuorum());
            nereusClass = new NereusStorageClass(
                    new RoutingManagedLedgerFactory(factory, bookkeeperClass.getManagedLedgerFactory()), bkClass);
            LOG.info("Nereus storage started: writer={} metadataRoot={} fdb={} objects={}", writerId,
                    config.metadataRoot(),
                    config.fdbClusterFile().map(Object::toString).orElse("embedded at " + config.embeddedFdbDir()
                            + (config.embeddedFdbSyncInterval().isZero() ? " (fsync before every acknowledgement)"
                            : " (acknowledged once written, fsynced every " + config.embeddedFdbSyncInterval().toMillis()
                            + " ms)")),
                    config.objectStore());
        } catch (Exception e) {
            closeQuietly();
            throw e;
        }
    }

    /**
     * The managed ledger {@code name} if Nereus stores it and has it open on this broker (see
     * {@link NereusManagedLedgerFactory#openLedger}); empty for a ledger of the {@value #BOOKKEEPER} class or one
     * routed to the stock factory. The compaction service asks this while the broker loads a topic.
     */
    public Optional<OpenLedger> openNereusLedger(String name) {
        NereusManagedLedgerFactory f = factory;
        return f == null ? Optional.empty() : f.openLedger(name);
    }

    @Override
    public Collection<ManagedLedgerStorageClass> getStorageClasses() {
        return List.of(nereusClass, bookkeeperClass);
    }

    @Override
    public ManagedLedgerStorageClass getDefaultStorageClass() {
        return nereusClass;
    }

    /** The class named {@code name}; {@code null} means the default ({@value #NEREUS}). */
    @Override
    public Optional<ManagedLedgerStorageClass> getManagedLedgerStorageClass(String name) {
        if (name == null || NEREUS.equals(name)) {
            return Optional.of(nereusClass);
        }
        if (BOOKKEEPER.equals(name)) {
            return Optional.of(bookkeeperClass);
        }
        return Optional.empty();
    }

    @Override
    public void close() throws IOException {
        closeQuietly();
    }

    private void closeQuietly() {
        if (factory != null) {
            try {
                factory.shutdownAsync().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("Nereus ledgers did not all close cleanly", e);
            }
        }
        if (metrics != null) {
            metrics.close();
        }
        if (streams != null) {
            WalStats wal = streams.walStats();
            LOG.info("Nereus WAL since start: {} batches written, {} commit groups in {} metadata transactions, {} "
                    + "stream appends committed", wal.batchesWritten(), wal.commitGroups(), wal.commitTransactions(),
                    wal.appendsCommitted());
            try {
                // the WAL seals its last slice and releases its lease before the metadata store closes
                streams.closeAsync().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                LOG.warn("Nereus WAL did not close cleanly; slice recovery of another broker seals what it left open",
                        e);
            }
        }
        if (objectsOpened != null) {
            objectsOpened.thenAccept(ObjectStore::close); // now, or when an open that timed out completes
        }
        if (ledgerExecutor != null) {
            ledgerExecutor.shutdown();
        }
        if (metadataExecutor != null) {
            metadataExecutor.shutdown();
        }
        if (metadataOpened != null) {
            metadataOpened.thenAccept(MetadataStore::close); // now, or when an open that timed out completes
        }
        if (stock != null) {
            try {
                stock.close();
            } catch (Exception e) {
                LOG.warn("stock managed-ledger storage did not close cleanly", e);
            }
        }
    }

    /**
     * The store {@code opening} opens, within {@value #OBJECT_STORE_OPEN_SECONDS} s.
     *
     * @throws IllegalArgumentException naming the settings of {@code config} and why the store did not open
     */
    private static ObjectStore opened(CompletableFuture<ObjectStore> opening, ObjectStoreConfig config) {
        String settings = config instanceof ObjectStoreConfig.S3 s3
                ? "nereusObjectStoreType=s3 nereusS3Bucket=" + s3.bucket() + " nereusS3Endpoint="
                        + s3.endpoint().map(Object::toString).orElse("(AWS S3)") + " nereusS3Region=" + s3.region()
                : "nereusObjectStoreDir=" + ((ObjectStoreConfig.Filesystem) config).dir();
        try {
            return opening.get(OBJECT_STORE_OPEN_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalArgumentException(settings + ": the object store did not open: "
                    + Failures.unwrap(e).getMessage(), Failures.unwrap(e));
        } catch (TimeoutException e) {
            throw new IllegalArgumentException(settings + ": the object store did not open within "
                    + OBJECT_STORE_OPEN_SECONDS + " s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the object store opened", e);
        }
    }
}
