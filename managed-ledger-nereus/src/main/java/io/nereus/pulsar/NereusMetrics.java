package io.nereus.pulsar;

import io.nereus.metadata.MetadataCensus;
import io.nereus.stream.StreamStorage;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The storage's metrics in the broker's OpenTelemetry (exported as Pulsar exports its own, when the broker enables
 * OpenTelemetry): the metadata census (keys and bytes, keys by kind), what the garbage collector has done, and the
 * WAL's group commit. Every instrument is observed from the storage's counters when the exporter reads it; closing
 * this unregisters them.
 */
final class NereusMetrics implements AutoCloseable {
    private static final AttributeKey<String> KIND = AttributeKey.stringKey("nereus.metadata.kind");
    private final List<AutoCloseable> instruments = new ArrayList<>();

    NereusMetrics(OpenTelemetry openTelemetry, StreamStorage storage) {
        Meter meter = openTelemetry.getMeter("io.nereus");
        instruments.add(meter.gaugeBuilder("nereus.metadata.keys").ofLongs().setUnit("{key}")
                .setDescription("Keys of the Nereus metadata at the last census, in all and by kind")
                .buildWithCallback(m -> storage.collectorStats().census().ifPresent(c -> {
                    m.record(c.keys());
                    for (Map.Entry<String, Long> e : c.byKind().entrySet()) {
                        m.record(e.getValue(), Attributes.of(KIND, e.getKey()));
                    }
                })));
        instruments.add(meter.gaugeBuilder("nereus.metadata.size").ofLongs().setUnit("By")
                .setDescription("Key and value bytes of the Nereus metadata at the last census")
                .buildWithCallback(m -> storage.collectorStats().census().map(MetadataCensus::bytes)
                        .ifPresent(m::record)));
        counter(meter, "nereus.collector.wal.slices.collected", "{slice}",
                "WAL slices whose BookKeeper ledger the collector deleted", s -> s.collectorStats().slicesCollected(),
                storage);
        counter(meter, "nereus.collector.objects.deleted", "{object}",
                "Retired and unreferenced stream objects the collector deleted",
                s -> s.collectorStats().objectsDeleted() + s.collectorStats().orphansDeleted(), storage);
        counter(meter, "nereus.collector.streams.purged", "{stream}",
                "Deleted streams whose objects and metadata the collector purged",
                s -> s.collectorStats().streamsPurged(), storage);
        instruments.add(meter.gaugeBuilder("nereus.collector.wal.slices.held").ofLongs().setUnit("{slice}")
                .setDescription("Sealed WAL slices the collector's last pass found still holding the only copy of data")
                .buildWithCallback(m -> m.record(storage.collectorStats().slicesHeld())));
        counter(meter, "nereus.wal.batches", "{batch}", "WAL batches written to BookKeeper",
                s -> s.walStats().batchesWritten(), storage);
        counter(meter, "nereus.wal.commit.transactions", "{transaction}",
                "Metadata transactions committing WAL batches (one per commit group)",
                s -> s.walStats().commitTransactions(), storage);
    }

    private interface Reading {
        long read(StreamStorage s);
    }

    private void counter(Meter meter, String name, String unit, String description, Reading reading,
            StreamStorage storage) {
        instruments.add(meter.counterBuilder(name).setUnit(unit).setDescription(description)
                .buildWithCallback(m -> m.record(reading.read(storage))));
    }

    @Override
    public void close() {
        for (AutoCloseable i : instruments) {
            try {
                i.close();
            } catch (Exception e) {
                // an instrument that fails to unregister stays; nothing else depends on it
            }
        }
        instruments.clear();
    }
}
