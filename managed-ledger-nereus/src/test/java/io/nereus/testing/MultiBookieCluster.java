package io.nereus.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.bookkeeper.bookie.BookieImpl;
import org.apache.bookkeeper.bookie.storage.ldb.DbLedgerStorage;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.common.allocator.PoolingPolicy;
import org.apache.bookkeeper.common.component.ComponentStarter;
import org.apache.bookkeeper.common.component.Lifecycle;
import org.apache.bookkeeper.common.component.LifecycleComponentStack;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.net.BookieId;
import org.apache.bookkeeper.server.Main;
import org.apache.bookkeeper.server.conf.BookieConfiguration;
import org.apache.bookkeeper.util.PortManager;
import org.apache.pulsar.metadata.bookkeeper.AbstractMetadataDriver;
import org.apache.pulsar.metadata.bookkeeper.BKCluster;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Several real in-process bookies that a test stops and starts one by one, each keeping its data across a restart:
 * for fault tests. Register it as a static field with {@code @RegisterExtension}; it starts once before the class's
 * tests and stops after them.
 *
 * <p>{@link BKCluster} provides the bookie metadata (a private in-memory Pulsar metadata store, the cluster
 * initialized, the metadata drivers set) and the clients, started with no bookie of its own: it offers no public way
 * to stop or start one bookie. The bookies are built here with BookKeeper's public server API
 * ({@link Main#buildBookieServer}) from a configuration like {@code BKCluster}'s, with three differences: each bookie
 * has a fixed port and directory, so a restarted bookie is the same bookie (same id, same cookie, same data); entry
 * data is written to the journal ({@code journalWriteData=true}), so entries acknowledged before a stop are there
 * after the restart; and the ledger storage is DbLedgerStorage, as Pulsar's bookies run. A stop closes the bookie's server (its connections drop, its journal is closed);
 * in-process, that is the closest to a killed bookie.
 */
public final class MultiBookieCluster implements BookKeeperClients, BeforeAllCallback, AfterAllCallback {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final int bookies;
    private BKCluster metadata;
    private String metadataServiceUri;
    private Path dataDir;
    private final List<ServerConfiguration> confs = new ArrayList<>();
    private final List<LifecycleComponentStack> running = new ArrayList<>();
    private final List<BookKeeper> clients = new ArrayList<>();

    public MultiBookieCluster(int bookies) {
        if (bookies < 1) {
            throw new IllegalArgumentException("need at least one bookie: " + bookies);
        }
        this.bookies = bookies;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        String uri = "memory:nereus-" + UUID.randomUUID();
        metadata = BKCluster.builder().metadataServiceUri(uri).numBookies(0).build();
        metadataServiceUri = "metadata-store:" + uri;
        dataDir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "bookies-");
        for (int i = 0; i < bookies; i++) {
            confs.add(serverConfiguration(i));
            running.add(null);
            start(i);
        }
    }

    private ServerConfiguration serverConfiguration(int index) throws IOException {
        Path dir = Files.createDirectories(dataDir.resolve("bookie-" + index));
        ServerConfiguration conf = smallLoopbackBookie();
        conf.setProperty(AbstractMetadataDriver.METADATA_STORE_INSTANCE, metadata.getStore());
        conf.setMetadataServiceUri(metadataServiceUri);
        conf.setBookiePort(PortManager.nextFreePort());
        conf.setAllowEphemeralPorts(false);
        conf.setJournalDirName(dir.toString());
        conf.setLedgerDirNames(new String[] {dir.toString()});
        conf.setLedgerStorageClass(DbLedgerStorage.class.getName());
        conf.setJournalFlushWhenQueueEmpty(true);
        conf.setJournalRemovePagesFromCache(false);
        return conf;
    }

    /**
     * What a test bookie shares with the others: listening on loopback, entry data in the journal, a small journal
     * preallocation and caches, heap buffers, disk thresholds a test machine does not reach (BKCluster's defaults).
     */
    static ServerConfiguration smallLoopbackBookie() throws SocketException {
        ServerConfiguration conf = new ServerConfiguration();
        conf.setListeningInterface(loopbackInterface());
        conf.setAllowLoopback(true);
        conf.setJournalWriteData(true);
        conf.setJournalFormatVersionToWrite(5);
        conf.setProperty("journalPreAllocSizeMB", 1);
        conf.setGcWaitTime(1000L);
        conf.setDiskUsageThreshold(0.999F);
        conf.setDiskUsageWarnThreshold(0.99F);
        conf.setAllocatorPoolingPolicy(PoolingPolicy.UnpooledHeap);
        conf.setProperty("dbStorage_writeCacheMaxSizeMb", 4);
        conf.setProperty("dbStorage_readAheadCacheMaxSizeMb", 4);
        return conf;
    }

    private static String loopbackInterface() throws SocketException {
        for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (nif.isLoopback()) {
                return nif.getName();
            }
        }
        throw new IllegalStateException("no loopback interface");
    }

    /** How many bookies the cluster has (running or stopped). */
    public int size() {
        return confs.size();
    }

    /** The id of bookie {@code index}, the same across restarts. */
    public BookieId bookieId(int index) {
        try {
            return BookieImpl.getBookieId(confs.get(index));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The index of the bookie with id {@code id}. */
    public int indexOf(BookieId id) {
        for (int i = 0; i < confs.size(); i++) {
            if (bookieId(i).equals(id)) {
                return i;
            }
        }
        throw new IllegalArgumentException("not a bookie of this cluster: " + id);
    }

    /** Whether bookie {@code index} runs. */
    public synchronized boolean isRunning(int index) {
        return running.get(index) != null;
    }

    /** Stops bookie {@code index}: its server closes and its connections drop; its data stays on disk. */
    public synchronized void stop(int index) {
        LifecycleComponentStack server = running.set(index, null);
        if (server == null) {
            throw new IllegalStateException("bookie " + index + " is not running");
        }
        server.close();
    }

    /** Starts bookie {@code index} (again) on its port and data; returns once it has started. */
    public synchronized void start(int index) throws Exception {
        if (running.get(index) != null) {
            throw new IllegalStateException("bookie " + index + " is running");
        }
        LifecycleComponentStack server = Main.buildBookieServer(new BookieConfiguration(confs.get(index)));
        ComponentStarter.startComponent(server);
        await().atMost(START_TIMEOUT).until(() -> server.lifecycleState() == Lifecycle.State.STARTED);
        running.set(index, server);
    }

    /** Starts every stopped bookie. */
    public synchronized void startAll() throws Exception {
        for (int i = 0; i < confs.size(); i++) {
            if (running.get(i) == null) {
                start(i);
            }
        }
    }

    /** A new BookKeeper client of this cluster; closed by {@link #afterAll}. */
    @Override
    public synchronized BookKeeper newClient() {
        try {
            BookKeeper bk = metadata.newClient();
            clients.add(bk);
            return bk;
        } catch (Exception e) {
            throw new IllegalStateException("cannot create a BookKeeper client", e);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        synchronized (this) {
            for (BookKeeper bk : clients) {
                bk.close();
            }
            clients.clear();
            for (int i = 0; i < running.size(); i++) {
                if (running.get(i) != null) {
                    stop(i);
                }
            }
        }
        if (metadata != null) {
            metadata.close();
        }
        if (dataDir != null) {
            try (Stream<Path> files = Files.walk(dataDir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
