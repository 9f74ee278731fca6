package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.CatalogEntry;
import io.nereus.metadata.CatalogState;
import io.nereus.metadata.CatalogStore;
import io.nereus.metadata.CollectionStore;
import io.nereus.metadata.IndexKey;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.MetadataCensus;
import io.nereus.metadata.ObjectReference;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.SliceCollection;
import io.nereus.metadata.SliceHold;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSlice;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalSliceStore;
import io.nereus.metadata.WalWriterLease;
import io.nereus.object.ObjectInfo;
import io.nereus.object.ObjectName;
import io.nereus.object.ObjectStore;
import io.nereus.runtime.EngineRuntime;
import io.nereus.wal.WalLedgers;
import io.nereus.wal.WalReader;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
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
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The garbage collector (DESIGN §6, §7): gives back the space of what no reader can be served from any more. Each
 * pass, on its own thread, every {@link CollectorConfig#interval}:
 * <ol>
 *   <li><b>WAL slices</b> (the SEALED slices this instance owns, as the materializer owns them,
 *       {@link SliceOwnership}): the generation-0 records of each stream of the slice that a higher generation
 *       covers or that are trimmed are retired ({@link CollectionStore#retireSliceRecords}); the first record that is
 *       still the only copy of its offsets holds the slice until a later pass. A slice no record targets any more
 *       becomes COLLECTING ({@link CollectionStore#markCollecting}); once it has been COLLECTING for
 *       {@link CollectorConfig#walDeleteGrace} (as this instance has seen it: a restart starts the wait again) its
 *       BookKeeper ledger is deleted and then its records, intents and ranges are forgotten
 *       ({@link CollectionStore#forgetSlice}).</li>
 *   <li><b>Retired objects</b> (of the streams whose id this instance owns among the live writers): an object that
 *       only RETIRED records name (merged into a larger generation, trimmed) is deleted once those records have been
 *       retired for {@link CollectorConfig#objectDeleteGrace}, then the records are forgotten.</li>
 *   <li><b>Deleted streams</b> (their purge marks): every object the stream's records name is deleted, then every key
 *       of the stream is removed ({@link CollectionStore#purgeStream}).</li>
 *   <li><b>Orphan objects</b>, at most once per object grace period: the store is listed and an object older than
 *       the grace period that no record names (a crash between writing and publishing, a publication refused when
 *       its delete failed, a stream purged meanwhile) is deleted. The materializer never publishes an object
 *       older than half the grace period ({@link CollectorConfig#maxPublishDelay}).</li>
 *   <li><b>Census</b>: the metadata's keys and bytes by kind ({@link CollectionStore#census}), logged as
 *       {@code Nereus metadata census: keys=… bytes=… …} and kept in {@link #stats()}.</li>
 * </ol>
 * Every step is conditional in the metadata and idempotent, so a crash at any point leaves work the next pass
 * (of this instance or another) finishes, and no step deletes a ledger or object a record of the lookup or
 * FALLBACK space still names. A failed step is logged and counted and the pass goes on. The waits are measured
 * from when this instance first saw the state, in memory: they only ever get longer. State is confined to the
 * collector's thread ({@code nereus-collector-<writerId>}, a scheduler of the {@link EngineRuntime} it is given); the
 * public methods may be called from any thread.
 */
public final class Collector implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Collector.class);
    /** Slices listed per read of a by-state listing. */
    static final int SLICES_PER_LISTING = 256;
    /** Catalog entries read per page. */
    static final int CATALOG_PAGE = 500;
    /** Deleted streams purged per pass at most. */
    static final int PURGES_PER_PASS = 100;

    private final CollectorConfig config;
    private final WalSliceStore slices;
    private final CollectionStore collection;
    private final CatalogStore catalog;
    private final BookKeeper bk;
    private final WalReader wal;
    private final ObjectStore objects;
    private final String writerId;
    private final Clock clock;
    private final ScheduledExecutorService exec;

    // confined to exec
    private final Map<Long, Long> collectingSince = new HashMap<>();
    private final Map<IndexKey, Long> retiredSince = new HashMap<>();
    private final Map<Long, StreamId> lastHold = new HashMap<>();
    private long lastOrphanSweep = Long.MIN_VALUE;
    private boolean closed;

    private final AtomicLong passes = new AtomicLong();
    private volatile int slicesHeld;
    private final AtomicLong slicesCollected = new AtomicLong();
    private final AtomicLong objectsDeleted = new AtomicLong();
    private final AtomicLong orphansDeleted = new AtomicLong();
    private final AtomicLong streamsPurged = new AtomicLong();
    private final AtomicLong failedSteps = new AtomicLong();
    private volatile Optional<MetadataCensus> census = Optional.empty();

    public Collector(CollectorConfig config, WalSliceStore slices, CollectionStore collection, CatalogStore catalog,
            BookKeeper bk, WalReader wal, ObjectStore objects, String writerId, Clock clock, EngineRuntime runtime) {
        this.config = config;
        this.slices = slices;
        this.collection = collection;
        this.catalog = catalog;
        this.bk = bk;
        this.wal = wal;
        this.objects = objects;
        this.writerId = writerId;
        this.clock = clock;
        this.exec = runtime.scheduler("nereus-collector-" + writerId);
    }

    /** Starts the passes, the first one interval from now. */
    public void start() {
        schedulePass();
    }

    /** Runs one pass now, after any pass in progress; completes when it has finished. */
    public CompletableFuture<Void> runPass() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            exec.execute(() -> {
                if (closed) {
                    done.completeExceptionally(closedError());
                    return;
                }
                // passes run one at a time: a scheduled pass holds the thread's queue order through pass()
                pass().whenComplete((v, t) -> done.complete(null));
            });
        } catch (RejectedExecutionException e) {
            done.completeExceptionally(closedError());
        }
        return done;
    }

    public CollectorStats stats() {
        return new CollectorStats(passes.get(), slicesHeld, slicesCollected.get(), objectsDeleted.get(),
                orphansDeleted.get(), streamsPurged.get(), failedSteps.get(), census);
    }

    /** Stops: no new pass starts; a pass in progress may finish a step. Idempotent. */
    @Override
    public void close() {
        try {
            exec.execute(() -> closed = true);
        } catch (RejectedExecutionException e) {
            return;
        }
        exec.shutdown();
    }

    private static NereusException closedError() {
        return new NereusException(ErrorCode.CLOSED, ErrorContext.of("component", "collector"));
    }

    private void schedulePass() {
        try {
            exec.schedule(() -> {
                if (!closed) {
                    pass().whenCompleteAsync((v, t) -> schedulePass(), exec);
                }
            }, config.interval().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    // ---- one pass ----

    private CompletableFuture<Void> pass() {
        inFlight = inFlight.handle((v, t) -> null).thenCompose(ignored -> live())
                .thenComposeAsync(live -> step("WAL slices", () -> collectSlices(live))
                        .thenComposeAsync(x -> step("retired objects", () -> collectRetiredObjects(live)), exec)
                        .thenComposeAsync(x -> step("deleted streams", () -> purgeDeleted(live)), exec)
                        .thenComposeAsync(x -> step("orphan objects", () -> sweepOrphans(live)), exec)
                        .thenComposeAsync(x -> step("census", this::takeCensus), exec), exec)
                .handleAsync((v, t) -> {
                    if (t != null) {
                        failedSteps.incrementAndGet();
                        LOG.warn("collector pass failed to list the live writers; trying again next pass",
                                Failures.unwrap(t));
                    }
                    passes.incrementAndGet();
                    return null;
                }, exec);
        return inFlight;
    }

    /** The pass in progress (or the last one): a pass requested meanwhile runs after it. Confined to exec. */
    private CompletableFuture<Void> inFlight = CompletableFuture.completedFuture(null);

    private CompletableFuture<Void> step(String what, Supplier<CompletableFuture<Void>> body) {
        CompletableFuture<Void> f;
        try {
            f = body.get();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handleAsync((v, t) -> {
            if (t != null) {
                failedSteps.incrementAndGet();
                LOG.warn("collecting {} failed; trying again next pass", what, Failures.unwrap(t));
            }
            return null;
        }, exec);
    }

    /** The live writers' ids (leases) and this instance's, sorted. */
    private CompletableFuture<List<String>> live() {
        return slices.census().thenApply(census -> {
            Set<String> live = new TreeSet<>();
            for (WalWriterLease l : census.leases().values()) {
                live.add(l.writerId());
            }
            live.add(writerId);
            return List.copyOf(live);
        });
    }

    // ---- WAL slices ----

    private CompletableFuture<Void> collectSlices(List<String> live) {
        return listing(WalSliceState.SEALED, 0, new TreeMap<>()).thenComposeAsync(sealed -> {
            List<Long> owned = owned(sealed, live);
            lastHold.keySet().retainAll(new HashSet<>(owned));
            int[] held = new int[1];
            return forEach(owned, id -> retireSlice(id).thenAccept(h -> {
                if (h) {
                    held[0]++;
                }
            })).thenRun(() -> slicesHeld = held[0]);
        }, exec).thenComposeAsync(ignored -> listing(WalSliceState.COLLECTING, 0, new TreeMap<>()), exec)
                .thenComposeAsync(collecting -> {
                    List<Long> owned = owned(collecting, live);
                    collectingSince.keySet().retainAll(new HashSet<>(owned));
                    long now = clock.millis();
                    List<Long> due = new ArrayList<>();
                    for (long id : owned) {
                        long since = collectingSince.computeIfAbsent(id, k -> now);
                        if (now - since >= config.walDeleteGrace().toMillis()) {
                            due.add(id);
                        }
                    }
                    return forEach(due, this::deleteSlice);
                }, exec);
    }

    private List<Long> owned(SortedMap<Long, WalSlice> listed, List<String> live) {
        List<Long> owned = new ArrayList<>();
        listed.forEach((id, s) -> {
            if (SliceOwnership.ownsSlice(id, s.writerId(), writerId, live)) {
                owned.add(id);
            }
        });
        return owned;
    }

    private CompletableFuture<SortedMap<Long, WalSlice>> listing(WalSliceState state, long from,
            SortedMap<Long, WalSlice> acc) {
        return slices.slices(state, from, SLICES_PER_LISTING).thenCompose(page -> {
            acc.putAll(page);
            if (page.size() < SLICES_PER_LISTING) {
                return CompletableFuture.completedFuture(acc);
            }
            return listing(state, page.lastKey() + 1, acc);
        });
    }

    /**
     * Retires what slice {@code sliceId}'s streams no longer need from it and marks it COLLECTING when nothing is
     * left; true when something holds it. The stream that held it last time is checked first.
     */
    private CompletableFuture<Boolean> retireSlice(long sliceId) {
        return slices.ranges(sliceId).thenComposeAsync(ranges -> {
            List<Map.Entry<StreamId, OffsetRange>> order = new ArrayList<>(ranges.entrySet());
            StreamId first = lastHold.get(sliceId);
            if (first != null) {
                order.sort((x, y) -> Boolean.compare(!x.getKey().equals(first), !y.getKey().equals(first)));
            }
            return retireStreams(sliceId, order, 0);
        }, exec).thenComposeAsync(hold -> {
            if (hold.isPresent()) {
                return CompletableFuture.completedFuture(held(hold.get()));
            }
            return collection.markCollecting(sliceId).thenApplyAsync(outcome -> {
                if (outcome instanceof SliceCollection.Held h) {
                    return held(h.hold());
                }
                if (outcome instanceof SliceCollection.Collecting) {
                    lastHold.remove(sliceId);
                    collectingSince.putIfAbsent(sliceId, clock.millis());
                    LOG.info("WAL slice {} is out of service (COLLECTING); its ledger is deleted in {} s", sliceId,
                            config.walDeleteGrace().toSeconds());
                }
                return false;
            }, exec);
        }, exec);
    }

    private boolean held(SliceHold hold) {
        lastHold.put(hold.sliceId(), hold.stream());
        LOG.debug("WAL slice {} kept: stream={} range={} {}", hold.sliceId(), hold.stream(), hold.range(), hold.why());
        return true;
    }

    private CompletableFuture<Optional<SliceHold>> retireStreams(long sliceId,
            List<Map.Entry<StreamId, OffsetRange>> streams, int i) {
        if (i >= streams.size()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        Map.Entry<StreamId, OffsetRange> e = streams.get(i);
        return collection.retireSliceRecords(sliceId, e.getKey(), e.getValue()).thenComposeAsync(hold -> hold.isPresent()
                ? CompletableFuture.completedFuture(hold) : retireStreams(sliceId, streams, i + 1), exec);
    }

    /** Deletes COLLECTING slice {@code sliceId}'s ledger, then forgets the slice. */
    private CompletableFuture<Void> deleteSlice(long sliceId) {
        CompletableFuture<Void> deleted = WalLedgers.delete(bk, sliceId).handle((ignored, error) -> {
            int rc = error == null ? BKException.Code.OK : WalLedgers.code(error);
            if (rc != BKException.Code.OK && !WalLedgers.noSuchLedger(rc)) {
                throw new NereusException(ErrorCode.RETRIABLE_READ_FAILED, ErrorContext.of("slice", sliceId,
                        "operation", "delete ledger", "rc", rc), BKException.create(rc));
            }
            return null;
        });
        return deleted.thenCompose(ignored -> {
            wal.forget(sliceId);
            return collection.forgetSlice(sliceId);
        }).thenRunAsync(() -> {
            collectingSince.remove(sliceId);
            slicesCollected.incrementAndGet();
            LOG.info("WAL slice {} collected: ledger deleted from BookKeeper, its records forgotten", sliceId);
        }, exec);
    }

    // ---- retired objects ----

    private CompletableFuture<Void> collectRetiredObjects(List<String> live) {
        Set<IndexKey> seen = new HashSet<>();
        return catalogPages(Optional.empty(), entry -> {
            if (entry.state() != CatalogState.ACTIVE || !ownsStream(entry.streamId(), live)) {
                return CompletableFuture.completedFuture(null);
            }
            return collection.retiredObjectRecords(entry.streamId()).thenComposeAsync(retired -> {
                long now = clock.millis();
                List<IndexRecord> due = new ArrayList<>();
                for (IndexRecord r : retired) {
                    IndexKey k = IndexKey.of(r);
                    seen.add(k);
                    if (now - retiredSince.computeIfAbsent(k, x -> now) >= config.objectDeleteGrace().toMillis()) {
                        due.add(r);
                    }
                }
                return forEach(due, this::deleteRetired);
            }, exec);
        }).thenRunAsync(() -> retiredSince.keySet().retainAll(seen), exec);
    }

    private CompletableFuture<Void> deleteRetired(IndexRecord r) {
        ObjectName name = ObjectName.of(((ObjectTarget) r.target()).key());
        return objects.delete(name)
                .thenCompose(ignored -> collection.forgetRetired(List.of(IndexKey.of(r))))
                .thenRunAsync(() -> {
                    retiredSince.remove(IndexKey.of(r));
                    objectsDeleted.incrementAndGet();
                    LOG.info("retired stream object deleted: stream={} range={} generation={} object={}", r.stream(),
                            r.range(), r.generation(), name);
                }, exec);
    }

    private CompletableFuture<Void> catalogPages(Optional<String> after,
            Function<CatalogEntry, CompletableFuture<Void>> each) {
        return catalog.entries(after, CATALOG_PAGE).thenComposeAsync(page -> forEach(page, each).thenCompose(x -> {
            if (page.size() < CATALOG_PAGE) {
                return CompletableFuture.completedFuture(null);
            }
            return catalogPages(Optional.of(page.get(page.size() - 1).managedLedgerName()), each);
        }), exec);
    }

    private boolean ownsStream(StreamId stream, List<String> live) {
        return SliceOwnership.ownsKey(Long.hashCode(stream.value()), writerId, live);
    }

    // ---- deleted streams ----

    private CompletableFuture<Void> purgeDeleted(List<String> live) {
        return collection.purges(PURGES_PER_PASS).thenComposeAsync(purges -> forEach(purges.stream()
                .filter(s -> ownsStream(s, live)).toList(), this::purge), exec);
    }

    private CompletableFuture<Void> purge(StreamId stream) {
        return collection.objectRecords(stream)
                .thenComposeAsync(records -> forEach(records, r -> objects.delete(ObjectName.of(
                        ((ObjectTarget) r.target()).key()))), exec)
                .thenCompose(ignored -> collection.purgeStream(stream))
                .thenAcceptAsync(purged -> {
                    if (purged) {
                        streamsPurged.incrementAndGet();
                        LOG.info("deleted stream {} purged: its objects and every key of it are gone", stream);
                    } else {
                        LOG.error("stream {} has a purge mark but is not DELETING; it is left as it is", stream);
                    }
                }, exec);
    }

    // ---- orphan objects ----

    private CompletableFuture<Void> sweepOrphans(List<String> live) {
        long now = clock.millis();
        long grace = config.objectDeleteGrace().toMillis();
        if (lastOrphanSweep != Long.MIN_VALUE && now - lastOrphanSweep < grace) {
            return CompletableFuture.completedFuture(null);
        }
        lastOrphanSweep = now;
        return objects.list(StreamObjectNames.ROOT).thenComposeAsync(listed -> {
            List<ObjectInfo> old = new ArrayList<>();
            for (ObjectInfo info : listed) {
                Optional<StreamObjectNames.Parsed> p = StreamObjectNames.parse(info.name());
                if (p.isPresent() && ownsStream(p.get().stream(), live)
                        && now - info.lastModified().toEpochMilli() >= grace) {
                    old.add(info);
                }
            }
            return forEach(old, this::deleteIfOrphan);
        }, exec);
    }

    private CompletableFuture<Void> deleteIfOrphan(ObjectInfo info) {
        StreamObjectNames.Parsed p = StreamObjectNames.parse(info.name()).orElseThrow();
        return collection.objectReference(p.stream(), p.view(), p.range().end(), info.name().value())
                .thenCompose(ref -> {
                    if (ref != ObjectReference.NONE) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return objects.delete(info.name()).thenRunAsync(() -> {
                        orphansDeleted.incrementAndGet();
                        LOG.info("unreferenced stream object deleted: object={} size={} written={}", info.name(),
                                info.size(), info.lastModified());
                    }, exec);
                });
    }

    // ---- census ----

    private CompletableFuture<Void> takeCensus() {
        return collection.census().thenAcceptAsync(c -> {
            census = Optional.of(c);
            LOG.info("Nereus metadata census: {}", c);
        }, exec);
    }

    // ---- helpers ----

    /**
     * Runs {@code action} on each item in order, one after the other, on the collector's thread; an item whose action
     * fails is logged and counted, and the next one runs.
     */
    private <T> CompletableFuture<Void> forEach(List<T> items, Function<T, CompletableFuture<Void>> action) {
        return forEach(items, 0, action);
    }

    private <T> CompletableFuture<Void> forEach(List<T> items, int i, Function<T, CompletableFuture<Void>> action) {
        if (i >= items.size() || closed) {
            return CompletableFuture.completedFuture(null);
        }
        T item = items.get(i);
        CompletableFuture<Void> f;
        try {
            f = action.apply(item);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handleAsync((v, t) -> {
            if (t != null) {
                failedSteps.incrementAndGet();
                LOG.warn("collector step failed for {}; trying again next pass", item, Failures.unwrap(t));
            }
            return null;
        }, exec).thenComposeAsync(ignored -> forEach(items, i + 1, action), exec);
    }
}
