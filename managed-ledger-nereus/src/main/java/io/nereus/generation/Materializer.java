package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.GenerationIndexStore;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.IndexRecordState;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.PublicationOutcome;
import io.nereus.metadata.PublicationRequest;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamCommitStore;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.StreamState;
import io.nereus.metadata.WalSectionRef;
import io.nereus.metadata.WalSlice;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalSliceStore;
import io.nereus.metadata.WalTarget;
import io.nereus.metadata.WalWriterLease;
import io.nereus.object.BlockCache;
import io.nereus.object.ObjectName;
import io.nereus.object.ObjectStore;
import io.nereus.object.ProcessFiles;
import io.nereus.object.StoredObject;
import io.nereus.object.StreamObjectReader;
import io.nereus.object.StreamObjectWriter;
import io.nereus.runtime.EngineRuntime;
import io.nereus.wal.FetchedBatch;
import io.nereus.wal.WalBatch;
import io.nereus.wal.WalReader;
import io.nereus.wal.WalWriter;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns generation 0 into higher generations (DESIGN §6): reads the committed ranges of sealed WAL slices, writes
 * each stream's part as read-optimized stream objects, reads every object back and verifies it, then publishes it
 * with {@link GenerationIndexStore#publish}, one conditional transaction that checks the exact generation-0 source
 * records. A refused publication (a source trimmed, repaired, already materialized by someone else, the stream
 * deleted) deletes its object; an object whose publication was never decided (a crash, an unknown result) is
 * garbage that no record names, for the garbage collector.
 *
 * <p>What it does:
 * <ul>
 *   <li><b>Background passes</b> (when {@link MaterializerConfig#enabled}), every {@link MaterializerConfig#interval}
 *       (a pass that published objects of slices is followed by the next at once):
 *       every SEALED slice this instance owns (its own, and a share of those whose writer holds no lease any more:
 *       slice id modulo the live writers) is read in entry order, in requests of up to
 *       {@value #ENTRIES_PER_READ} batches; each stream's consecutive sections become one object of at most
 *       {@link MaterializerConfig#objectTargetBytes} and {@link PublicationRequest#MAX_SOURCES} sections. Then consecutive small objects of a stream
 *       ({@link MaterializerConfig#mergeMinObjects} of them, each under a quarter of the target) are merged into one
 *       object of a higher generation, which retires them; so a stream's data from several slices ends up in objects
 *       near the target size and objects per stream stay bounded.</li>
 *   <li><b>Offload requests</b> ({@link #offload}): materialize one stream below an offset now, rolling this
 *       writer's open slice over first when the range reaches into it; served before background work.</li>
 * </ul>
 * A slice's data is therefore materialized at the latest one pass after the slice seals, which is at most
 * {@code nereusWalSliceMaxAgeSeconds} after it opened.
 *
 * <p>Bounds: one step at a time per instance (one slice, one merge or one offload), whose objects are published up
 * to {@value #PUBLISHING_AT_ONCE} at once; at most two objects' payload of entries waiting in memory and two being
 * written, in pooled direct memory (each entry is copied once, into the blocks of the object it goes to; the entries
 * of a slice's streams that do not fit wait in a local {@link SliceSpill} file, see {@link #copySlice}: every slice
 * is read once: from its local mirror when this broker's writer wrote it and still holds one, see
 * {@link io.nereus.wal.SliceMirrors}, which is released once the slice is copied; else from BookKeeper); the bytes it
 * reads from WAL slices and the bytes it
 * writes as objects are each paced to {@link MaterializerConfig#maxBytesPerSecond} (unpaced reads at the bookie's
 * full speed slowed appends' journal writes). State is confined to the
 * materializer's own thread ({@code nereus-materializer-<writerId>}, a scheduler of the {@link EngineRuntime} it is
 * given); the public methods may be called from any thread.
 */
public final class Materializer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Materializer.class);
    /** Batches fetched per request (of the slice's mirror or of BookKeeper). */
    static final int ENTRIES_PER_READ = 32;
    /** Index records read per scan of a stream. */
    static final int RECORDS_PER_SCAN = 1000;
    /** Unused bandwidth a pacer carries forward: a materializer idle for a while runs at full speed this long. */
    static final long PACER_BURST_MILLIS = 1000;
    /** Objects of one slice published at once (see {@code SliceCopy.publishAll}). */
    static final int PUBLISHING_AT_ONCE = 8;
    /** Slices listed per read of the SEALED listing. */
    static final int SLICES_PER_LISTING = 256;
    /** Where objects are assembled: pooled direct memory, as the WAL's batches are (see {@code Buffer}). */
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    /** Called with each verified publication request before it is sent: the point a crash test stops at. */
    interface PublishHook extends Function<PublicationRequest, CompletableFuture<Void>> {
    }

    private final MaterializerConfig config;
    private final WalSliceStore slices;
    private final GenerationIndexStore index;
    private final StreamCommitStore streams;
    private final WalReader wal;
    private final WalWriter writer;
    private final TargetReader objectReader;
    private final ObjectStore objects;
    private final String writerId;
    private final Clock clock;
    private final StreamObjectWriter encoder;
    private final Path spillDir;
    /** Told of every stream this instance published for, on the materializer's thread (drops cached resolutions). */
    private final Consumer<StreamId> published;
    /** Longest time from writing an object to publishing it; past it the object is left to garbage collection. */
    private final Duration maxPublishDelay;
    private final EngineRuntime runtime;
    private final ScheduledExecutorService exec;
    /** Bytes read from WAL slices, paced; used on exec only. */
    private final BandwidthPacer walReads;
    /** Bytes written as objects, paced; used on exec only. */
    private final BandwidthPacer objectWrites;
    private volatile PublishHook beforePublish = request -> CompletableFuture.completedFuture(null);

    // confined to exec
    private final ArrayDeque<Supplier<CompletableFuture<?>>> urgent = new ArrayDeque<>();
    private final ArrayDeque<Supplier<CompletableFuture<?>>> background = new ArrayDeque<>();
    private final Set<Long> completed = new HashSet<>();
    private final Set<StreamId> toMerge = new LinkedHashSet<>();
    private boolean running;
    private boolean closed;
    /**
     * The spill file of the last slice copy that spilled, kept for the next one: written again from its start, its
     * pages are already in the page cache (a new file's must be found and zeroed, and deleting one frees them all
     * again: the largest kernel costs of a copy at many streams). Deleted by a pass in which no copy spilled, and at
     * close, so the disk is given back once the WAL is drained.
     */
    private SliceSpill keptSpill;
    /**
     * The spill file of the slice copy running now, if it spilled: deleted at close, since a copy still running then
     * may never complete (its next step is refused by the stopped thread), and its file would wait for the next start.
     */
    private SliceSpill activeSpill;
    /** Whether a slice copy spilled since the last pass ended. */
    private boolean spilledSincePass;
    private volatile int pendingSlices;
    private volatile int completedCount;

    private final AtomicLong objectsPublished = new AtomicLong();
    private final AtomicLong mergesPublished = new AtomicLong();
    private final AtomicLong entriesPublished = new AtomicLong();
    private final AtomicLong bytesPublished = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong failedSteps = new AtomicLong();
    private final AtomicLong lastPublished = new AtomicLong();
    private final AtomicLong bytesSpilled = new AtomicLong();

    /**
     * A materializer that spills the entries of a slice's streams, when they are more than it holds in memory, into
     * the JVM's temporary directory ({@code java.io.tmpdir}).
     */
    public Materializer(MaterializerConfig config, WalSliceStore slices, GenerationIndexStore index,
            StreamCommitStore streams, WalReader wal, WalWriter writer, TargetReader objectReader, ObjectStore objects,
            String writerId, Clock clock, Duration maxPublishDelay, Consumer<StreamId> published, EngineRuntime runtime) {
        this(config, slices, index, streams, wal, writer, objectReader, objects, writerId, clock, maxPublishDelay,
                published, runtime, ProcessFiles.tempDir());
    }

    /**
     * @param spillDir an existing directory for the {@link SliceSpill} of a slice whose streams' entries are more than
     *                 two objects' payload: one file, named by the process id ({@link SpillFiles}), reused by the
     *                 slice copies of consecutive passes and deleted by a pass that spills nothing (and at close,
     *                 the file of a copy still running then too);
     *                 files of processes no longer running are deleted when this materializer starts
     */
    public Materializer(MaterializerConfig config, WalSliceStore slices, GenerationIndexStore index,
            StreamCommitStore streams, WalReader wal, WalWriter writer, TargetReader objectReader, ObjectStore objects,
            String writerId, Clock clock, Duration maxPublishDelay, Consumer<StreamId> published, EngineRuntime runtime,
            Path spillDir) {
        this.config = config;
        this.spillDir = java.util.Objects.requireNonNull(spillDir, "spillDir");
        this.maxPublishDelay = maxPublishDelay;
        this.published = published;
        this.slices = slices;
        this.index = index;
        this.streams = streams;
        this.wal = wal;
        this.writer = writer;
        this.objectReader = objectReader;
        this.objects = objects;
        this.writerId = writerId;
        this.clock = clock;
        this.encoder = new StreamObjectWriter(config.blockBytes());
        this.runtime = runtime;
        this.exec = runtime.scheduler("nereus-materializer-" + writerId);
        this.walReads = new BandwidthPacer(config.maxBytesPerSecond(), PACER_BURST_MILLIS, clock, exec);
        this.objectWrites = new BandwidthPacer(config.maxBytesPerSecond(), PACER_BURST_MILLIS, clock, exec);
    }

    /** Starts the background passes, the first one interval from now; does nothing when they are disabled. */
    public void start() {
        exec.execute(() -> SpillFiles.removeAbandoned(spillDir, SpillFiles.MATERIALIZER_PREFIX));
        if (config.enabled()) {
            schedulePass();
        }
    }

    // ---- requests ----

    /**
     * Materializes {@code stream} below {@code upTo} (clamped to its committed end) now, before any background
     * work: rolls this writer's open slice over when the range reaches into it, materializes the stream's part of
     * every sealed slice below {@code upTo}, and completes once nothing of the range is left only in generation 0.
     *
     * @return the offset below which the stream's records (from the trim offset on) are all in objects: {@code upTo}
     *         clamped to the committed end, or lower where a WAL section reaches past it (sections are materialized
     *         whole); fails with RETRIABLE_MATERIALIZATION_INCOMPLETE naming the slice when part of the range is in a
     *         slice another writer still holds open, NOT_FOUND for an unknown stream, or the failure of a step
     */
    public CompletableFuture<Long> offload(StreamId stream, long upTo) {
        CompletableFuture<Long> result = new CompletableFuture<>();
        submit(true, () -> offloadStep(stream, upTo, false).whenComplete((offset, error) -> {
            if (error != null) {
                result.completeExceptionally(Failures.unwrap(error));
            } else {
                result.complete(offset);
            }
        }), result::completeExceptionally);
        return result;
    }

    /** Runs one background pass now (also when passes are disabled); completes once its steps have finished. */
    public CompletableFuture<Void> runPass() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        submit(false, () -> pass(done, false), done::completeExceptionally);
        return done;
    }

    /**
     * The objects holding {@code stream} from its trim offset on without a gap, read from the index: the scan stops
     * at the first record that is not a COMMITTED object (a generation-0 record still to materialize, a quarantined
     * object), so it reads the object records and one more, never the WAL records of the unmaterialized tail.
     */
    public CompletableFuture<ObjectCoverage> coverage(StreamId stream) {
        return streams.head(stream).thenCompose(h -> {
            StreamHead head = h.orElseThrow(() -> new NereusException(ErrorCode.NOT_FOUND, ErrorContext.of(
                    "stream", stream)));
            return coverageFrom(stream, head.trimOffset(), ObjectCoverage.NONE);
        });
    }

    private CompletableFuture<ObjectCoverage> coverageFrom(StreamId stream, long from, ObjectCoverage acc) {
        return index.indexRecords(stream, ReadView.COMMITTED, from, RECORDS_PER_SCAN).thenCompose(records -> {
            ObjectCoverage c = acc;
            for (IndexRecord r : records) {
                boolean follows = c.objects() == 0 || r.range().start() == c.endOffset();
                if (r.generation().isAppend() || r.state() != IndexRecordState.COMMITTED || !follows) {
                    return CompletableFuture.completedFuture(c);
                }
                c = c.plus(r);
            }
            if (records.size() < RECORDS_PER_SCAN) {
                return CompletableFuture.completedFuture(c);
            }
            return coverageFrom(stream, records.get(records.size() - 1).endOffset(), c);
        });
    }

    public MaterializerStats stats() {
        return new MaterializerStats(objectsPublished.get(), mergesPublished.get(), entriesPublished.get(),
                bytesPublished.get(), refused.get(), failedSteps.get(), pendingSlices, completedCount,
                lastPublished.get(), bytesSpilled.get());
    }

    /** Test hook: runs before every publication (after the object was written and verified). */
    void beforePublish(PublishHook hook) {
        this.beforePublish = hook;
    }

    /** Stops: no new steps start; a step in flight may finish or fail. Idempotent. */
    @Override
    public void close() {
        try {
            exec.execute(() -> {
                closed = true;
                dropKeptSpill();
                if (activeSpill != null) {
                    // the copy using it fails at its next read or write of it; nothing published depends on it
                    deleteSpill(activeSpill);
                    activeSpill = null;
                }
            });
        } catch (RejectedExecutionException e) {
            return;
        }
        exec.shutdown();
    }

    // ---- the job queue ----

    /** Queues {@code job}; when the materializer is closed it never runs and {@code dropped} is told why. */
    private void submit(boolean isUrgent, Supplier<CompletableFuture<?>> job,
            Consumer<NereusException> dropped) {
        NereusException closedError = new NereusException(ErrorCode.CLOSED, ErrorContext.of("component",
                "materializer"));
        try {
            exec.execute(() -> {
                if (closed) {
                    dropped.accept(closedError);
                    return;
                }
                (isUrgent ? urgent : background).add(job);
                pump();
            });
        } catch (RejectedExecutionException e) {
            dropped.accept(closedError);
        }
    }

    private void pump() {
        if (running || closed) {
            return;
        }
        Supplier<CompletableFuture<?>> job = urgent.poll();
        if (job == null) {
            job = background.poll();
        }
        if (job == null) {
            return;
        }
        running = true;
        CompletableFuture<?> f;
        try {
            f = job.get();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenCompleteAsync((r, error) -> {
            running = false;
            pump();
        }, exec);
    }

    private void schedulePass() {
        schedulePass(config.interval().toMillis());
    }

    private void schedulePass(long delayMillis) {
        try {
            exec.schedule(() -> {
                if (!closed) {
                    submit(false, () -> pass(new CompletableFuture<>(), true), ignored -> { });
                }
            }, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    // ---- background pass ----

    /**
     * Lists the owned sealed slices and queues a step for each, then the merges, then {@code done}; a
     * {@code periodic} pass schedules the next one when it ends: at once when it published objects of slices (the WAL
     * fills faster than one pass an interval copies, and slices sealed while it ran are waiting), else an interval
     * later.
     */
    private CompletableFuture<Void> pass(CompletableFuture<Void> done, boolean periodic) {
        return slices.census().thenCombine(sealed(0, new TreeMap<>()), (census, sealed) -> {
            Set<String> live = new TreeSet<>();
            for (WalWriterLease l : census.leases().values()) {
                live.add(l.writerId());
            }
            live.add(writerId);
            List<Long> owned = new ArrayList<>();
            for (Map.Entry<Long, WalSlice> e : sealed.entrySet()) {
                if (owns(e.getKey(), e.getValue(), new ArrayList<>(live))) {
                    owned.add(e.getKey());
                }
            }
            return owned;
        }).thenAcceptAsync(owned -> {
            completed.retainAll(new HashSet<>(owned)); // slices collected meanwhile leave the listing
            int pending = 0;
            for (long id : owned) {
                if (!completed.contains(id)) {
                    pending++;
                    background.add(() -> sliceStep(id));
                }
            }
            pendingSlices = pending;
            background.add(() -> {
                List<StreamId> merging = new ArrayList<>(toMerge);
                toMerge.clear();
                return mergeAll(merging, 0);
            });
            long publishedBefore = objectsPublished.get() + mergesPublished.get();
            long bytesBefore = bytesPublished.get();
            int pendingAtStart = pending;
            background.add(() -> {
                long objectsNow = objectsPublished.get() + mergesPublished.get() - publishedBefore;
                if (pendingAtStart > 0 || objectsNow > 0) {
                    LOG.info("materializer pass: {} sealed slices to do at its start, {} objects ({} payload bytes)"
                            + " published; totals {}", pendingAtStart, objectsNow, bytesPublished.get() - bytesBefore,
                            stats());
                }
                if (!spilledSincePass) {
                    dropKeptSpill();
                }
                spilledSincePass = false;
                done.complete(null);
                if (periodic) {
                    schedulePass(pendingAtStart > 0 && objectsNow > 0 ? 0 : config.interval().toMillis());
                }
                return CompletableFuture.completedFuture(null);
            });
        }, exec).whenComplete((ignored, error) -> {
            if (error != null) {
                failedSteps.incrementAndGet();
                LOG.warn("materializer pass failed to list slices; trying again next pass", error);
                done.completeExceptionally(Failures.unwrap(error));
                if (periodic) {
                    schedulePass();
                }
            }
        });
    }

    private CompletableFuture<SortedMap<Long, WalSlice>> sealed(long from, SortedMap<Long, WalSlice> acc) {
        return slices.slices(WalSliceState.SEALED, from, SLICES_PER_LISTING).thenCompose(page -> {
            acc.putAll(page);
            if (page.size() < SLICES_PER_LISTING) {
                return CompletableFuture.completedFuture(acc);
            }
            return sealed(page.lastKey() + 1, acc);
        });
    }

    /** This instance's slices, and a share of those whose writer holds no lease ({@link SliceOwnership}). */
    private boolean owns(long sliceId, WalSlice slice, List<String> live) {
        return SliceOwnership.ownsSlice(sliceId, slice.writerId(), writerId, live);
    }

    private CompletableFuture<Void> sliceStep(long sliceId) {
        return materializeSlice(sliceId, Optional.empty(), Long.MAX_VALUE).handleAsync((done, error) -> {
            if (error != null) {
                failedSteps.incrementAndGet();
                LOG.warn("materializing WAL slice {} failed; trying again next pass", sliceId, Failures.unwrap(error));
            } else if (done) {
                completed.add(sliceId);
                wal.copied(sliceId);
                completedCount = completed.size();
            }
            return null;
        }, exec);
    }

    // ---- one slice ----

    /**
     * One stream's consecutive entries read so far, with the records they came from; only whole records count (the
     * sections read so far of a run not yet read to its end are kept apart, and dropped when the run breaks off). The
     * entries are copied as they are read, once: in memory into the object being written ({@link #object}, pooled
     * direct buffers that no other stream's bytes share), or into the slice's spill file, from which the object is
     * written when it is published. Owns that memory until {@link #close}, which every path ends with.
     */
    private final class Buffer implements AutoCloseable {
        final StreamId stream;
        /** Where whole records' entries go, when not in {@link #object}; null: in memory. */
        final SliceSpill spill;
        final List<IndexRecord> sources = new ArrayList<>();
        final SliceSpill.Extents spilled = new SliceSpill.Extents();
        /** Extents of the record being read, spilled already, counted once the record is whole. */
        final SliceSpill.Extents pendingExtents = new SliceSpill.Extents();
        /** The object its entries go to: from the start in memory, when it is published for a spilled stream. */
        StreamObjectWriter.Builder object;
        /** Entries of {@link #object} that are whole records'. */
        int wholeEntries;
        long bytes;
        long pendingBytes;
        long end = -1;
        /** Where the next section of the record being read starts; -1 when no record is partly read. */
        long pendingEnd = -1;
        /** When the first entry was added: the copy's start. */
        long firstAdded;
        boolean closed;

        Buffer(StreamId stream, SliceSpill spill) {
            this.stream = stream;
            this.spill = spill;
            this.object = spill == null ? encoder.builder(stream, ReadView.COMMITTED, ALLOC) : null;
        }

        boolean isEmpty() {
            return sources.isEmpty();
        }

        /** Adds the entries of the whole record {@code source} (read, not released). */
        void add(IndexRecord source, List<StreamEntry> read, long now) {
            copy(read);
            whole(source, now);
        }

        /** Copies {@code read} (read, not released) where this stream's entries go, as part of the record being read. */
        private void copy(List<StreamEntry> read) {
            if (spill != null) {
                try {
                    pendingExtents.add(spill.write(read));
                } catch (IOException e) {
                    throw spillFailed("write", stream, spill.file(), e);
                }
            } else {
                read.forEach(object::add);
            }
            for (StreamEntry e : read) {
                pendingBytes += e.size();
            }
        }

        /** The record being read, {@code source}, is whole: its entries count. */
        private void whole(IndexRecord source, long now) {
            if (sources.isEmpty()) {
                firstAdded = now;
            }
            sources.add(source);
            spilled.addAll(pendingExtents);
            pendingExtents.clear();
            wholeEntries = object == null ? 0 : object.entries();
            bytes += pendingBytes;
            pendingBytes = 0;
            end = source.range().end();
        }

        /**
         * The object of the whole records added, to be finished: the in-memory one without a record read only in
         * part, or one written now from the spill.
         */
        StreamObjectWriter.Builder seal() throws IOException {
            if (spill == null) {
                object.truncate(wholeEntries);
                return object;
            }
            object = encoder.builder(stream, ReadView.COMMITTED, ALLOC);
            for (int i = 0; i < spilled.size(); i++) {
                spill.read(spilled.get(i), object::add);
            }
            return object;
        }

        /**
         * Adds the entries (read, not released) of one section of a generation-0 record; once its last section is in,
         * the record. False (and nothing added) when the section does not follow the part of the record read so far.
         */
        boolean addSection(IndexRecord record, WalSectionRef section, boolean first, boolean last,
                List<StreamEntry> read, long now) {
            long expected = first ? record.range().start() : pendingEnd;
            if (section.range().start() != expected) {
                return false;
            }
            if (first) {
                dropPending();
            }
            copy(read);
            pendingEnd = section.range().end();
            if (last) {
                whole(record, now);
                pendingEnd = -1;
            }
            return true;
        }

        /** Forgets the part of a record read so far. */
        private void dropPending() {
            pendingExtents.clear();
            pendingBytes = 0;
            if (object != null) {
                object.truncate(wholeEntries);
            }
        }

        /** Releases the object's memory; idempotent, from any thread. */
        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                if (object != null) {
                    object.close();
                }
            }
        }
    }

    /**
     * Materializes the generation-0 records of slice {@code sliceId} that are still in the lookup space, of every
     * stream or only of {@code only}, below {@code upTo}. True when nothing was left undone (every planned object
     * published, or refused because its sources changed: a later pass plans again from the index).
     */
    CompletableFuture<Boolean> materializeSlice(long sliceId, Optional<StreamId> only, long upTo) {
        return slices.ranges(sliceId).thenCompose(ranges -> {
            List<CompletableFuture<List<IndexRecord>>> plans = new ArrayList<>();
            for (Map.Entry<StreamId, OffsetRange> e : ranges.entrySet()) {
                if (only.isEmpty() || only.get().equals(e.getKey())) {
                    plans.add(needs(sliceId, e.getKey(), e.getValue(), upTo));
                }
            }
            return CompletableFuture.allOf(plans.toArray(new CompletableFuture<?>[0]))
                    .thenApply(ignored -> plans.stream().map(CompletableFuture::join).toList());
        }).thenComposeAsync(perStream -> copySlice(sliceId, perStream), exec);
    }

    /**
     * Copies the needed sections of slice {@code sliceId} in one pass, in entry order. A stream's entries wait for its
     * objects in memory, where it holds at most one object's payload at a time (its part of the slice or, when that is
     * larger, an object's, written out as it fills); streams are given memory largest part first while the total stays
     * within two objects' payload, and the entries of the others wait in a {@link SliceSpill}. A batch holds sections of
     * many streams, so holding only some streams at a time meant reading the slice once per group of them (eight times
     * for a 1 GiB slice of 1,000 streams); the spill reads it once whatever the number of streams, and a slice of one
     * large stream needs no spill at all.
     */
    private CompletableFuture<Boolean> copySlice(long sliceId, List<List<IndexRecord>> perStream) {
        List<IndexRecord> all = new ArrayList<>();
        List<Map.Entry<StreamId, Long>> parts = new ArrayList<>();
        for (List<IndexRecord> records : perStream) {
            long part = 0;
            for (IndexRecord r : records) {
                part += r.bytes();
            }
            if (!records.isEmpty()) {
                parts.add(Map.entry(records.get(0).stream(), part));
                all.addAll(records);
            }
        }
        SlicePlan plan = SlicePlan.of(all);
        if (plan.isEmpty()) {
            return CompletableFuture.completedFuture(true);
        }
        parts.sort(Map.Entry.<StreamId, Long>comparingByValue().reversed());
        long memory = Math.multiplyExact(2, config.objectTargetBytes());
        Set<StreamId> spilled = new HashSet<>();
        for (Map.Entry<StreamId, Long> p : parts) {
            long held = Math.min(p.getValue(), config.objectTargetBytes());
            if (held <= memory) {
                memory -= held;
            } else {
                spilled.add(p.getKey());
            }
        }
        SliceSpill spill = null;
        if (!spilled.isEmpty()) {
            spilledSincePass = true;
            try {
                if (keptSpill != null) {
                    spill = keptSpill;
                    keptSpill = null;
                    spill.clear();
                } else {
                    spill = SliceSpill.create(spillDir);
                }
            } catch (IOException e) {
                return CompletableFuture.failedFuture(new NereusException(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED,
                        ErrorContext.of("slice", sliceId, "dir", spillDir, "operation", "create spill file", "reason",
                                e.toString()), e));
            }
        }
        SliceSpill used = spill;
        activeSpill = used;
        return new SliceCopy(sliceId, plan, used, spilled).run().whenCompleteAsync((done, error) -> {
            if (used != null) {
                activeSpill = null;
                bytesSpilled.addAndGet(used.size());
                LOG.info("slice copy spilled: slice={} streams={} of {} file={} bytes={}", sliceId, spilled.size(),
                        parts.size(), used.file(), used.size());
                if (error == null && !closed && keptSpill == null) {
                    keptSpill = used; // for the next copy (a failed one's file is not trusted again)
                } else {
                    deleteSpill(used);
                }
            }
        }, exec);
    }

    /** Deletes the spill file kept for the next copy, if any. */
    private void dropKeptSpill() {
        if (keptSpill != null) {
            deleteSpill(keptSpill);
            keptSpill = null;
        }
    }

    private static void deleteSpill(SliceSpill spill) {
        try {
            spill.close();
        } catch (IOException e) {
            LOG.warn("spill file not deleted: file={}", spill.file(), e);
        }
    }

    /** A failed {@code operation} ("write", "read") of {@code stream}'s entries in a spill {@code file}. */
    private static NereusException spillFailed(String operation, StreamId stream, Object file, IOException e) {
        return new NereusException(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED, ErrorContext.of("stream", stream,
                "file", file, "operation", "spill " + operation, "reason", e.toString()), e);
    }

    /** The generation-0 records of {@code stream} in slice {@code sliceId} within {@code range}, below {@code upTo}. */
    private CompletableFuture<List<IndexRecord>> needs(long sliceId, StreamId stream, OffsetRange range, long upTo) {
        return streams.head(stream).thenCompose(h -> {
            if (h.isEmpty() || h.get().state() == StreamState.DELETING) {
                return CompletableFuture.completedFuture(List.<IndexRecord>of());
            }
            StreamHead head = h.get();
            long from = Math.max(range.start(), head.trimOffset());
            long end = Math.min(Math.min(range.end(), head.committedEnd()), upTo);
            if (from >= end) {
                return CompletableFuture.completedFuture(List.<IndexRecord>of());
            }
            return generationZero(stream, from, end, Optional.of(sliceId), new ArrayList<>());
        });
    }

    /**
     * The COMMITTED generation-0 records of {@code stream} still in the lookup space that start in {@code [from,
     * end)}, in offset order; of slice {@code sliceId} only, when given. A record reaching across {@code end} is
     * included: a run of appends is materialized whole (an offload up to an offset inside a run covers the run).
     */
    private CompletableFuture<List<IndexRecord>> generationZero(StreamId stream, long from, long end,
            Optional<Long> sliceId, List<IndexRecord> acc) {
        return index.indexRecords(stream, ReadView.COMMITTED, from, RECORDS_PER_SCAN).thenCompose(records -> {
            for (IndexRecord r : records) {
                if (r.range().start() >= end) {
                    return CompletableFuture.completedFuture(acc);
                }
                if (r.generation().isAppend() && r.state() == IndexRecordState.COMMITTED
                        && r.range().start() >= from
                        && r.target() instanceof WalTarget t && (sliceId.isEmpty() || t.sliceId() == sliceId.get())) {
                    acc.add(r);
                }
            }
            if (records.size() < RECORDS_PER_SCAN) {
                return CompletableFuture.completedFuture(acc);
            }
            return generationZero(stream, records.get(records.size() - 1).endOffset(), end, sliceId, acc);
        });
    }

    /** One pass over the needed entries of a slice, in entry order; runs on the materializer's thread. */
    private final class SliceCopy {
        final long sliceId;
        final SlicePlan plan;
        /** Where the entries of the streams in {@link #spilled} wait for their objects; null when none does. */
        final SliceSpill spill;
        final Set<StreamId> spilled;
        /**
         * Per stream, by its number in the plan ({@link SlicePlan#streamAt}): the buffer its entries go to now, and
         * whether it broke; looked up for every section copied (hundreds of thousands in a slice of a thousand
         * streams), where maps keyed by stream cost a hash and an equality check of a stream object each.
         */
        final Buffer[] buffers;
        final boolean[] broken;
        /** Every buffer this pass made, closed when it ends (publication closes those it publishes before). */
        final List<Buffer> created = new ArrayList<>();
        boolean allDone = true;

        SliceCopy(long sliceId, SlicePlan plan, SliceSpill spill, Set<StreamId> spilled) {
            this.sliceId = sliceId;
            this.plan = plan;
            this.spill = spill;
            this.spilled = spilled;
            this.buffers = new Buffer[plan.streamCount()];
            this.broken = new boolean[plan.streamCount()];
        }

        CompletableFuture<Boolean> run() {
            long first = plan.firstEntry();
            return next(first, read(first)).thenComposeAsync(ignored -> {
                List<Buffer> rest = new ArrayList<>();
                for (int n = 0; n < buffers.length; n++) {
                    if (buffers[n] != null) {
                        rest.add(buffers[n]);
                        buffers[n] = null;
                    }
                }
                return publishAll(rest);
            }, exec).whenComplete((ok, error) -> {
                // published buffers closed themselves; these are the ones a failure left unpublished
                created.forEach(Buffer::close);
            }).thenApply(ignored -> allDone && noneBroke());
        }

        /** Whether every stream of the pass was copied to its end. */
        private boolean noneBroke() {
            for (boolean b : broken) {
                if (b) {
                    return false;
                }
            }
            return true;
        }

        /** The span of needed entries from {@code first}, requested in one read. */
        private CompletableFuture<List<FetchedBatch>> read(long first) {
            return wal.readRange(sliceId, first, spanEnd(first));
        }

        /** The span of needed entries from {@code first}: consecutive entry ids, at most {@value #ENTRIES_PER_READ}. */
        private long spanEnd(long first) {
            long last = first;
            while (last - first + 1 < ENTRIES_PER_READ && plan.needs(last + 1)) {
                last++;
            }
            return last;
        }

        /**
         * Copies the span of needed entries starting at {@code first} (already requested as {@code read}), asking for
         * the next span before taking this one's, so one BookKeeper request is in flight while a span is copied. The
         * fetched batches are released once their sections are copied (or on failure): each stream's buffer holds
         * its own copies, never BookKeeper's buffers, which hold every stream's sections.
         */
        private CompletableFuture<Void> next(long first, CompletableFuture<List<FetchedBatch>> read) {
            long last = spanEnd(first);
            long following = plan.entryAfter(last);
            @SuppressWarnings("unchecked")
            CompletableFuture<List<FetchedBatch>>[] ahead = new CompletableFuture[1];
            return read.thenComposeAsync(fetched -> walReads.acquire(payloadBytesOf(fetched))
                    .whenComplete((ignored, error) -> {
                        if (error != null) {
                            fetched.forEach(FetchedBatch::release);
                        }
                    })
                    .thenApplyAsync(ignored -> {
                        // the next span is requested once this one's bytes are within the pace, and read while it is
                        // copied
                        ahead[0] = following < 0 ? null : read(following);
                        List<Buffer> full = new ArrayList<>();
                        try {
                            for (int i = 0; i < fetched.size(); i++) {
                                take(first + i, fetched.get(i).batch(), full);
                            }
                        } finally {
                            fetched.forEach(FetchedBatch::release);
                        }
                        return full;
                    }, exec), exec).thenComposeAsync(this::publishAll, exec).handleAsync((ignored, error) -> {
                        if (error != null) {
                            if (ahead[0] != null) {
                                // let the read ahead finish; its batches are released unused
                                ahead[0].thenAccept(batches -> batches.forEach(FetchedBatch::release));
                            }
                            return CompletableFuture.<Void>failedFuture(error);
                        }
                        return following < 0 ? CompletableFuture.<Void>completedFuture(null)
                                : next(following, ahead[0]);
                    }, exec).thenCompose(f -> f);
        }

        /** Copies the needed sections of {@code batch} (valid during the call) into their streams' buffers. */
        private void take(long entryId, WalBatch batch, List<Buffer> full) {
            for (int i = plan.from(entryId), to = plan.to(entryId); i < to; i++) {
                int stream = plan.streamAt(i);
                if (broken[stream]) {
                    continue;
                }
                IndexRecord record = plan.recordAt(i);
                WalSectionRef section = plan.sectionAt(i);
                List<StreamEntry> read;
                try {
                    read = WalTargetReader.entries(record, section, batch);
                } catch (NereusException e) {
                    LOG.error("WAL section unusable, not materialized (reads fall back as for any read): slice={}"
                            + " entry={} stream={} range={} {}", sliceId, entryId, record.stream(), section.range(),
                            e.context());
                    brokenAt(stream, full);
                    continue;
                }
                try {
                    takeSection(record, stream, section, plan.firstOfRecord(i), plan.lastOfRecord(i), read, entryId,
                            full);
                } finally {
                    StreamEntry.releaseAll(read);
                }
            }
        }

        /** Copies a section of {@code record}, of the stream numbered {@code stream} in the plan. */
        private void takeSection(IndexRecord record, int stream, WalSectionRef section, boolean first, boolean last,
                List<StreamEntry> read, long entryId, List<Buffer> full) {
            Buffer b = buffers[stream];
            if (first) {
                if (b != null && (b.end != record.range().start() || !b.isEmpty()
                        && (b.bytes + record.bytes() > config.objectTargetBytes()
                        || b.sources.size() >= PublicationRequest.MAX_SOURCES))) {
                    full.add(b);
                    buffers[stream] = null;
                    b = null;
                }
                if (b == null) {
                    StreamId id = plan.stream(stream);
                    b = new Buffer(id, spilled.contains(id) ? spill : null);
                    created.add(b);
                    buffers[stream] = b;
                }
            }
            if (b == null || !b.addSection(record, section, first, last, read, clock.millis())) {
                LOG.error("WAL section out of order, stream not materialized in this pass: slice={} entry={}"
                        + " stream={} range={}", sliceId, entryId, plan.stream(stream), section.range());
                brokenAt(stream, full);
                return;
            }
            if (last && b.bytes >= config.objectTargetBytes()) {
                full.add(b);
                buffers[stream] = null;
            }
        }

        /**
         * Stops copying the stream numbered {@code stream} in this pass; its whole records read so far are still
         * published.
         */
        private void brokenAt(int stream, List<Buffer> full) {
            broken[stream] = true;
            Buffer b = buffers[stream];
            if (b != null) {
                full.add(b);
                buffers[stream] = null;
            }
        }

        /**
         * Publishes the buffers of {@code out}, several at once (see {@link Materializer#PUBLISHING_AT_ONCE}): at most
         * that many, together at most two objects' payload (one buffer always); each publication
         * waits on its object's write, its read back and its transaction, which the others overlap. Completes when
         * all have ended, failing with the first failure (no publication starts after it).
         */
        private CompletableFuture<Void> publishAll(List<Buffer> out) {
            CompletableFuture<Void> all = new CompletableFuture<>();
            new Object() {
                int next;
                int running;
                long bytes;
                Throwable failed;

                void pump() {
                    long budget = Math.multiplyExact(2, config.objectTargetBytes());
                    while (failed == null && next < out.size() && running < PUBLISHING_AT_ONCE
                            && (running == 0 || bytes + out.get(next).bytes <= budget)) {
                        Buffer b = out.get(next++);
                        running++;
                        bytes += b.bytes;
                        CompletableFuture<Boolean> f;
                        try {
                            f = publish(b, false);
                        } catch (RuntimeException e) {
                            f = CompletableFuture.failedFuture(e);
                        }
                        f.whenCompleteAsync((ok, error) -> {
                            running--;
                            bytes -= b.bytes;
                            if (error != null) {
                                failed = failed == null ? error : failed;
                            } else {
                                allDone &= ok;
                            }
                            pump();
                        }, exec);
                    }
                    if (running == 0 && (failed != null || next >= out.size()) && !all.isDone()) {
                        if (failed != null) {
                            all.completeExceptionally(failed);
                        } else {
                            all.complete(null);
                        }
                    }
                }
            }.pump();
            return all;
        }
    }

    private static long payloadBytesOf(List<FetchedBatch> batches) {
        long n = 0;
        for (FetchedBatch b : batches) {
            for (io.nereus.wal.WalSection s : b.batch().sections()) {
                n += s.payloadBytes();
            }
        }
        return n;
    }

    // ---- write, verify, publish ----

    /**
     * Writes {@code b} as a new object, reads it back and compares every entry, and publishes it. True when it was
     * published (or a retry found it published); false when the index refused it (the object is then deleted).
     * Closes {@code b} on every path, once the object's put and verification are done with its memory.
     */
    private CompletableFuture<Boolean> publish(Buffer b, boolean merge) {
        if (b.isEmpty()) {
            b.close();
            return CompletableFuture.completedFuture(true);
        }
        StreamObjectWriter.Builder object;
        StreamObjectWriter.Encoded encoded;
        try {
            object = b.seal();
            encoded = object.finish();
        } catch (IOException e) {
            b.close();
            return CompletableFuture.failedFuture(spillFailed("read", b.stream, b.spill.file(), e));
        } catch (RuntimeException e) {
            b.close();
            return CompletableFuture.failedFuture(e);
        }
        ObjectName name = StreamObjectNames.newName(b.stream, ReadView.COMMITTED, encoded.range(),
                runtime.uniqueId());
        long started = clock.millis();
        long[] phases = new long[3]; // when the put, the verification and the publication ended
        return objects.putNew(name, encoded.content())
                .thenCompose(stored -> {
                    phases[0] = clock.millis();
                    return verify(stored, encoded, object).thenApply(ignored -> stored);
                })
                .thenCompose(stored -> {
                    phases[1] = clock.millis();
                    if (phases[1] - phases[0] > maxPublishDelay.toMillis()) {
                        // the garbage collector may delete an unpublished object once it is this old (see Collector)
                        throw new NereusException(ErrorCode.RETRIABLE_MATERIALIZATION_INCOMPLETE, ErrorContext.of(
                                "object", name, "why", "verified " + (phases[1] - phases[0]) + " ms after it was"
                                        + " written, later than the " + maxPublishDelay.toMillis()
                                        + " ms an object may wait for its publication"));
                    }
                    PublicationRequest request = new PublicationRequest(b.stream, ReadView.COMMITTED, encoded.range(),
                            b.sources.stream().map(PublicationRequest.SourceRef::of).toList(),
                            new ObjectTarget(name.value(), 0, stored.size(), stored.size(), stored.version()),
                            encoded.checksum(), encoded.entries(), b.bytes);
                    return beforePublish.apply(request).thenCompose(ignored -> index.publish(request));
                })
                .whenComplete((outcome, error) -> b.close())
                .thenComposeAsync(outcome -> {
                    phases[2] = clock.millis();
                    if (outcome instanceof PublicationOutcome.Publish || outcome instanceof PublicationOutcome.AlreadyPublished) {
                        (merge ? mergesPublished : objectsPublished).incrementAndGet();
                        entriesPublished.addAndGet(encoded.entries());
                        bytesPublished.addAndGet(b.bytes);
                        lastPublished.set(clock.millis());
                        published.accept(b.stream);
                        if (!merge) {
                            toMerge.add(b.stream);
                        }
                        LOG.info("published stream object: stream={} range={} entries={} bytes={} object={}{};"
                                + " read {} ms, put {} ms, verify {} ms, publish {} ms", b.stream, encoded.range(),
                                encoded.entries(), encoded.length(), name,
                                merge ? " (merge of " + b.sources.size() + " objects)" : "", started - b.firstAdded,
                                phases[0] - started, phases[1] - phases[0], phases[2] - phases[1]);
                        return objectWrites.acquire(encoded.length()).thenApply(ignored -> true);
                    }
                    refused.incrementAndGet();
                    LOG.info("publication refused, deleting the object: stream={} range={} object={} outcome={}",
                            b.stream, encoded.range(), name, outcome);
                    return objects.delete(name).handle((ignored, error) -> false);
                }, exec)
                .whenComplete((ok, error) -> {
                    if (error != null) {
                        LOG.warn("materializing failed; the object, if written, is left for garbage collection:"
                                + " stream={} range={} object={}", b.stream, encoded.range(), name,
                                Failures.unwrap(error));
                    }
                });
    }

    /**
     * Reads the stored object back through the reader every read uses and compares every entry with the one written
     * (held by {@code object} until the publication ends).
     */
    private CompletableFuture<Void> verify(StoredObject stored, StreamObjectWriter.Encoded encoded,
            StreamObjectWriter.Builder object) {
        if (stored.size() != encoded.length()) {
            return CompletableFuture.failedFuture(corrupt(stored.name(), "stored size differs from written size"));
        }
        return StreamObjectReader.open(objects, stored.name(), stored.size(), encoded.checksum(), new BlockCache(0))
                .thenCompose(r -> r.read(encoded.range().start(), Integer.MAX_VALUE, Long.MAX_VALUE))
                .thenApply(read -> {
                    try {
                        if (read.size() != object.entries()) {
                            throw corrupt(stored.name(), "read back " + read.size() + " entries, wrote "
                                    + object.entries());
                        }
                        for (int i = 0; i < read.size(); i++) {
                            if (!object.sameEntry(i, read.get(i))) {
                                throw corrupt(stored.name(), "entry " + i + " read back differs from the one written");
                            }
                        }
                        return null;
                    } finally {
                        StreamEntry.releaseAll(read);
                    }
                });
    }

    private static NereusException corrupt(ObjectName name, String reason) {
        return new NereusException(ErrorCode.CORRUPT_DATA, ErrorContext.of("object", name, "reason", reason));
    }

    // ---- merges ----

    private CompletableFuture<Void> mergeAll(List<StreamId> merging, int i) {
        if (i >= merging.size()) {
            return CompletableFuture.completedFuture(null);
        }
        return merge(merging.get(i)).handleAsync((ignored, error) -> {
            if (error != null) {
                failedSteps.incrementAndGet();
                LOG.warn("merging objects of stream {} failed; trying again after its next publication",
                        merging.get(i), Failures.unwrap(error));
            }
            return null;
        }, exec).thenComposeAsync(ignored -> mergeAll(merging, i + 1), exec);
    }

    /** Merges the first run of consecutive small objects of {@code stream}, if it is long enough. */
    CompletableFuture<Void> merge(StreamId stream) {
        return streams.head(stream).thenCompose(h -> {
            if (h.isEmpty() || h.get().state() == StreamState.DELETING) {
                return CompletableFuture.completedFuture(null);
            }
            long trim = h.get().trimOffset();
            return index.indexRecords(stream, ReadView.COMMITTED, trim, RECORDS_PER_SCAN).thenComposeAsync(records -> {
                List<IndexRecord> run = smallRun(records, trim);
                if (run.size() < config.mergeMinObjects()) {
                    return CompletableFuture.completedFuture(null);
                }
                Buffer b = new Buffer(stream, null);
                return readInto(b, run, 0).thenComposeAsync(ignored -> publish(b, true), exec)
                        .whenComplete((ignored, error) -> b.close()) // publish closes it; a failed read does not
                        .thenApply(ignored -> (Void) null);
            }, exec);
        });
    }

    /** The first run of consecutive small COMMITTED objects, at most one target's bytes. */
    private List<IndexRecord> smallRun(List<IndexRecord> records, long trim) {
        List<IndexRecord> run = new ArrayList<>();
        long bytes = 0;
        for (IndexRecord r : records) {
            boolean small = !r.generation().isAppend() && r.state() == IndexRecordState.COMMITTED
                    && r.bytes() < config.smallObjectBytes() && r.range().start() >= trim;
            boolean follows = !run.isEmpty() && run.get(run.size() - 1).range().end() == r.range().start();
            if (small && (run.isEmpty() || follows) && bytes + r.bytes() <= config.objectTargetBytes()
                    && run.size() < PublicationRequest.MAX_SOURCES) {
                run.add(r);
                bytes += r.bytes();
                continue;
            }
            if (run.size() >= config.mergeMinObjects()) {
                return run;
            }
            run.clear();
            bytes = 0;
            if (small) {
                run.add(r);
                bytes = r.bytes();
            }
        }
        return run;
    }

    private CompletableFuture<Void> readInto(Buffer b, List<IndexRecord> run, int i) {
        if (i >= run.size()) {
            return CompletableFuture.completedFuture(null);
        }
        IndexRecord r = run.get(i);
        // copied into the buffer's object at once and the slices released, as the WAL's entries are
        return objectReader.readAll(r).thenComposeAsync(entries -> {
            try {
                b.add(r, entries, clock.millis());
            } finally {
                StreamEntry.releaseAll(entries);
            }
            return readInto(b, run, i + 1);
        }, exec);
    }

    // ---- offload requests ----

    private CompletableFuture<Long> offloadStep(StreamId stream, long upTo, boolean rolled) {
        return streams.head(stream).thenComposeAsync(h -> {
            StreamHead head = h.orElseThrow(() -> new NereusException(ErrorCode.NOT_FOUND,
                    ErrorContext.of("stream", stream)));
            long limit = Math.min(upTo, head.committedEnd());
            long trim = head.trimOffset();
            if (limit <= trim) {
                return CompletableFuture.completedFuture(Math.max(limit, trim));
            }
            return generationZero(stream, trim, limit, Optional.empty(), new ArrayList<>()).thenComposeAsync(records -> {
                if (records.isEmpty()) {
                    return lastWholeRecordEnd(stream, limit);
                }
                TreeSet<Long> ids = new TreeSet<>();
                records.forEach(r -> ids.add(((WalTarget) r.target()).sliceId()));
                return states(new ArrayList<>(ids), 0, new TreeMap<>()).thenComposeAsync(states -> {
                    List<Long> open = new ArrayList<>();
                    states.forEach((id, s) -> {
                        if (s.isEmpty() || s.get().state() == WalSliceState.OPEN) {
                            open.add(id);
                        }
                    });
                    if (!open.isEmpty()) {
                        if (!rolled && open.stream().allMatch(writer::holds)) {
                            return writer.rollSlice().thenComposeAsync(ignored -> offloadStep(stream, upTo, true), exec);
                        }
                        long id = open.get(0);
                        return CompletableFuture.failedFuture(new NereusException(
                                ErrorCode.RETRIABLE_MATERIALIZATION_INCOMPLETE, ErrorContext.of("stream", stream,
                                "upTo", limit, "slice", id, "reason", "the WAL slice holding part of the range is"
                                        + " still open by " + states.get(id).map(WalSlice::writerId).orElse("an"
                                        + " unregistered writer") + "; it seals on roll-over or slice recovery")));
                    }
                    return sliceByslice(stream, new ArrayList<>(ids), 0, limit)
                            .thenComposeAsync(ignored -> remaining(stream, trim, limit), exec);
                }, exec);
            }, exec);
        }, exec);
    }

    private CompletableFuture<Long> remaining(StreamId stream, long trim, long limit) {
        return generationZero(stream, trim, limit, Optional.empty(), new ArrayList<>()).thenCompose(left -> {
            if (left.isEmpty()) {
                return lastWholeRecordEnd(stream, limit);
            }
            IndexRecord r = left.get(0);
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.RETRIABLE_MATERIALIZATION_INCOMPLETE,
                    ErrorContext.of("stream", stream, "upTo", limit, "range", r.range(), "target", r.target(),
                            "reason", "still only in generation 0 after materializing its slice")));
        });
    }

    /** {@code limit}, or the start of the record reaching across it (materialized whole later). */
    private CompletableFuture<Long> lastWholeRecordEnd(StreamId stream, long limit) {
        return index.indexRecords(stream, ReadView.COMMITTED, limit, 1).thenApply(records -> {
            if (!records.isEmpty() && records.get(0).range().start() < limit
                    && records.get(0).generation().isAppend()) {
                return records.get(0).range().start();
            }
            return limit;
        });
    }

    private CompletableFuture<Void> sliceByslice(StreamId stream, List<Long> ids, int i, long limit) {
        if (i >= ids.size()) {
            return CompletableFuture.completedFuture(null);
        }
        return materializeSlice(ids.get(i), Optional.of(stream), limit)
                .thenComposeAsync(ignored -> sliceByslice(stream, ids, i + 1, limit), exec);
    }

    private CompletableFuture<SortedMap<Long, Optional<WalSlice>>> states(List<Long> ids, int i,
            SortedMap<Long, Optional<WalSlice>> acc) {
        if (i >= ids.size()) {
            return CompletableFuture.completedFuture(acc);
        }
        return slices.slice(ids.get(i)).thenCompose(s -> {
            acc.put(ids.get(i), s);
            return states(ids, i + 1, acc);
        });
    }
}
