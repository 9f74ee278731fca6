package io.nereus.testing;

import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.ClientConfigurations;
import org.apache.bookkeeper.common.allocator.LeakDetectionPolicy;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.pulsar.metadata.bookkeeper.BKCluster;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real in-process BookKeeper for engine tests: one bookie on a free loopback port, bookie metadata in a
 * private in-memory Pulsar metadata store, data in a temporary directory that is removed on close. Register
 * it as a static field with {@code @RegisterExtension}; it starts once before the class's tests and stops
 * after them. Clients made by {@link #newClient()} are closed with the cluster.
 *
 * <p>{@code BKCluster}'s default bookie configuration does not write entry data to the journal
 * ({@code journalWriteData=false}): entries survive a client or storage restart, not a bookie restart.
 */
public final class BookKeeperCluster implements BookKeeperClients, BeforeAllCallback, AfterAllCallback {
    private BKCluster cluster;
    private final List<BookKeeper> clients = new ArrayList<>();
    /** How long the bookie's journal holds a write to group it with others; 0: BKCluster's default bookie. */
    private final long journalGroupMillis;

    /** The default bookie: entries acknowledged without waiting for a journal write. */
    public BookKeeperCluster() {
        this(0);
    }

    private BookKeeperCluster(long journalGroupMillis) {
        this.journalGroupMillis = journalGroupMillis;
    }

    /**
     * A bookie whose journal holds every write for {@code millis} before it acknowledges it (entry data written to
     * the journal, grouped by time only, as a bookie with {@code journalMaxGroupWaitMSec} and no flush when its queue
     * empties): a test sees adds in flight for that long, deterministically.
     */
    public static BookKeeperCluster withJournalGrouping(long millis) {
        if (millis <= 0) {
            throw new IllegalArgumentException("journal grouping must be > 0 ms: " + millis);
        }
        return new BookKeeperCluster(millis);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        BKCluster.BKClusterConf conf = BKCluster.builder()
                .metadataServiceUri("memory:nereus-" + UUID.randomUUID())
                .numBookies(1);
        if (journalGroupMillis > 0) {
            // the settings BKCluster's own base has (it uses that only when given none), and the journal grouping
            ServerConfiguration bookie = MultiBookieCluster.smallLoopbackBookie();
            bookie.setTLSEnabledProtocols("TLSv1.2,TLSv1.1");
            bookie.setBookiePort(0);
            bookie.setAllowEphemeralPorts(true);
            bookie.setJournalFlushWhenQueueEmpty(false);
            bookie.setJournalMaxGroupWaitMSec(journalGroupMillis);
            bookie.setJournalSyncData(false);
            conf.baseServerConfiguration(bookie);
        }
        cluster = conf.build();
    }

    /** A new BookKeeper client of this cluster; closed by {@link #afterAll}. */
    @Override
    public synchronized BookKeeper newClient() {
        try {
            BookKeeper bk = cluster.newClient();
            clients.add(bk);
            return bk;
        } catch (Exception e) {
            throw new IllegalStateException("cannot create a BookKeeper client", e);
        }
    }

    /**
     * A new client speaking BookKeeper's v2 wire protocol, as Pulsar's brokers do: entries are read into the
     * channel's pooled buffers (the v3 protocol's are unpooled wrappers of protobuf bytes). Building a client sets
     * Netty's leak detection level to the client's policy; this one keeps PARANOID when it is set ({@link
     * LeakDetection}). Closed by {@link #afterAll}.
     */
    public synchronized BookKeeper newV2Client() {
        boolean paranoid = ResourceLeakDetector.getLevel() == ResourceLeakDetector.Level.PARANOID;
        try {
            BookKeeper base = cluster.newClient();
            ClientConfiguration conf = ClientConfigurations.copyOf(base);
            base.close();
            conf.setUseV2WireProtocol(true);
            // every client sets Netty's global leak detection level to its policy (the default: disabled)
            if (paranoid) {
                conf.setAllocatorLeakDetectionPolicy(LeakDetectionPolicy.Paranoid);
            }
            BookKeeper bk = new BookKeeper(conf);
            clients.add(bk);
            return bk;
        } catch (Exception e) {
            throw new IllegalStateException("cannot create a BookKeeper client", e);
        }
    }

    /** The base client configuration (metadata service of this cluster) for tests that build their own client. */
    public ClientConfiguration clientConfiguration() {
        return BKCluster.newBaseClientConfiguration();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        synchronized (this) {
            for (BookKeeper bk : clients) {
                bk.close();
            }
            clients.clear();
        }
        if (cluster != null) {
            cluster.close();
        }
    }
}
