package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The storage's figures on a real broker's metrics endpoints, scraped as Prometheus scrapes them. Pulsar 4.0.8's
 * {@code /metrics} serves only its classic metrics; its OpenTelemetry metrics, Nereus's among them, are served by the
 * OpenTelemetry Prometheus exporter on a port of its own once the OpenTelemetry SDK is enabled, which a standalone
 * reads from the environment or from system properties ({@code otel.sdk.disabled=false},
 * {@code otel.metrics.exporter=prometheus}, {@code otel.exporter.prometheus.port}). This test sets those properties
 * while its broker starts and clears them after.
 *
 * <p>On Nereus the WAL, commit, tail-cache, resolver and read-bytes figures move when topics are written and read,
 * including a read from the earliest message that the tail cache (kept small here) no longer holds. On stock storage
 * ({@code -Dnereus.it.storage=bookkeeper}) no Nereus figure is exported while the broker's own are.
 */
@Timeout(300)
class MetricsTest {
    private static final Map<String, String> OTEL_PROPERTIES = Map.of(
            "otel.sdk.disabled", "false",
            "otel.metrics.exporter", "prometheus",
            "otel.exporter.prometheus.host", "127.0.0.1",
            "otel.traces.exporter", "none",
            "otel.logs.exporter", "none");
    private static final String PORT_PROPERTY = "otel.exporter.prometheus.port";
    /** Tail cache bytes: far fewer than the late reader's backlog, so its first reads miss. */
    private static final int TAIL_CACHE_BYTES = 64 * 1024;
    private static final int LARGE = 2_000;
    private static final int BACKLOG = 200;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    private static StandaloneBroker broker;
    private static int prometheusPort;

    @BeforeAll
    static void startBrokerWithOpenTelemetry() {
        prometheusPort = freePort();
        OTEL_PROPERTIES.forEach(System::setProperty);
        System.setProperty(PORT_PROPERTY, Integer.toString(prometheusPort));
        try {
            broker = StandaloneBroker.start(MetricsTest.class.getSimpleName(), conf -> conf.getProperties()
                    .setProperty("nereusTailCacheBytes", Integer.toString(TAIL_CACHE_BYTES)));
        } finally {
            OTEL_PROPERTIES.keySet().forEach(System::clearProperty);
            System.clearProperty(PORT_PROPERTY);
        }
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void metrics_moveWithWritesAndReads_onNereusOnly() throws Exception {
        PulsarClient client = broker.newClient();
        String topic = SharedBroker.uniqueTopic("metrics");
        Scrape before = scrapeOpenTelemetry();

        // a tailing subscription reads what was just written, from the tail cache on Nereus
        try (Consumer<byte[]> tailing = subscribe(client, topic, "tailing");
                Producer<byte[]> producer = client.newProducer(Schema.BYTES).topic(topic).enableBatching(false)
                        .create()) {
            sendAll(producer, 20, 100);
            receiveAll(tailing, 20);
            sendAll(producer, BACKLOG, LARGE);
            receiveAll(tailing, BACKLOG);
        }
        // a late subscription from the earliest message: its first reads miss the small tail cache
        try (Consumer<byte[]> late = subscribe(client, topic, "late")) {
            receiveAll(late, 20 + BACKLOG);
        }

        String classic = get(broker.webServiceUrl() + "/metrics/");
        assertThat(classic).as("the broker's classic /metrics answers").contains("pulsar_topics_count");
        assertThat(classic).as("/metrics serves no OpenTelemetry metric").doesNotContain("pulsar_storage_nereus");

        if (broker.storage() == StorageMode.BOOKKEEPER) {
            Scrape after = scrapeOpenTelemetry();
            assertThat(after.text()).as("the broker's own OpenTelemetry metrics are exported")
                    .contains("pulsar_broker_");
            assertThat(after.text()).as("no Nereus figure on stock storage").doesNotContain("pulsar_storage_nereus");
            return;
        }
        // counters are read when scraped, histograms recorded as batches complete: all are current once the
        // messages were received, but the commit of the last batch may finish after its consumer saw it
        Awaitility.await().atMost(TIMEOUT).untilAsserted(() -> {
            Scrape after = scrapeOpenTelemetry();
            assertMoved(before, after, "pulsar_storage_nereus_wal_batch_count_total", "", 1);
            assertMoved(before, after, "pulsar_storage_nereus_wal_batch_size_bytes_total", "", BACKLOG * LARGE);
            assertMoved(before, after, "pulsar_storage_nereus_wal_batch_entry_count_total", "", 20 + BACKLOG);
            assertMoved(before, after, "pulsar_storage_nereus_wal_add_duration_seconds_count", "", 1);
            assertMoved(before, after, "pulsar_storage_nereus_wal_batch_fill_ratio_count", "", 1);
            assertMoved(before, after, "pulsar_storage_nereus_wal_commit_transaction_count_total", "", 1);
            assertMoved(before, after, "pulsar_storage_nereus_wal_commit_duration_seconds_count", "", 1);
            assertMoved(before, after, "pulsar_storage_nereus_wal_commit_append_count_total", "", 1);
            assertMoved(before, after, "pulsar_storage_nereus_tail_cache_operation_count_total",
                    "pulsar_nereus_cache_operation_status=\"hit\"", 1);
            assertMoved(before, after, "pulsar_storage_nereus_tail_cache_operation_count_total",
                    "pulsar_nereus_cache_operation_status=\"miss\"", 1);
            assertMoved(before, after, "pulsar_storage_nereus_resolver_operation_count_total",
                    "pulsar_nereus_cache_operation_status=\"miss\"", 1);
            assertMoved(before, after, "pulsar_storage_nereus_read_size_bytes_total",
                    "pulsar_nereus_read_source=\"tail_cache\"", 1);
            // the late reader's backlog beyond the tail cache came from the WAL
            assertMoved(before, after, "pulsar_storage_nereus_read_size_bytes_total",
                    "pulsar_nereus_read_source=\"wal\"", BACKLOG * LARGE - TAIL_CACHE_BYTES);
            assertMoved(before, after, "pulsar_storage_nereus_wal_read_size_bytes_total", "",
                    BACKLOG * LARGE - TAIL_CACHE_BYTES);
            assertThat(after.sum("pulsar_storage_nereus_repair_count_total",
                    "pulsar_nereus_repair_outcome=\"repaired\"")).as("nothing to repair").isZero();
        });
    }

    private static void assertMoved(Scrape before, Scrape after, String name, String labels, double atLeast) {
        assertThat(after.text()).as("%s is exported; the Nereus samples are:%n%s", name,
                after.samples("pulsar_storage_nereus")).contains(name);
        assertThat(after.sum(name, labels) - before.sum(name, labels)).as(name + "{" + labels + "} moved")
                .isGreaterThanOrEqualTo(atLeast);
    }

    private static Consumer<byte[]> subscribe(PulsarClient client, String topic, String subscription)
            throws Exception {
        return client.newConsumer(Schema.BYTES).topic(topic).subscriptionName(subscription)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).receiverQueueSize(50).subscribe();
    }

    private static void sendAll(Producer<byte[]> producer, int count, int size) throws Exception {
        List<CompletableFuture<MessageId>> sent = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            sent.add(producer.sendAsync(new byte[size]));
        }
        CompletableFuture.allOf(sent.toArray(new CompletableFuture<?>[0])).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    private static void receiveAll(Consumer<byte[]> consumer, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            Message<byte[]> m = consumer.receive((int) TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertThat(m).as("message " + i + " of " + count).isNotNull();
            consumer.acknowledge(m);
        }
    }

    private static Scrape scrapeOpenTelemetry() {
        return new Scrape(get("http://127.0.0.1:" + prometheusPort + "/metrics"));
    }

    private static String get(String url) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as("GET " + url).isEqualTo(200);
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException("GET " + url, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: GET " + url, e);
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One scrape in the Prometheus text format. */
    private record Scrape(String text) {
        /** The samples whose name starts with {@code prefix}, a line each. */
        String samples(String prefix) {
            return String.join("\n", text.lines().filter(l -> l.startsWith(prefix)).toList());
        }

        /** The sum of the samples named {@code name} whose labels contain {@code labels}; 0 when there is none. */
        double sum(String name, String labels) {
            double sum = 0;
            for (String line : text.split("\n")) {
                if (line.startsWith("#") || line.isBlank()) {
                    continue;
                }
                int end = line.indexOf('{') >= 0 ? line.indexOf('{') : line.indexOf(' ');
                if (end > 0 && line.substring(0, end).equals(name) && line.contains(labels)) {
                    sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
            return sum;
        }
    }
}
