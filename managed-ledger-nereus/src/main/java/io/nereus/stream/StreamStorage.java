package io.nereus.stream;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.generation.Collector;
import io.nereus.generation.CollectorStats;
import io.nereus.generation.CompactionPolicy;
import io.nereus.generation.CompactionResult;
import io.nereus.generation.GenerationResolver;
import io.nereus.generation.GenerationZeroRepair;
import io.nereus.generation.Materializer;
import io.nereus.generation.MaterializerConfig;
import io.nereus.generation.MaterializerStats;
import io.nereus.generation.ObjectCoverage;
import io.nereus.generation.ObjectTargetReader;
import io.nereus.generation.ResolverStats;
import io.nereus.generation.TargetReaders;
import io.nereus.generation.TopicCompactor;
import io.nereus.generation.WalEvidenceRepair;
import io.nereus.generation.WalTargetReader;
import io.nereus.metadata.CatalogEntry;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamId;
import io.nereus.object.BlockCache;
import io.nereus.object.ObjectStore;
import io.nereus.object.ProcessFiles;
import io.nereus.runtime.EngineRuntime;
import io.nereus.wal.SliceMirrors;
import io.nereus.wal.WalObserver;
import io.nereus.wal.WalReader;
import io.nereus.wal.WalSliceRecovery;
import io.nereus.wal.WalStats;
import io.nereus.wal.WalWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import org.apache.bookkeeper.client.BookKeeper;

/**
 * One storage instance (one per broker): the WAL writer shared by all its streams, the WAL reader, the tail
 * cache, the generation resolver (reading WAL sections and stream objects), the materializer that writes
 * higher generations and the garbage collector that deletes what nothing serves any more, over a BookKeeper client, a {@link MetadataStore} and an {@link ObjectStore}
 * that the caller owns and closes. Streams are opened by managed-ledger name; one handle per stream.
 *
 * <p>Threads: the instance's own threads (the WAL writer's owner, the WAL timer {@code nereus-wal-timer}, the
 * materializer, the collector, the compactor) come from the {@link EngineRuntime} it is created with, daemon threads
 * ({@link EngineRuntime#THREADS}) unless a test gives another; its time comes from the {@link Clock} beside it. Its
 * futures complete on whichever thread finished the work: BookKeeper's, the WAL writer's, or the metadata store's
 * executor, which in the broker runs a continuation in place, on the thread that completed the step before it
 * ({@code MetadataExecutor}). A continuation must therefore never block; a front end hands results to an executor of
 * its own before its code runs, as the Pulsar facade does ({@code Callbacks.handOff}).
 */
public final class StreamStorage implements AutoCloseable {
    private final MetadataStore metadata;
    private final ObjectStore objects;
    private final String writerId;
    private final ScheduledExecutorService scheduler;
    private final WalWriter writer;
    private final WalReader reader;
    private final TailCache tail;
    private final GenerationResolver resolver;
    private final BlockCache blocks;
    private final ObjectTargetReader objectReader;
    private final Materializer materializer;
    private final Collector collector;
    private final TopicCompactor compactor;
    private final SliceMirrors mirrors;
    private final Map<String, CompletableFuture<NereusStream>> streams = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private StreamStorage(StorageConfig config, BookKeeper bk, MetadataStore metadata, ObjectStore objects,
            String writerId, Clock clock, WalObserver observer, Function<WalReader, GenerationZeroRepair> repair,
            EngineRuntime runtime) {
        this.metadata = Objects.requireNonNull(metadata, "metadata");
        this.objects = Objects.requireNonNull(objects, "objects");
        this.writerId = Objects.requireNonNull(writerId, "writerId");
        this.scheduler = runtime.scheduler("nereus-wal-timer");
        // mirrors serve the materializer: without background passes a slice would wait in its mirror for good
        MaterializerConfig copying = config.materializer();
        this.mirrors = copying.enabled()
                ? SliceMirrors.open(MIRROR_DIR, copying.mirrorBytes(), copying.mirrorStagingBytes(), runtime)
                : SliceMirrors.NONE;
        this.writer = new WalWriter(bk, metadata.streams(), metadata.slices(), config.wal(), writerId, runtime,
                scheduler, clock, observer, mirrors);
        this.reader = new WalReader(bk, config.wal().password(), config.cachedBatches(), mirrors);
        this.tail = new TailCache(config.tailCacheBytes());
        this.blocks = new BlockCache(config.materializer().blockCacheBytes(),
                config.materializer().readAheadBlocks());
        this.objectReader = new ObjectTargetReader(objects, blocks, OPEN_OBJECTS);
        this.resolver = new GenerationResolver(metadata.index(),
                new TargetReaders(new WalTargetReader(reader), objectReader), repair.apply(reader),
                config.cachedResolutions());
        this.materializer = new Materializer(config.materializer(), metadata.slices(), metadata.index(),
                metadata.streams(), reader, writer, objectReader, objects, writerId, clock,
                config.collector().maxPublishDelay(), resolver::invalidate, runtime);
        this.materializer.start();
        this.collector = new Collector(config.collector(), metadata.slices(), metadata.collection(),
                metadata.catalog(), bk, reader, objects, writerId, clock, runtime);
        this.collector.start();
        this.compactor = new TopicCompactor(metadata.index(), objectReader, objects, config.materializer().blockBytes(),
                clock, config.collector().maxPublishDelay(), resolver::invalidate, runtime);
    }

    /** Where the WAL slices' mirrors are written: the JVM's temporary directory, as the materializer's spill. */
    static final Path MIRROR_DIR = ProcessFiles.tempDir();

    /** Stream objects kept open (footer and index read) for readers. */
    static final int OPEN_OBJECTS = 1024;

    /** Wall-clock time one generation-0 repair may spend before it reports a retriable incomplete repair. */
    static final Duration REPAIR_TIME_BUDGET = Duration.ofSeconds(10);

    /**
     * A storage instance writing as {@code writerId} (the broker id, used as the writer id of its streams and
     * of its WAL slices). Missing generation-0 records are repaired from WAL evidence ({@link WalEvidenceRepair})
     * within {@link StorageConfig#repairMaxEntries} batch reads and {@link #REPAIR_TIME_BUDGET}. Higher generations
     * live in {@code objects}. The WAL writer reports its add and commit latencies to {@code observer}
     * ({@link WalObserver#NONE}: nowhere).
     */
    public static StreamStorage create(StorageConfig config, BookKeeper bk, MetadataStore metadata,
            ObjectStore objects, String writerId, Clock clock, WalObserver observer) {
        return create(config, bk, metadata, objects, writerId, clock, observer, EngineRuntime.THREADS);
    }

    /**
     * {@link #create(StorageConfig, BookKeeper, MetadataStore, ObjectStore, String, Clock, WalObserver)} on the
     * threads of {@code runtime} (a deterministic simulation gives its own; a broker uses
     * {@link EngineRuntime#THREADS}).
     */
    public static StreamStorage create(StorageConfig config, BookKeeper bk, MetadataStore metadata,
            ObjectStore objects, String writerId, Clock clock, WalObserver observer, EngineRuntime runtime) {
        return new StreamStorage(config, bk, metadata, objects, writerId, clock, observer,
                r -> new WalEvidenceRepair(metadata.streams(), metadata.index(), r, config.repairMaxEntries(),
                        REPAIR_TIME_BUDGET, clock), runtime);
    }

    /**
     * Opens the WAL's first slice ahead of the first append (see {@link WalWriter#openFirstSlice}): a broker calls
     * it once it has started, so that its first append is as quick as the ones after it.
     */
    public void openWal() {
        writer.openFirstSlice();
    }

    /** Opens (creating if absent) the stream of {@code managedLedgerName}; the handle is shared. */
    public CompletableFuture<NereusStream> openStream(String managedLedgerName) {
        if (closed) {
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.CLOSED, Map.of()));
        }
        CompletableFuture<NereusStream> f = streams.computeIfAbsent(managedLedgerName, name -> metadata.catalog().openStream(name)
                .thenApply(entry -> new NereusStream(entry, metadata.streams(), writer, resolver, tail, writerId)));
        f.whenComplete((s, t) -> {
            if (t != null) {
                streams.remove(managedLedgerName, f);
            }
        });
        return f;
    }

    /**
     * Deletes the stream of {@code managedLedgerName} (its catalog entry moves to DELETED; opening the name again
     * creates a new incarnation with new ids) and drops this instance's handle and its cached tail.
     * Returns the deleted catalog entry, empty when the name was unknown.
     */
    public CompletableFuture<Optional<CatalogEntry>> deleteStream(String managedLedgerName) {
        if (closed) {
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.CLOSED, Map.of()));
        }
        CompletableFuture<NereusStream> handle = streams.remove(managedLedgerName);
        if (handle != null) {
            handle.thenAccept(s -> tail.invalidate(s.id()));
        }
        return metadata.catalog().deleteStream(managedLedgerName);
    }

    /** The object store of this instance's higher generations, open until its owner closes it. */
    public ObjectStore objects() {
        return objects;
    }

    /**
     * Materializes {@code stream} below {@code upTo} now (see {@link Materializer#offload}): the offset below which
     * it is all in objects once the future completes.
     */
    public CompletableFuture<Long> offload(StreamId stream, long upTo) {
        if (closed) {
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.CLOSED, Map.of()));
        }
        return materializer.offload(stream, upTo);
    }

    /** The objects holding {@code stream} from its trim offset on without a gap (see {@link Materializer#coverage}). */
    public CompletableFuture<ObjectCoverage> objectCoverage(StreamId stream) {
        return materializer.coverage(stream);
    }

    /**
     * Rolls the WAL over to a new slice now; completes once the slices holding everything appended before are
     * sealed (see {@link WalWriter#rollSlice}).
     */
    public CompletableFuture<Void> rollWalSlice() {
        return writer.rollSlice();
    }

    /** Runs one materializer pass over the sealed slices now (it also runs every configured interval). */
    public CompletableFuture<Void> materializeSealedSlices() {
        return materializer.runPass();
    }

    /** The materializer's counters and backlog. */
    public MaterializerStats materializerStats() {
        return materializer.stats();
    }

    /** Runs one garbage collector pass now (it also runs every configured interval). */
    public CompletableFuture<Void> collectGarbage() {
        return collector.runPass();
    }

    /** The garbage collector's counters and the last metadata census. */
    public CollectorStats collectorStats() {
        return collector.stats();
    }

    /**
     * Compacts {@code stream} up to its committed end now into a new {@link ReadView#TOPIC_COMPACTED} generation (see
     * {@link TopicCompactor}), reading its committed entries through the stream's own read path.
     */
    public CompletableFuture<CompactionResult> compact(NereusStream stream, CompactionPolicy policy) {
        if (closed) {
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.CLOSED, Map.of()));
        }
        return stream.head().thenCompose(head -> compactor.compact(stream.id(), head,
                (from, n, bytes) -> stream.read(ReadView.COMMITTED, from, n, bytes, BoundaryMode.EXACT_START)
                        .thenApply(ReadResult::entries), policy));
    }

    /** The compactor of this instance: the published compacted generations and their reads. */
    public TopicCompactor compactor() {
        return compactor;
    }

    /** The materializer of this instance (tests in its package set hooks on it). */
    public Materializer materializer() {
        return materializer;
    }

    /** Object blocks in memory, hits and misses. */
    public BlockCache objectBlocks() {
        return blocks;
    }

    /** Bytes this instance fetched from BookKeeper WAL slices (reads, repair and materialization). */
    public long walBytesRead() {
        return reader.bytesRead();
    }

    /**
     * Bytes this instance's reads fetched from the object store (merges included, the materializer's check of a new
     * object not).
     */
    public long objectBytesRead() {
        return objectReader.bytesRead();
    }

    /** The local mirrors of this instance's WAL slices ({@link SliceMirrors}): bytes held, read and mirrors dropped. */
    public SliceMirrors walMirrors() {
        return mirrors;
    }

    /** BookKeeper read requests this instance made of WAL slices (reads, repair and materialization). */
    public long walReadRequests() {
        return reader.requests();
    }

    /** How the reads that missed the tail cache were resolved, what they read, and the repairs they caused. */
    public ResolverStats resolverStats() {
        return resolver.stats();
    }

    /** Metadata transactions re-run after a conflict or another retriable error ({@link MetadataStore}). */
    public long metadataTransactionRetries() {
        return metadata.transactionRetries();
    }

    /** Index records this instance's reads found unreadable and quarantined. */
    public long quarantinedRecords() {
        return resolver.quarantinedRecords();
    }

    /** Changes the tail cache's byte bound (a broker's dynamic cache-size setting); shrinking evicts at once. */
    public void resizeTailCache(long maxBytes) {
        tail.resize(maxBytes);
    }

    /** Empties the tail cache; reads then go to the resolver. */
    public void clearTailCache() {
        tail.clear();
    }

    /** What this instance's WAL writer's group commit has done since it started. */
    public WalStats walStats() {
        return writer.stats();
    }

    /** Counters of the tail cache since this instance started. */
    public TailCacheStats tailCacheStats() {
        return tail.stats();
    }

    /**
     * Runs WAL slice recovery now (it also runs periodically): seals the slices of writers that are gone
     * ({@link io.nereus.wal.WalSliceRecovery}).
     */
    public CompletableFuture<WalSliceRecovery.Report> recoverAbandonedSlices() {
        return writer.recoverAbandonedSlices();
    }

    /**
     * Stops appends (pending ones fail CLOSED) and timers; the BookKeeper client, the metadata and the object
     * store stay open. Does not wait for the WAL writer to seal its last slice and release its lease: see
     * {@link #closeAsync}.
     */
    @Override
    public void close() {
        closeAsync();
    }

    /**
     * {@link #close}s this instance; the future completes once the WAL writer has finished its batches, sealed its
     * slices and released its lease (see {@link WalWriter#closeAsync}), the tail cache has released its payloads,
     * the timers are stopped and the files of the WAL slices' local mirrors deleted. Never fails. The WAL reader's
     * cached batches and the object blocks are released at once; entries readers still hold stay valid until they
     * release them.
     */
    public CompletableFuture<Void> closeAsync() {
        closed = true;
        collector.close();
        materializer.close();
        compactor.close();
        CompletableFuture<Void> writerDone = writer.closeAsync();
        reader.close();
        blocks.close();
        return writerDone.handle((ignored, error) -> {
            tail.close(); // every append has completed: release the cached payloads, cache nothing more
            scheduler.shutdownNow();
            return mirrors.closeAsync(); // the writer mirrors nothing more: the files are deleted
        }).thenCompose(deleted -> deleted);
    }
}
