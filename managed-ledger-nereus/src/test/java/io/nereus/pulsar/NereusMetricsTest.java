package io.nereus.pulsar;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.ReadView;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricDataType;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The storage's OpenTelemetry instruments read what the storage did: the WAL, its latencies, the reads by source,
 * the tail cache and the resolver, the census and the collector.
 */
@Timeout(120)
class NereusMetricsTest {
    private static final String P = NereusMetrics.PREFIX;

    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static Map<String, MetricData> byName(Collection<MetricData> metrics) {
        return metrics.stream().collect(Collectors.toMap(MetricData::getName, m -> m));
    }

    private static List<LongPointData> longs(Map<String, MetricData> metrics, String name) {
        MetricData m = metrics.get(P + name);
        assertThat(m).as(name).isNotNull();
        return List.copyOf(m.getType() == MetricDataType.LONG_GAUGE ? m.getLongGaugeData().getPoints()
                : m.getLongSumData().getPoints());
    }

    private static long value(Map<String, MetricData> metrics, String name, Attributes attributes) {
        return longs(metrics, name).stream().filter(p -> p.getAttributes().equals(attributes))
                .mapToLong(LongPointData::getValue).sum();
    }

    private static long value(Map<String, MetricData> metrics, String name) {
        return value(metrics, name, Attributes.empty());
    }

    private static HistogramPointData histogram(Map<String, MetricData> metrics, String name) {
        MetricData m = metrics.get(P + name);
        assertThat(m).as(name).isNotNull();
        return m.getHistogramData().getPoints().iterator().next();
    }

    /** Every instrument is in the metrics table of conf/README.md, and the table names no other. */
    private static void assertDocumented(Collection<String> names) {
        String dir = System.getProperty("nereus.repo.dir");
        assertThat(dir).as("system property nereus.repo.dir (set in managed-ledger-nereus/pom.xml)").isNotBlank();
        List<String> documented;
        try {
            documented = Files.readAllLines(Path.of(dir, "conf", "README.md")).stream()
                    .filter(l -> l.startsWith("| `" + P)).map(l -> l.substring(3, l.indexOf('`', 3))).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(documented).as("the metrics table of conf/README.md").containsExactlyInAnyOrderElementsOf(names);
    }

    private static Attributes attr(AttributeKey<String> key, String value) {
        return Attributes.of(key, value);
    }

    @Test
    void instruments_moveWithAppendsReadsAndCollection() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (EngineFixture engine = new EngineFixture(BK, "metrics");
                OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                        .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build()) {
            WalConfig wal = WalConfig.defaults().withQuorums(1, 1, 1).withFlush(64 * 1024, Duration.ofMillis(1));
            NereusMetrics metrics = new NereusMetrics(otel, wal.flushBytes());
            StreamStorage storage = engine.storage("broker-a", StorageConfig.defaults().withWal(wal),
                    Clock.systemUTC(), metrics.walObserver());
            metrics.observe(storage);
            NereusStream s = await(storage.openStream("t"));
            await(s.acquireWriter());
            for (int i = 0; i < 5; i++) {
                await(s.append(List.of(AppendEntry.of(("m" + i).getBytes(StandardCharsets.UTF_8)))));
            }
            Map<String, MetricData> written = byName(reader.collectAllMetrics());
            assertThat(written).doesNotContainKey(P + "metadata.key.count");
            assertThat(value(written, "wal.batch.count")).isEqualTo(storage.walStats().batchesWritten()).isPositive();
            assertThat(value(written, "wal.batch.size")).isGreaterThanOrEqualTo(10);
            assertThat(value(written, "wal.batch.entry.count")).isEqualTo(5);
            assertThat(value(written, "wal.commit.append.count")).isEqualTo(5);
            assertThat(value(written, "wal.commit.transaction.count")).isPositive()
                    .isGreaterThanOrEqualTo(value(written, "wal.commit.group.count"));
            assertThat(histogram(written, "wal.add.duration").getCount())
                    .isEqualTo(value(written, "wal.batch.count"));
            assertThat(histogram(written, "wal.add.duration").getSum()).isPositive();
            assertThat(histogram(written, "wal.commit.duration").getCount())
                    .isEqualTo(value(written, "wal.commit.transaction.count"));
            assertThat(histogram(written, "wal.batch.fill").getMax()).isPositive().isLessThan(1.0);

            // the writer's own read is served by the tail cache; once cleared, by the resolver from the WAL
            await(s.read(ReadView.COMMITTED, 0, 5, 1 << 20, BoundaryMode.EXACT_START));
            storage.clearTailCache();
            await(s.read(ReadView.COMMITTED, 0, 5, 1 << 20, BoundaryMode.EXACT_START));
            Map<String, MetricData> read = byName(reader.collectAllMetrics());
            Attributes hit = attr(NereusMetrics.CACHE_STATUS, "hit");
            Attributes miss = attr(NereusMetrics.CACHE_STATUS, "miss");
            assertThat(value(read, "tail_cache.operation.count", hit)).isPositive();
            assertThat(value(read, "tail_cache.operation.count", miss)).isPositive();
            assertThat(value(read, "resolver.operation.count", miss)).isPositive();
            assertThat(value(read, "read.size", attr(NereusMetrics.READ_SOURCE, "tail_cache"))).isEqualTo(10);
            assertThat(value(read, "read.size", attr(NereusMetrics.READ_SOURCE, "wal"))).isEqualTo(10);
            assertThat(value(read, "read.size", attr(NereusMetrics.READ_SOURCE, "object"))).isZero();
            assertThat(value(read, "wal.read.size")).isPositive();
            assertThat(value(read, "wal.read.request.count")).isPositive();
            assertThat(value(read, "wal.mirror.read.size")).as("an open slice's mirror serves no read").isZero();
            assertThat(value(read, "wal.mirror.size")).as("the open slice's mirror").isPositive();
            assertThat(value(read, "repair.count", attr(NereusMetrics.REPAIR_OUTCOME, "repaired"))).isZero();

            await(storage.collectGarbage());
            Map<String, MetricData> after = byName(reader.collectAllMetrics());
            long census = storage.collectorStats().census().orElseThrow().keys();
            assertThat(value(after, "metadata.key.count")).isEqualTo(census).isPositive();
            // the 5 appends into one slice are one generation-0 record (a run)
            assertThat(value(after, "metadata.key.count", attr(NereusMetrics.METADATA_KIND, "index"))).isEqualTo(1);
            assertThat(value(after, "metadata.size")).isPositive();
            assertThat(value(after, "collector.wal.slice.collected.count")).isZero();
            assertDocumented(after.keySet());

            metrics.close();
            assertThat(byName(reader.collectAllMetrics())).doesNotContainKey(P + "metadata.key.count")
                    .doesNotContainKey(P + "wal.batch.count");
        }
    }
}
