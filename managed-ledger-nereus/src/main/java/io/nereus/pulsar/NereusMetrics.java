package io.nereus.pulsar;

import io.nereus.generation.MaterializerStats;
import io.nereus.generation.ResolverStats;
import io.nereus.metadata.MetadataCensus;
import io.nereus.stream.StreamStorage;
import io.nereus.stream.TailCacheStats;
import io.nereus.wal.WalObserver;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.metrics.ObservableLongMeasurement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The storage's metrics in the broker's OpenTelemetry, named as Pulsar 4 names its own ({@code pulsar.storage.nereus.*},
 * units per the OpenTelemetry semantic conventions, durations in seconds); {@code conf/README.md} lists them. The
 * broker exports them with its own OpenTelemetry metrics when that is enabled (a Prometheus exporter on a port of
 * its own, not the broker's {@code /metrics}).
 *
 * <p>Lifecycle: made before the storage, whose WAL writer reports add and commit latencies to
 * {@link #walObserver()}: recorded into histograms by the writer's thread and its commits' callbacks, once per batch
 * or transaction, never per entry (the OpenTelemetry SDK's histogram takes a lock per recording that only a
 * collection contends). {@link #observe} then registers the instruments read from the storage's counters whenever
 * the exporter collects. Closing unregisters those; the histograms stay with the meter, as synchronous instruments
 * do.
 */
final class NereusMetrics implements AutoCloseable {
    static final String SCOPE = "io.nereus";
    static final String PREFIX = "pulsar.storage.nereus.";

    static final AttributeKey<String> METADATA_KIND = AttributeKey.stringKey("pulsar.nereus.metadata.kind");
    static final AttributeKey<String> CACHE_STATUS = AttributeKey.stringKey("pulsar.nereus.cache.operation.status");
    static final AttributeKey<String> READ_SOURCE = AttributeKey.stringKey("pulsar.nereus.read.source");
    static final AttributeKey<String> REPAIR_OUTCOME = AttributeKey.stringKey("pulsar.nereus.repair.outcome");
    static final AttributeKey<String> MATERIALIZER_OPERATION =
            AttributeKey.stringKey("pulsar.nereus.materializer.operation");

    private static final Attributes HIT = Attributes.of(CACHE_STATUS, "hit");
    private static final Attributes MISS = Attributes.of(CACHE_STATUS, "miss");
    private static final Attributes FROM_TAIL = Attributes.of(READ_SOURCE, "tail_cache");
    private static final Attributes FROM_WAL = Attributes.of(READ_SOURCE, "wal");
    private static final Attributes FROM_OBJECT = Attributes.of(READ_SOURCE, "object");
    private static final Attributes REPAIRED = Attributes.of(REPAIR_OUTCOME, "repaired");
    private static final Attributes PROVED_TRIMMED = Attributes.of(REPAIR_OUTCOME, "proved_trimmed");
    private static final Attributes INCOMPLETE = Attributes.of(REPAIR_OUTCOME, "incomplete");
    private static final Attributes NO_EVIDENCE = Attributes.of(REPAIR_OUTCOME, "no_evidence");
    private static final Attributes MATERIALIZE = Attributes.of(MATERIALIZER_OPERATION, "materialize");
    private static final Attributes MERGE = Attributes.of(MATERIALIZER_OPERATION, "merge");

    /** Seconds; from a local bookie's sub-millisecond add to a stalled ensemble's. */
    private static final List<Double> DURATION_BUCKETS = List.of(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
            0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0);
    /** A batch's size as a fraction of the size that cuts it. */
    private static final List<Double> FILL_BUCKETS = List.of(0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.5, 2.0);
    private static final double NANOS_PER_SECOND = 1e9;

    private final Meter meter;
    private final WalTimings walTimings;
    private final List<AutoCloseable> instruments = new ArrayList<>();

    /**
     * Instruments in {@code openTelemetry}; {@code flushBytes} is the WAL's batch cut size
     * ({@code nereusWalFlushBytes}), the denominator of a batch's fill.
     */
    NereusMetrics(OpenTelemetry openTelemetry, int flushBytes) {
        this.meter = openTelemetry.getMeter(SCOPE);
        this.walTimings = new WalTimings(
                meter.histogramBuilder(PREFIX + "wal.batch.fill").setUnit("1")
                        .setDescription("Size of each WAL batch written, as a fraction of the size that cuts a batch")
                        .setExplicitBucketBoundariesAdvice(FILL_BUCKETS).build(),
                meter.histogramBuilder(PREFIX + "wal.add.duration").setUnit("s")
                        .setDescription("Latency of BookKeeper adds of WAL batches, from issue to acknowledgement")
                        .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS).build(),
                meter.histogramBuilder(PREFIX + "wal.commit.duration").setUnit("s")
                        .setDescription("Latency of the metadata transactions committing WAL batches, retries included")
                        .setExplicitBucketBoundariesAdvice(DURATION_BUCKETS).build(),
                flushBytes);
    }

    /** Where the storage's WAL writer reports its add and commit latencies. */
    WalObserver walObserver() {
        return walTimings;
    }

    /** Registers the instruments read from {@code storage}'s counters; once. */
    NereusMetrics observe(StreamStorage storage) {
        if (!instruments.isEmpty()) {
            throw new IllegalStateException("already observing a storage");
        }
        observeWal(storage);
        observeReads(storage);
        observeBackground(storage);
        return this;
    }

    private void observeWal(StreamStorage s) {
        counter("wal.batch.count", "{batch}", "WAL batches written to BookKeeper and acknowledged",
                m -> m.record(s.walStats().batchesWritten()));
        counter("wal.batch.size", "By", "Encoded bytes of the WAL batches written to BookKeeper",
                m -> m.record(s.walStats().bytesWritten()));
        counter("wal.batch.entry.count", "{entry}", "Entries in the WAL batches written to BookKeeper",
                m -> m.record(s.walStats().entriesWritten()));
        counter("wal.commit.group.count", "{group}",
                "Groups of consecutive acknowledged WAL batches committed together",
                m -> m.record(s.walStats().commitGroups()));
        counter("wal.commit.transaction.count", "{transaction}",
                "Metadata transactions committing WAL batches, recommits after a refused stream or slice included",
                m -> m.record(s.walStats().commitTransactions()));
        counter("wal.commit.append.count", "{append}", "Stream appends (one per stream per batch) committed",
                m -> m.record(s.walStats().appendsCommitted()));
        counter("metadata.transaction.retry.count", "{retry}",
                "Metadata transactions re-run after a conflict or another retriable error",
                m -> m.record(s.metadataTransactionRetries()));
        counter("wal.read.size", "By", "Bytes fetched from WAL slices on the bookies (reads, repair, materializer)",
                m -> m.record(s.walBytesRead()));
        counter("wal.read.request.count", "{request}", "BookKeeper read requests made of WAL slices",
                m -> m.record(s.walReadRequests()));
        counter("wal.mirror.read.size", "By", "Bytes of WAL batches read from the local mirrors of this broker's"
                + " slices instead of from the bookies", m -> m.record(s.walMirrors().bytesRead()));
        gauge("wal.mirror.size", "By", "Bytes of WAL batches the local mirrors of this broker's slices hold",
                m -> m.record(s.walMirrors().bytes()));
        counter("wal.mirror.dropped.count", "{slice}", "WAL slices not mirrored locally for want of space, and"
                + " mirrors given up before their slice was materialized: those slices are read from the bookies",
                m -> m.record(s.walMirrors().droppedMirrors()));
        counter("wal.mirror.skipped.count", "{batch}", "WAL batches not mirrored locally because every staging buffer"
                + " of the mirrors waited for the disk: read from the bookies",
                m -> m.record(s.walMirrors().skippedBatches()));
    }

    private void observeReads(StreamStorage s) {
        counter("tail_cache.operation.count", "{operation}", "Reads of committed entries tried in the tail cache",
                m -> {
                    TailCacheStats t = s.tailCacheStats();
                    m.record(t.hits(), HIT);
                    m.record(t.misses(), MISS);
                });
        counter("tail_cache.eviction.count", "{entry}", "Entries evicted from the tail cache to stay within its size",
                m -> m.record(s.tailCacheStats().evicted()));
        gauge("tail_cache.size", "By", "Payload bytes the tail cache holds",
                m -> m.record(s.tailCacheStats().bytes()));
        counter("resolver.operation.count", "{operation}",
                "Resolutions of reads that missed the tail cache: hit = a cached index record, miss = an index lookup",
                m -> {
                    ResolverStats r = s.resolverStats();
                    m.record(r.cacheHits(), HIT);
                    m.record(r.indexLookups(), MISS);
                });
        counter("read.size", "By", "Payload bytes read by topics, by source: tail cache, WAL (generation 0) or object"
                + " (a higher generation)", m -> {
                    ResolverStats r = s.resolverStats();
                    m.record(s.tailCacheStats().hitBytes(), FROM_TAIL);
                    m.record(r.walBytes(), FROM_WAL);
                    m.record(r.objectBytes(), FROM_OBJECT);
                });
        counter("object.read.size", "By", "Bytes fetched from the object store by reads and merges",
                m -> m.record(s.objectBytesRead()));
        counter("object.block_cache.operation.count", "{operation}", "Object block lookups in the block cache",
                m -> {
                    m.record(s.objectBlocks().hits(), HIT);
                    m.record(s.objectBlocks().misses(), MISS);
                });
        counter("object.block_cache.read_ahead.count", "{block}",
                "Object blocks fetched into the block cache ahead of the reads that use them",
                m -> m.record(s.objectBlocks().readAheads()));
        counter("repair.count", "{repair}", "Generation-0 repairs of a missing index record, by outcome", m -> {
            ResolverStats r = s.resolverStats();
            m.record(r.repaired(), REPAIRED);
            m.record(r.provedTrimmed(), PROVED_TRIMMED);
            m.record(r.incomplete(), INCOMPLETE);
            m.record(r.noEvidence(), NO_EVIDENCE);
        });
        counter("quarantine.count", "{record}", "Index records quarantined because their copy could not be read",
                m -> m.record(s.quarantinedRecords()));
    }

    private void observeBackground(StreamStorage s) {
        counter("materializer.object.count", "{object}",
                "Stream objects published: materialize = from WAL slices, merge = from smaller objects", m -> {
                    MaterializerStats ms = s.materializerStats();
                    m.record(ms.objectsPublished(), MATERIALIZE);
                    m.record(ms.mergesPublished(), MERGE);
                });
        counter("materializer.size", "By", "Payload bytes in the stream objects published",
                m -> m.record(s.materializerStats().bytesPublished()));
        counter("materializer.spill.size", "By", "Bytes the materializer wrote to local spill files (a slice's"
                + " entries that did not fit in its memory, each read back once)",
                m -> m.record(s.materializerStats().bytesSpilled()));
        counter("materializer.failure.count", "{step}", "Materializer steps that failed and are retried later",
                m -> m.record(s.materializerStats().failedSteps()));
        gauge("materializer.slice.pending", "{slice}", "Sealed WAL slices still holding data to materialize",
                m -> m.record(s.materializerStats().pendingSlices()));
        counter("collector.wal.slice.collected.count", "{slice}",
                "WAL slices whose BookKeeper ledger the collector deleted",
                m -> m.record(s.collectorStats().slicesCollected()));
        counter("collector.object.deleted.count", "{object}",
                "Retired and unreferenced stream objects the collector deleted",
                m -> m.record(s.collectorStats().objectsDeleted() + s.collectorStats().orphansDeleted()));
        counter("collector.stream.purged.count", "{stream}",
                "Deleted streams whose objects and metadata the collector purged",
                m -> m.record(s.collectorStats().streamsPurged()));
        gauge("collector.wal.slice.held", "{slice}",
                "Sealed WAL slices the collector's last pass found still holding the only copy of data",
                m -> m.record(s.collectorStats().slicesHeld()));
        gauge("metadata.key.count", "{key}", "Keys of the Nereus metadata at the last census, in all and by kind",
                m -> s.collectorStats().census().ifPresent(c -> {
                    m.record(c.keys());
                    for (Map.Entry<String, Long> e : c.byKind().entrySet()) {
                        m.record(e.getValue(), Attributes.of(METADATA_KIND, e.getKey()));
                    }
                }));
        gauge("metadata.size", "By", "Key and value bytes of the Nereus metadata at the last census",
                m -> s.collectorStats().census().map(MetadataCensus::bytes).ifPresent(m::record));
    }

    private void counter(String name, String unit, String description, Consumer<ObservableLongMeasurement> read) {
        instruments.add(meter.counterBuilder(PREFIX + name).setUnit(unit).setDescription(description)
                .buildWithCallback(read));
    }

    private void gauge(String name, String unit, String description, Consumer<ObservableLongMeasurement> read) {
        instruments.add(meter.gaugeBuilder(PREFIX + name).ofLongs().setUnit(unit).setDescription(description)
                .buildWithCallback(read));
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

    /** Records the WAL writer's timings (see {@link WalObserver} for the threads); no allocation. */
    private record WalTimings(DoubleHistogram fill, DoubleHistogram add, DoubleHistogram commit, int flushBytes)
            implements WalObserver {
        @Override
        public void batchWritten(int bytes, long nanos) {
            fill.record((double) bytes / flushBytes);
            add.record(nanos / NANOS_PER_SECOND);
        }

        @Override
        public void commitFinished(long nanos) {
            commit.record(nanos / NANOS_PER_SECOND);
        }
    }
}
