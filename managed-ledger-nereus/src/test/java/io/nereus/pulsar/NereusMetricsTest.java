package io.nereus.pulsar;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.AppendEntry;
import io.nereus.stream.NereusStream;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.testing.BookKeeperCluster;
import io.nereus.testing.EngineFixture;
import io.nereus.wal.WalConfig;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The storage's OpenTelemetry instruments read what the storage did: the census, the collector, the WAL. */
@Timeout(120)
class NereusMetricsTest {
    @RegisterExtension
    static final BookKeeperCluster BK = new BookKeeperCluster();

    private static Map<String, List<LongPointData>> points(Collection<MetricData> metrics) {
        return metrics.stream().collect(Collectors.toMap(MetricData::getName, m -> List.copyOf(
                m.getType() == io.opentelemetry.sdk.metrics.data.MetricDataType.LONG_GAUGE
                        ? m.getLongGaugeData().getPoints() : m.getLongSumData().getPoints())));
    }

    @Test
    void instruments_readTheCensusTheCollectorAndTheWal() {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        try (EngineFixture engine = new EngineFixture(BK, "metrics");
                OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                        .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build()).build()) {
            StreamStorage storage = engine.storage("broker-a", StorageConfig.defaults().withWal(
                    WalConfig.defaults().withQuorums(1, 1, 1).withFlush(64 * 1024, Duration.ofMillis(1))));
            NereusMetrics metrics = new NereusMetrics(otel, storage);
            NereusStream s = await(storage.openStream("t"));
            await(s.acquireWriter());
            for (int i = 0; i < 5; i++) {
                await(s.append(List.of(AppendEntry.of(("m" + i).getBytes(StandardCharsets.UTF_8)))));
            }
            assertThat(points(reader.collectAllMetrics())).doesNotContainKey("nereus.metadata.keys")
                    .containsKey("nereus.wal.batches");

            await(storage.collectGarbage());
            Map<String, List<LongPointData>> after = points(reader.collectAllMetrics());
            long census = storage.collectorStats().census().orElseThrow().keys();
            assertThat(after.get("nereus.metadata.keys")).anySatisfy(p -> {
                assertThat(p.getAttributes().isEmpty()).isTrue();
                assertThat(p.getValue()).isEqualTo(census).isPositive();
            }).anySatisfy(p -> {
                assertThat(p.getAttributes().get(AttributeKey.stringKey("nereus.metadata.kind"))).isEqualTo("index");
                assertThat(p.getValue()).isEqualTo(5);
            });
            assertThat(after.get("nereus.metadata.size").get(0).getValue()).isPositive();
            assertThat(after.get("nereus.wal.batches").get(0).getValue()).isEqualTo(storage.walStats().batchesWritten())
                    .isPositive();
            assertThat(after.get("nereus.collector.wal.slices.collected").get(0).getValue()).isZero();

            metrics.close();
            assertThat(points(reader.collectAllMetrics())).doesNotContainKey("nereus.metadata.keys");
        }
    }
}
