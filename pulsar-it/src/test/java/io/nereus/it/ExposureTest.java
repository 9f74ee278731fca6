package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nereus.testing.S3ProxyServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Appender;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a broker on Nereus shows of the storage's secrets through the surfaces an operator or a monitoring system
 * reads (issue 15 item 5): a broker whose object store is a real S3-compatible server (S3Proxy) with static keys
 * in the broker's configuration, written to and read from, then every admin and stats endpoint a stock broker
 * serves fetched as raw HTTP (topic stats and internal stats with ledger metadata, broker-stats, Prometheus
 * metrics, the runtime and internal configuration), and every log event of the run at INFO captured: neither key
 * appears anywhere.
 *
 * <p>Not covered here: the standalone distribution's own bookie prints {@code standalone.conf} (every key, Nereus's
 * too) at start, as it does for stock's secrets; conf/README.md tells operators to give S3 keys through the AWS
 * default chain instead. The harness's bookie reads its own file, so this test does not see that.
 */
@Timeout(300)
@ExtendWith(S3ProxyServer.class)
class ExposureTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void s3Keys_neverOnAdminStatsMetricsOrLogs(S3ProxyServer s3) throws Exception {
        assumeTrue(StorageMode.current() == StorageMode.NEREUS, "the object store and its keys are the plugin's");
        String topic = "persistent://public/default/exposure";
        LogCapture logs = LogCapture.start();
        Map<String, String> served = new LinkedHashMap<>();
        try (StandaloneBroker broker = StandaloneBroker.start("ExposureTest", conf -> {
            conf.getProperties().remove(StandaloneBroker.NEREUS_OBJECTS_DIR_KEY);
            conf.getProperties().setProperty("nereusObjectStoreType", "s3");
            conf.getProperties().setProperty("nereusS3Bucket", S3ProxyServer.BUCKET);
            conf.getProperties().setProperty("nereusS3Prefix", "exposure");
            conf.getProperties().setProperty("nereusS3Endpoint", s3.endpoint().toString());
            conf.getProperties().setProperty("nereusS3Region", S3ProxyServer.REGION);
            conf.getProperties().setProperty("nereusS3PathStyle", "true");
            conf.getProperties().setProperty("nereusS3AccessKey", S3ProxyServer.ACCESS_KEY);
            conf.getProperties().setProperty("nereusS3SecretKey", S3ProxyServer.SECRET_KEY);
        })) {
            PulsarClient client = broker.newClient();
            try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).create();
                    Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic)
                            .subscriptionName("sub").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                            .subscribe()) {
                for (int i = 0; i < 100; i++) {
                    producer.send("m-" + i);
                }
                for (int i = 0; i < 100; i++) {
                    consumer.acknowledge(consumer.receive(30, TimeUnit.SECONDS));
                }
            }
            PulsarAdmin admin = broker.newAdmin();
            admin.topics().unload(topic); // the stream's writer closes: its WAL data is now a sealed slice's
            assertThat(admin.topics().getInternalStats(topic, true).ledgers)
                    .as("internal stats still served after the unload").isNotEmpty();

            String base = broker.webServiceUrl();
            String path = topic.replace("persistent://", "persistent/");
            for (String endpoint : List.of(
                    "/admin/v2/" + path + "/stats",
                    "/admin/v2/" + path + "/internalStats?metadata=true",
                    "/admin/v2/" + path + "/internal-info",
                    "/admin/v2/broker-stats/topics",
                    "/admin/v2/broker-stats/metrics",
                    "/admin/v2/broker-stats/mbeans",
                    "/admin/v2/broker-stats/allocator-stats/default",
                    "/admin/v2/broker-stats/load-report",
                    "/admin/v2/brokers/configuration/runtime",
                    "/admin/v2/brokers/configuration/values",
                    "/admin/v2/brokers/internal-configuration",
                    "/metrics/")) {
                served.put(endpoint, get(base + endpoint));
            }
        } finally {
            logs.stop();
        }

        assertThat(served.get("/admin/v2/" + topic.replace("persistent://", "persistent/")
                + "/internalStats?metadata=true")).as("the internal stats were served").contains("nereus stream");
        assertThat(served.get("/admin/v2/brokers/configuration/runtime")).as("the runtime configuration was served")
                .contains("managedLedgerStorageClassName");
        for (Map.Entry<String, String> e : served.entrySet()) {
            assertThat(e.getValue()).as(e.getKey()).doesNotContain(S3ProxyServer.SECRET_KEY)
                    .doesNotContain(S3ProxyServer.ACCESS_KEY);
        }
        assertThat(logs.events()).as("log events captured while the broker ran").isNotEmpty()
                .anySatisfy(line -> assertThat(line).as("the start line names the store and the kind of credentials")
                        .contains("Nereus storage started").contains(S3ProxyServer.BUCKET).contains("credentials static"));
        assertThat(logs.events()).allSatisfy(line -> assertThat(line)
                .doesNotContain(S3ProxyServer.SECRET_KEY).doesNotContain(S3ProxyServer.ACCESS_KEY));
    }

    private static String get(String url) throws Exception {
        HttpResponse<String> response = HttpClient.newBuilder().connectTimeout(TIMEOUT).build().send(
                HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET().build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        assertThat(response.statusCode()).as("GET " + url + ": " + response.body()).isEqualTo(200);
        return response.body();
    }

    /**
     * Every log event of every logger at INFO and above, formatted with its parameters and throwable, while the
     * console keeps the test configuration's levels.
     */
    private static final class LogCapture {
        private final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
        private final LoggerContext context = (LoggerContext) LogManager.getContext(false);
        private final Appender appender;
        private final Level rootLevel;
        private final Map<Appender, Level> rootAppenders = new LinkedHashMap<>();

        private LogCapture() {
            appender = new AbstractAppender("exposure-capture", null, null, true, Property.EMPTY_ARRAY) {
                @Override
                public void append(LogEvent event) {
                    StringBuilder line = new StringBuilder(event.getLoggerName()).append(' ')
                            .append(event.getMessage().getFormattedMessage());
                    for (Throwable t = event.getThrown(); t != null; t = t.getCause()) {
                        line.append(" | ").append(t);
                    }
                    lines.add(line.toString());
                }
            };
            Configuration config = context.getConfiguration();
            LoggerConfig root = config.getRootLogger();
            rootLevel = root.getLevel();
            root.getAppenders().values().forEach(a -> rootAppenders.put(a, rootLevel));
        }

        static LogCapture start() {
            LogCapture capture = new LogCapture();
            capture.appender.start();
            Configuration config = capture.context.getConfiguration();
            LoggerConfig root = config.getRootLogger();
            for (Appender a : capture.rootAppenders.keySet()) {
                root.removeAppender(a.getName());
                root.addAppender(a, capture.rootLevel, null); // the console keeps its level
            }
            root.addAppender(capture.appender, Level.INFO, null);
            root.setLevel(Level.INFO);
            capture.context.updateLoggers();
            return capture;
        }

        void stop() {
            Configuration config = context.getConfiguration();
            LoggerConfig root = config.getRootLogger();
            root.removeAppender(appender.getName());
            for (Map.Entry<Appender, Level> e : rootAppenders.entrySet()) {
                root.removeAppender(e.getKey().getName());
                root.addAppender(e.getKey(), null, null);
            }
            root.setLevel(rootLevel);
            context.updateLoggers();
            appender.stop();
        }

        List<String> events() {
            return new ArrayList<>(lines);
        }
    }
}
