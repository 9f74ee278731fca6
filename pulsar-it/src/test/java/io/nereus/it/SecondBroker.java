package io.nereus.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A second Pulsar broker in this JVM, joined to the cluster of a running {@link StandaloneBroker} started with
 * {@link StandaloneBroker#startWithZooKeeper}: the same metadata store (the standalone's ZooKeeper, with a session of
 * its own), the same bookie, the same cluster name, and its own ports. On Nereus it names the standalone's embedded metadata directory, so both brokers
 * use one EmbeddedFdb (shared per directory within a process, as brokers share a FoundationDB cluster), and has an
 * object store directory of its own (a filesystem store is held by one broker).
 *
 * <p>Close it before the standalone, which owns the bookie and the metadata store. Not thread-safe.
 */
final class SecondBroker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SecondBroker.class);

    private final PulsarService pulsar;

    private SecondBroker(PulsarService pulsar) {
        this.pulsar = pulsar;
    }

    /**
     * Starts a broker beside {@code first}, with the harness's settings changed by {@code customize}.
     *
     * @throws IllegalStateException if it does not start within {@link StandaloneBroker#START_TIMEOUT}
     */
    static SecondBroker start(StandaloneBroker first, String name,
            java.util.function.Consumer<ServiceConfiguration> customize) throws Exception {
        ServiceConfiguration firstConf = first.config();
        // A standalone answers lookups with "connect through my service URL" when it advertises a loopback address
        // (TopicLookupBase.shouldRedirectThroughServiceUrl), which sends clients of the other broker's bundles to a
        // broker that does not own them; the flag is read at every lookup, so the first broker stops acting as one.
        firstConf.setRunningStandalone(false);
        Path dir = first.brokerDir().resolve(name);
        Files.createDirectories(dir);
        ServiceConfiguration conf = new ServiceConfiguration();
        conf.setClusterName(firstConf.getClusterName());
        conf.setMetadataStoreUrl(firstConf.getMetadataStoreUrl());
        conf.setConfigurationMetadataStoreUrl(firstConf.getConfigurationMetadataStoreUrl());
        conf.setAdvertisedAddress("127.0.0.1");
        conf.setBookkeeperNumberOfChannelsPerBookie(1);
        StandaloneBroker.harnessSettings(conf, first.storage(), first.nereusMetadataDir(), dir.resolve("objects"));
        customize.accept(conf);

        PulsarService pulsar = new PulsarService(conf);
        ExecutorService starter = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "second-broker-start-" + name);
            t.setDaemon(true);
            return t;
        });
        Future<?> started = starter.submit(() -> {
            pulsar.start();
            return null;
        });
        try {
            started.get(StandaloneBroker.START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            started.cancel(true);
            closeQuietly(pulsar);
            throw new IllegalStateException("second broker " + name + " did not start", e);
        } finally {
            starter.shutdownNow();
        }
        LOG.info("Started second broker {} at {} (id {})", name, pulsar.getBrokerServiceUrl(), pulsar.getBrokerId());
        return new SecondBroker(pulsar);
    }

    PulsarService pulsarService() {
        return pulsar;
    }

    /** The binary protocol URL, e.g. {@code pulsar://127.0.0.1:41234}. */
    String serviceUrl() {
        return pulsar.getBrokerServiceUrl();
    }

    /** The id other brokers and the admin API know this broker by ({@code host:webPort}). */
    String brokerId() {
        return pulsar.getBrokerId();
    }

    @Override
    public void close() {
        closeQuietly(pulsar);
    }

    private static void closeQuietly(PulsarService pulsar) {
        try {
            pulsar.close();
        } catch (Exception e) {
            LOG.warn("Closing the second broker failed", e);
        }
    }
}
