package io.nereus.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.pulsar.PulsarStandalone;
import org.apache.pulsar.PulsarStandaloneBuilder;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Pulsar 4.0.8 standalone broker in this JVM: one bookie, RocksDB metadata, the managed-ledger storage
 * chosen by {@link StorageMode}, ephemeral ports, advertised on 127.0.0.1.
 *
 * <p>Data lives under {@code <workDir>/brokers/<name>/} (bookie data, Nereus metadata and objects), except the
 * RocksDB metadata store, which {@link PulsarStandalone} always puts in {@code data/metadata} relative to the
 * working directory (it has no setter). The harness therefore requires the working directory to be the configured work
 * directory (surefire's {@code workingDirectory}) and allows one running broker per JVM: a fresh broker wipes
 * {@code data/metadata}, {@link #restart()} reuses it.
 *
 * <p>Starting fails with {@link IllegalStateException} within {@link #START_TIMEOUT} instead of hanging. Clients
 * and admins made by {@link #newClient()} / {@link #newAdmin()} point at the current ports; {@link #restart()} and
 * {@link #close()} close them (a restarted broker has new broker and web ports; make new clients after it).
 *
 * <p>Not thread-safe: one test thread drives it.
 */
public final class StandaloneBroker implements AutoCloseable {

    /** Longest time a broker start may take before the harness gives up and fails. */
    public static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    /** System property naming the work directory; it must equal the JVM's working directory. */
    public static final String WORK_DIR_PROPERTY = "nereus.it.workDir";

    /** As conf/nereus.conf sets it: Nereus topics compact into their TOPIC_COMPACTED view. */
    static final String NEREUS_COMPACTION_FACTORY = "io.nereus.pulsar.compaction.NereusCompactionServiceFactory";
    static final String NEREUS_TOPIC_FACTORY = "io.nereus.pulsar.compaction.NereusTopicFactory";

    /** Broker setting read by the Nereus plugin: where its embedded FoundationDB keeps durable metadata. */
    public static final String NEREUS_FDB_DIR_KEY = "nereusEmbeddedFdbDir";

    /** Broker setting read by the Nereus plugin: the directory of its filesystem object store. */
    public static final String NEREUS_OBJECTS_DIR_KEY = "nereusObjectStoreDir";

    private static final String NEREUS_STORAGE_CLASS = StorageMode.NEREUS.storageClassName();
    private static final String BOOKIE_CONF_RESOURCE = "/standalone-bookie.conf";
    private static final Logger LOG = LoggerFactory.getLogger(StandaloneBroker.class);
    private static final AtomicReference<StandaloneBroker> RUNNING = new AtomicReference<>();

    private final String name;
    private final java.util.function.Consumer<ServiceConfiguration> customize;
    private final StorageMode storage;
    private final Path brokerDir;
    private final boolean zooKeeper;
    private int zooKeeperPort;
    private final List<AutoCloseable> clients = new ArrayList<>();
    private PulsarStandalone standalone;
    private int starts;

    private StandaloneBroker(String name, StorageMode storage, Path brokerDir,
            java.util.function.Consumer<ServiceConfiguration> customize, boolean zooKeeper) {
        this.zooKeeper = zooKeeper;
        this.customize = customize;
        this.name = name;
        this.storage = storage;
        this.brokerDir = brokerDir;
    }

    /**
     * Starts a fresh broker (all data of an earlier broker of this name wiped) with the storage of
     * {@link StorageMode#current()}.
     *
     * @param name a short directory-safe name for this broker's data, e.g. the test class name
     * @throws IllegalStateException if another broker of this JVM is running, the working directory is wrong, the
     *     storage class is missing, or the broker does not start within {@link #START_TIMEOUT}
     */
    public static StandaloneBroker start(String name) {
        return start(name, conf -> { });
    }

    /**
     * Like {@link #start(String)}, with broker settings changed by {@code customize} after the harness's own (on
     * every start of this broker, restarts included).
     */
    public static StandaloneBroker start(String name, java.util.function.Consumer<ServiceConfiguration> customize) {
        return start(name, customize, false);
    }

    /**
     * Like {@link #start(String, java.util.function.Consumer)}, with Pulsar's metadata in an in-process ZooKeeper
     * (the standalone's older mode) instead of RocksDB, so that a {@link SecondBroker} of this JVM gets a metadata
     * session of its own: brokers sharing Pulsar's RocksDB store share one session, and their leader election and
     * ownership then fight.
     */
    public static StandaloneBroker startWithZooKeeper(String name,
            java.util.function.Consumer<ServiceConfiguration> customize) {
        return start(name, customize, true);
    }

    private static StandaloneBroker start(String name, java.util.function.Consumer<ServiceConfiguration> customize,
            boolean zooKeeper) {
        if (!name.matches("[A-Za-z0-9._-]+")) {
            throw new IllegalArgumentException("broker name must be [A-Za-z0-9._-]+: '" + name + "'");
        }
        StorageMode storage = StorageMode.current();
        requireStorageClass(storage);
        Path workDir = requireWorkDir();
        StandaloneBroker broker = new StandaloneBroker(name, storage, workDir.resolve("brokers").resolve(name),
                customize, zooKeeper);
        if (!RUNNING.compareAndSet(null, broker)) {
            throw new IllegalStateException("another StandaloneBroker is running in this JVM ("
                    + RUNNING.get().name + "); the standalone's RocksDB metadata dir is relative to the working"
                    + " directory, so only one may run at a time");
        }
        try {
            deleteRecursively(broker.brokerDir);
            Files.createDirectories(broker.brokerDir);
            broker.startStandalone(true);
            return broker;
        } catch (IOException | RuntimeException e) {
            RUNNING.compareAndSet(broker, null);
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
    }

    /**
     * The broker's BookKeeper client (the one its storage writes with). PulsarStandalone keeps its PulsarService in a
     * package-private field without a getter, so it is read by reflection.
     */
    public org.apache.bookkeeper.client.BookKeeper bookKeeper() {
        return pulsarService().getBookKeeperClient();
    }

    /**
     * The broker's PulsarService. PulsarStandalone keeps it in a package-private field without a getter, so it is
     * read by reflection.
     */
    public org.apache.pulsar.broker.PulsarService pulsarService() {
        try {
            java.lang.reflect.Field f = PulsarStandalone.class.getDeclaredField("broker");
            f.setAccessible(true);
            return (org.apache.pulsar.broker.PulsarService) f.get(running());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach the standalone's PulsarService", e);
        }
    }

    /** Every ledger BookKeeper has now. */
    public java.util.Set<Long> ledgers() throws Exception {
        java.util.Set<Long> out = new java.util.TreeSet<>();
        try (var listed = bookKeeper().newListLedgersOp().execute().get(30, TimeUnit.SECONDS)) {
            listed.toIterable().forEach(out::add);
        }
        return out;
    }

    /** The directory of Nereus's embedded metadata (Nereus storage only). */
    public Path nereusMetadataDir() {
        return brokerDir.resolve("nereus");
    }

    /** The directory of Nereus's filesystem object store (Nereus storage only). */
    public Path objectStoreDir() {
        return brokerDir.resolve("nereus-objects");
    }

    /** The storage this broker runs. */
    public StorageMode storage() {
        return storage;
    }

    /** The binary protocol URL, e.g. {@code pulsar://127.0.0.1:41234}; changes on {@link #restart()}. */
    public String serviceUrl() {
        return running().getBrokerServiceUrl();
    }

    /** The HTTP admin URL; changes on {@link #restart()}. */
    public String webServiceUrl() {
        return running().getWebServiceUrl();
    }

    /** A client on the current {@link #serviceUrl()}; closed by {@link #restart()} and {@link #close()}. */
    public PulsarClient newClient() {
        return newClient(builder -> { });
    }

    /**
     * Like {@link #newClient()}, with client settings changed by {@code customize} after the harness's own (e.g.
     * {@code enableTransaction(true)}).
     */
    public PulsarClient newClient(java.util.function.Consumer<org.apache.pulsar.client.api.ClientBuilder> customize) {
        try {
            org.apache.pulsar.client.api.ClientBuilder builder = PulsarClient.builder()
                    .serviceUrl(serviceUrl())
                    .operationTimeout(30, TimeUnit.SECONDS)
                    .ioThreads(1)
                    .listenerThreads(1);
            customize.accept(builder);
            PulsarClient client = builder.build();
            clients.add(client);
            return client;
        } catch (PulsarClientException e) {
            throw new IllegalStateException("cannot build a client for " + serviceUrl(), e);
        }
    }

    /** An admin client on the current {@link #webServiceUrl()}; closed by {@link #restart()}/{@link #close()}. */
    public PulsarAdmin newAdmin() {
        try {
            PulsarAdmin admin = PulsarAdmin.builder()
                    .serviceHttpUrl(webServiceUrl())
                    .requestTimeout(30, TimeUnit.SECONDS)
                    .build();
            clients.add(admin);
            return admin;
        } catch (PulsarClientException e) {
            throw new IllegalStateException("cannot build an admin for " + webServiceUrl(), e);
        }
    }

    /**
     * Stops the broker and bookie gracefully and starts them again on the same data (bookie dir, RocksDB metadata,
     * Nereus metadata). Clients made earlier are closed first; ports change.
     */
    public void restart() {
        closeClients();
        running().close();
        standalone = null;
        startStandalone(false);
    }

    @Override
    public void close() {
        try {
            closeClients();
            if (standalone != null) {
                standalone.close();
                standalone = null;
            }
        } finally {
            RUNNING.compareAndSet(this, null);
        }
    }

    @Override
    public String toString() {
        return "StandaloneBroker[" + name + ", storage=" + storage + ", dir=" + brokerDir + "]";
    }

    private void startStandalone(boolean wipeData) {
        starts++;
        PulsarStandalone s = build(wipeData);
        ExecutorService starter = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "standalone-start-" + name);
            t.setDaemon(true);
            return t;
        });
        long began = System.nanoTime();
        Future<?> started = starter.submit(() -> {
            s.start();
            return null;
        });
        try {
            started.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            started.cancel(true);
            closeQuietly(s);
            throw new IllegalStateException(this + " did not start within " + START_TIMEOUT, e);
        } catch (ExecutionException e) {
            closeQuietly(s);
            throw new IllegalStateException(this + " failed to start: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(s);
            throw new IllegalStateException("interrupted while starting " + this, e);
        } finally {
            starter.shutdownNow();
        }
        standalone = s;
        requireDefaultNamespace();
        LOG.info("Started {} (start #{}) in {} ms at {}", this, starts,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began), serviceUrl());
    }

    private PulsarStandalone build(boolean wipeData) {
        PulsarStandaloneBuilder builder = PulsarStandaloneBuilder.instance();
        if (zooKeeper) {
            // An existing ZooKeeper dir switches the standalone to ZooKeeper mode; its port must be known up front.
            Path zkDir = brokerDir.resolve("zookeeper");
            try {
                Files.createDirectories(zkDir);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (zooKeeperPort == 0) {
                zooKeeperPort = org.apache.pulsar.common.util.PortManager.nextLockedFreePort();
            }
            builder.withZkDir(zkDir.toString()).withZkPort(zooKeeperPort);
        } else {
            // Must not exist: an existing ZooKeeper dir switches the standalone to ZooKeeper mode.
            builder.withZkDir(brokerDir.resolve("zookeeper-unused").toString());
        }
        PulsarStandalone s = builder
                .withNumOfBk(1)
                .withBkPort(0)
                .withBkDir(brokerDir.resolve("bookie").toString())
                .withNoStreamStorage(true)
                .withWipeData(wipeData)
                .withAdvertisedAddress("127.0.0.1")
                .build();
        s.setConfigFile(bookieConfFile().toString());
        // build() replaces any config given to withConfig(), so the settings go on getConfig() afterwards.
        ServiceConfiguration conf = s.getConfig();
        harnessSettings(conf, storage, nereusMetadataDir(), objectStoreDir());
        customize.accept(conf);
        return s;
    }

    /**
     * The broker settings of this harness (ephemeral ports, quorums of 1, small thread pools, no load balancing, the
     * storage class and, for Nereus, its metadata and object-store directories); shared with {@link SecondBroker}.
     */
    static void harnessSettings(ServiceConfiguration conf, StorageMode storage, Path nereusMetadataDir,
            Path objectStoreDir) {
        conf.setBrokerServicePort(Optional.of(0));
        conf.setWebServicePort(Optional.of(0));
        conf.setManagedLedgerDefaultEnsembleSize(1);
        conf.setManagedLedgerDefaultWriteQuorum(1);
        conf.setManagedLedgerDefaultAckQuorum(1);
        conf.setLoadBalancerEnabled(false);
        conf.setBrokerDeleteInactiveTopicsEnabled(false);
        conf.setNumIOThreads(2);
        conf.setNumOrderedExecutorThreads(2);
        conf.setNumExecutorThreadPoolSize(2);
        conf.setNumHttpServerThreads(4);
        conf.setTopicOrderedExecutorThreadNum(2);
        conf.setBookkeeperClientNumWorkerThreads(2);
        conf.setManagedLedgerNumSchedulerThreads(2);
        conf.setManagedLedgerCacheSizeMB(32);
        conf.setBrokerShutdownTimeoutMs(20_000);
        conf.setManagedLedgerStorageClassName(storage.storageClassName());
        if (storage == StorageMode.NEREUS) {
            conf.setCompactionServiceFactoryClassName(NEREUS_COMPACTION_FACTORY);
            conf.setTopicFactoryClassName(NEREUS_TOPIC_FACTORY);
            conf.getProperties().setProperty(NEREUS_FDB_DIR_KEY, nereusMetadataDir.toString());
            conf.getProperties().setProperty(NEREUS_OBJECTS_DIR_KEY, objectStoreDir.toString());
        }
    }

    /** This broker's data directory. */
    Path brokerDir() {
        return brokerDir;
    }

    /** The broker's settings as it runs (the metadata store URL is known once it started). */
    ServiceConfiguration config() {
        return running().getConfig();
    }

    private void requireDefaultNamespace() {
        // PulsarStandalone.start() logs and swallows failures to create public/default; surface them here.
        try (PulsarAdmin admin = PulsarAdmin.builder().serviceHttpUrl(webServiceUrl()).build()) {
            List<String> namespaces = admin.namespaces().getNamespaces("public");
            if (!namespaces.contains("public/default")) {
                throw new IllegalStateException(this + " started without namespace public/default: " + namespaces);
            }
        } catch (PulsarClientException | PulsarAdminException e) {
            throw new IllegalStateException(this + " started but its admin API does not answer", e);
        }
    }

    private Path bookieConfFile() {
        Path file = brokerDir.resolve("bookie.conf");
        if (Files.exists(file)) {
            return file;
        }
        try (InputStream in = StandaloneBroker.class.getResourceAsStream(BOOKIE_CONF_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("test resource " + BOOKIE_CONF_RESOURCE + " is missing");
            }
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    private PulsarStandalone running() {
        if (standalone == null) {
            throw new IllegalStateException(this + " is not running");
        }
        return standalone;
    }

    private void closeClients() {
        for (AutoCloseable client : clients) {
            try {
                client.close();
            } catch (Exception e) {
                LOG.warn("Closing a client of {} failed", this, e);
            }
        }
        clients.clear();
    }

    private static void closeQuietly(PulsarStandalone s) {
        try {
            s.close();
        } catch (RuntimeException e) {
            LOG.warn("Closing a standalone that failed to start failed too", e);
        }
    }

    private static void requireStorageClass(StorageMode storage) {
        if (storage != StorageMode.NEREUS) {
            return;
        }
        try {
            Class.forName(NEREUS_STORAGE_CLASS, false, StandaloneBroker.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(StorageMode.PROPERTY + "=nereus but " + NEREUS_STORAGE_CLASS
                    + " is not on the test classpath; build managed-ledger-nereus with the Pulsar facade, or run"
                    + " with -D" + StorageMode.PROPERTY + "=bookkeeper", e);
        }
    }

    private static Path requireWorkDir() {
        String configured = System.getProperty(WORK_DIR_PROPERTY);
        if (configured == null || configured.isBlank()) {
            throw new IllegalStateException("system property " + WORK_DIR_PROPERTY + " is not set (surefire sets it)");
        }
        Path workDir = Path.of(configured).toAbsolutePath().normalize();
        Path cwd = Path.of("").toAbsolutePath().normalize();
        if (!cwd.equals(workDir)) {
            throw new IllegalStateException("the working directory is " + cwd + " but must be " + workDir
                    + ": the standalone's RocksDB metadata goes to ./data/metadata");
        }
        return workDir;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
