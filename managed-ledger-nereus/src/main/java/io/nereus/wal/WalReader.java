package io.nereus.wal;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.Payloads;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads WAL batches from slices, through BookKeeper's {@link ReadHandle}. Slices are opened without recovery (a
 * slice may still be written by its writer) and read with unconfirmed reads: an entry named by a committed index
 * record was acknowledged by the ack quorum before its commit, whatever the reader's last-add-confirmed says. An
 * entry past the last one of a closed slice is missing without asking the bookies; a read that returns fewer
 * entries than asked (as Pulsar's test BookKeeper does past a ledger's end) is missing from the first one absent.
 *
 * <p>Decoded batches are kept in a small LRU, and concurrent reads of one batch share one fetch, so a reader
 * going through a long range fetches each batch once. A read that goes on from the batch before it (that one is
 * cached) fetches the following batches with it in one request, an eighth of the cache at most and never past the
 * slice's last confirmed entry (of an open slice, asked of its bookies when the handle knows too few). Failed
 * fetches are not kept. Handles stay open until the slice is forgotten or the reader closed. Thread-safe.
 *
 * <p>Nothing is copied: a batch's payloads are slices of the buffer BookKeeper read the entry into
 * ({@link FetchedBatch}). The cache holds one reference to each cached batch and releases it when the batch is
 * evicted, forgotten, invalidated or the reader closed; every read hands out a reference of its own, taken while the
 * cache still holds its, so a batch's memory lives until the cache and every reader (and every slice a reader took
 * of a payload) have released it. The cached batches are BookKeeper's buffers (direct memory, as the client
 * allocates them): at most {@code cachedBatches} of them, plus those readers still hold.
 *
 * <p>A slice this broker's writer wrote and mirrored locally ({@link SliceMirrors}) is read from its mirror once the
 * slice is retired, the materializer's copy above all; each batch read there is checked as a fetched one is (and for
 * its slice id), and a mirror that fails a read or a check is dropped and the read goes to BookKeeper.
 */
public final class WalReader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WalReader.class);
    private final BookKeeper bk;
    private final byte[] password;
    private final Map<Long, CompletableFuture<ReadHandle>> handles = new ConcurrentHashMap<>();
    /** Cached and in-flight batches; guarded by itself, as is every {@link Slot}. */
    private final Map<BatchKey, Slot> batches;
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder requests = new LongAdder();
    /** Batches fetched together when a reader goes on from one batch to the next. */
    private final int readAhead;
    /** Local copies of this broker's slices, read before BookKeeper. */
    private final SliceMirrors mirrors;

    private record BatchKey(long sliceId, long entryId) {
    }

    /**
     * One batch of the cache: being fetched (readers wait in {@code waiting}) or fetched ({@code batch}, holding the
     * cache's reference while {@code cached}). Every reference a reader gets is taken under the cache's monitor
     * while the cache still holds its own, so an eviction racing a read never frees the bytes handed out.
     */
    private static final class Slot {
        FetchedBatch batch;
        List<CompletableFuture<FetchedBatch>> waiting = new ArrayList<>(1);
        boolean cached = true;
    }

    public WalReader(BookKeeper bk, byte[] password, int cachedBatches) {
        this(bk, password, cachedBatches, SliceMirrors.NONE);
    }

    /**
     * A reader that reads the slices {@code mirrors} holds from there (see {@link SliceMirrors}), and from BookKeeper
     * what they do not hold or fail to read; {@code mirrors} is the caller's to close, after this reader.
     */
    public WalReader(BookKeeper bk, byte[] password, int cachedBatches, SliceMirrors mirrors) {
        this.mirrors = Objects.requireNonNull(mirrors, "mirrors");
        this.bk = Objects.requireNonNull(bk, "bk");
        this.password = password.clone();
        this.readAhead = Math.max(1, cachedBatches / 8);
        this.batches = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<BatchKey, Slot> eldest) {
                if (size() > cachedBatches) {
                    evicted(eldest.getValue());
                    return true;
                }
                return false;
            }
        };
    }

    /**
     * The batch stored at entry {@code entryId} of slice {@code sliceId}, with a reference the caller owns and
     * releases exactly once ({@link FetchedBatch}); fails with a {@link NereusException} naming {@code slice} and
     * {@code entry}: TARGET_MISSING when the slice's ledger or the entry does not exist, CORRUPT_DATA when the stored
     * bytes are not a valid batch ({@link WalBatchCodec#decode(io.netty.buffer.ByteBuf)}) or fail BookKeeper's
     * digest on every bookie holding them, RETRIABLE_READ_FAILED for any other BookKeeper failure. A caller that
     * cancels the returned future gives up its reference (it is released here).
     */
    public CompletableFuture<FetchedBatch> read(long sliceId, long entryId) {
        BatchKey key = new BatchKey(sliceId, entryId);
        CompletableFuture<FetchedBatch> result = new CompletableFuture<>();
        Slot slot;
        boolean mine = false;
        boolean sequential = false;
        synchronized (batches) {
            slot = batches.get(key);
            if (slot != null && slot.batch != null) {
                slot.batch.retain();
                result.complete(slot.batch);
                return result;
            }
            if (slot == null) {
                slot = new Slot();
                batches.put(key, slot);
                mine = true;
                sequential = readAhead > 1 && batches.containsKey(new BatchKey(sliceId, entryId - 1));
            }
            slot.waiting.add(result);
        }
        if (mine) {
            if (sequential) {
                readAhead(sliceId, entryId, slot);
            } else {
                fetchInto(key, slot);
            }
        }
        return result;
    }

    /** A slot left the cache (under the cache's monitor): its reference is released, or will be once fetched. */
    private static void evicted(Slot slot) {
        slot.cached = false;
        if (slot.batch != null) {
            slot.batch.release();
            slot.batch = null;
        }
    }

    /** Fetches one batch into its cache slot; a failure leaves the cache. */
    private void fetchInto(BatchKey key, Slot slot) {
        fetch(key.sliceId(), key.entryId()).whenComplete((b, t) -> fill(key, slot, b, t));
    }

    /**
     * The fetch of {@code slot} ended: every waiting reader gets a reference of its own (taken before the cache's
     * own is released, should the slot have been evicted meanwhile) or the failure, which leaves the cache.
     * {@code fetched} is the fetch's reference, which the cache keeps or releases.
     */
    private void fill(BatchKey key, Slot slot, FetchedBatch fetched, Throwable error) {
        List<CompletableFuture<FetchedBatch>> waiting;
        boolean drop = false;
        synchronized (batches) {
            waiting = slot.waiting;
            slot.waiting = null;
            if (error != null) {
                if (slot.cached) {
                    batches.remove(key, slot);
                    slot.cached = false;
                }
            } else {
                for (int i = 0; i < waiting.size(); i++) {
                    fetched.retain();
                }
                if (slot.cached) {
                    slot.batch = fetched;
                } else {
                    drop = true;
                }
            }
        }
        for (CompletableFuture<FetchedBatch> w : waiting) {
            if (error != null) {
                w.completeExceptionally(error);
            } else if (!w.complete(fetched)) {
                fetched.release(); // the reader cancelled its read: its reference goes
            }
        }
        if (drop) {
            fetched.release();
        }
    }

    /**
     * A reader went on from the batch before {@code entryId}: fetch it and the next ones it will want, up to the
     * read-ahead and the slice's last confirmed entry ({@link #lastConfirmed}), in one BookKeeper request, into the
     * cache. Should the range read fail, each batch is fetched on its own, so that one bad entry fails only its own
     * reads.
     */
    private void readAhead(long sliceId, long entryId, Slot first) {
        long wanted = entryId + readAhead - 1;
        handle(sliceId).thenCompose(rh -> lastConfirmed(rh, wanted)).whenComplete((lac, error) -> {
            if (error != null) {
                fetchInto(new BatchKey(sliceId, entryId), first);
                return;
            }
            long last = Math.min(wanted, Math.max(entryId, lac));
            List<BatchKey> keys = new ArrayList<>();
            List<Slot> slots = new ArrayList<>();
            keys.add(new BatchKey(sliceId, entryId));
            slots.add(first);
            synchronized (batches) {
                for (long e = entryId + 1; e <= last; e++) {
                    BatchKey k = new BatchKey(sliceId, e);
                    if (batches.containsKey(k)) {
                        break; // fetched or being fetched already: read ahead no further than the gap
                    }
                    Slot slot = new Slot();
                    batches.put(k, slot);
                    keys.add(k);
                    slots.add(slot);
                }
            }
            long to = entryId + keys.size() - 1;
            fetch(sliceId, entryId, to).whenComplete((got, t) -> {
                if (t != null || got.size() != keys.size()) {
                    if (got != null) {
                        got.forEach(FetchedBatch::release);
                    }
                    for (int i = 0; i < keys.size(); i++) {
                        fetchInto(keys.get(i), slots.get(i));
                    }
                    return;
                }
                for (int i = 0; i < keys.size(); i++) {
                    fill(keys.get(i), slots.get(i), got.get(i), null);
                }
            });
        });
    }

    /**
     * The slice's last entry known to be readable: the handle's last-add-confirmed, asked of the bookies first when
     * the slice is still open and the handle knows less than {@code wanted} (its writer may have gone on since). A
     * failure to ask leaves what the handle knows.
     */
    private CompletableFuture<Long> lastConfirmed(ReadHandle rh, long wanted) {
        long known = rh.getLastAddConfirmed();
        if (known >= wanted || rh.isClosed()) {
            return CompletableFuture.completedFuture(known);
        }
        requests.increment();
        CompletableFuture<Long> asked;
        try {
            asked = rh.readLastAddConfirmedAsync();
        } catch (RuntimeException e) {
            asked = CompletableFuture.failedFuture(e);
        }
        return asked.handle((lac, t) -> t != null || lac == null ? known : Math.max(known, lac));
    }

    /**
     * The batch at entry {@code entryId} of slice {@code sliceId}, fetched without using or filling the batch
     * cache: for scans (generation-0 repair) that would otherwise evict what readers need. The caller owns the
     * result's reference, as with {@link #read}.
     */
    public CompletableFuture<FetchedBatch> readUncached(long sliceId, long entryId) {
        return fetch(sliceId, entryId);
    }

    /**
     * The batches at entries {@code firstEntry..lastEntry} of slice {@code sliceId}, in entry order, fetched in one
     * BookKeeper request without using or filling the batch cache: for the materializer's sequential pass over a
     * sealed slice. The caller owns a reference to each batch, as with {@link #read}. Fails as {@link #read} does,
     * naming the range.
     */
    public CompletableFuture<List<FetchedBatch>> readRange(long sliceId, long firstEntry, long lastEntry) {
        if (firstEntry < 0 || lastEntry < firstEntry) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("entry range " + firstEntry + ".."
                    + lastEntry + " of slice " + sliceId + " is empty or negative"));
        }
        return fetch(sliceId, firstEntry, lastEntry);
    }

    /**
     * BookKeeper read requests this reader made: one per batch, or per range of batches read together, and one per
     * last-add-confirmed asked of an open slice's bookies before reading ahead.
     */
    public long requests() {
        return requests.sum();
    }

    /** Bytes of WAL batches fetched from BookKeeper by this reader (cache hits not counted). */
    public long bytesRead() {
        return bytesRead.sum();
    }

    /**
     * The materializer has copied slice {@code sliceId} into objects: its local mirror, if any, is no longer needed
     * (later reads of the slice go to BookKeeper).
     */
    public void copied(long sliceId) {
        mirrors.release(sliceId);
    }

    /**
     * Forgets slice {@code sliceId} (its ledger was deleted): closes its handle and drops its cached batches and its
     * mirror, so that a read of it asks BookKeeper again and finds it missing.
     */
    public void forget(long sliceId) {
        mirrors.release(sliceId);
        CompletableFuture<ReadHandle> h = handles.remove(sliceId);
        if (h != null) {
            h.thenAccept(ReadHandle::closeAsync);
        }
        synchronized (batches) {
            var it = batches.entrySet().iterator();
            while (it.hasNext()) {
                var e = it.next();
                if (e.getKey().sliceId() == sliceId) {
                    evicted(e.getValue());
                    it.remove();
                }
            }
        }
    }

    /** Forgets a cached batch (after its bytes proved unusable). */
    public void invalidate(long sliceId, long entryId) {
        synchronized (batches) {
            Slot slot = batches.remove(new BatchKey(sliceId, entryId));
            if (slot != null) {
                evicted(slot);
            }
        }
    }

    /** Batches the cache holds or is fetching. */
    public int cachedBatches() {
        synchronized (batches) {
            return batches.size();
        }
    }

    private CompletableFuture<FetchedBatch> fetch(long sliceId, long entryId) {
        return fetch(sliceId, entryId, entryId).thenApply(batches -> batches.get(0));
    }

    /**
     * The batches of entries {@code first..last}, decoded; failures name the slice and the entry (a range: its first
     * and last entry).
     */
    private CompletableFuture<List<FetchedBatch>> fetch(long sliceId, long first, long last) {
        CompletableFuture<List<ByteBuf>> mirrored = mirrors.read(sliceId, first, last);
        if (mirrored == null) {
            return fetchFromBookies(sliceId, first, last);
        }
        return mirrored.handle((buffers, error) -> {
            if (error == null && buffers == null) {
                return fetchFromBookies(sliceId, first, last); // released meanwhile
            }
            if (error == null) {
                try {
                    return CompletableFuture.completedFuture(decodeMirrored(sliceId, first, buffers));
                } catch (RuntimeException e) {
                    error = e;
                }
            }
            // a failed read dropped the mirror already; batches that do not decode drop it here: the bookies have them
            LOG.warn("WAL slice mirror read failed, reading from BookKeeper: slice={} firstEntry={} lastEntry={}",
                    sliceId, first, last, error);
            mirrors.discard(sliceId, "what it held for entries " + first + ".." + last + " is not the batches: "
                    + error);
            return fetchFromBookies(sliceId, first, last);
        }).thenCompose(f -> f);
    }

    /**
     * The batches read from a mirror, each decoded and checked as a fetched entry is (its CRC32C over all its bytes)
     * and for its slice id; on failure none is kept.
     */
    private static List<FetchedBatch> decodeMirrored(long sliceId, long first, List<ByteBuf> buffers) {
        List<FetchedBatch> out = new ArrayList<>(buffers.size());
        int i = 0;
        try {
            for (; i < buffers.size(); i++) {
                FetchedBatch b = FetchedBatch.decode(buffers.get(i));
                out.add(b);
                if (b.batch().sliceId() != sliceId) {
                    throw new IllegalStateException("entry " + (first + i) + " of the mirror of slice " + sliceId
                            + " holds a batch of slice " + b.batch().sliceId());
                }
            }
            return out;
        } catch (RuntimeException e) {
            out.forEach(FetchedBatch::release);
            for (int j = i + 1; j < buffers.size(); j++) {
                buffers.get(j).release();
            }
            throw e;
        }
    }

    private CompletableFuture<List<FetchedBatch>> fetchFromBookies(long sliceId, long first, long last) {
        return handle(sliceId).thenCompose(rh -> {
            Map<String, Object> where = first == last ? ErrorContext.of("slice", sliceId, "entry", first)
                    : ErrorContext.of("slice", sliceId, "firstEntry", first, "lastEntry", last);
            if (rh.isClosed() && first > rh.getLedgerMetadata().getLastEntryId()) {
                return CompletableFuture.failedFuture(readError(BKException.Code.NoSuchEntryException, where));
            }
            requests.increment();
            CompletableFuture<LedgerEntries> read;
            try {
                read = rh.readUnconfirmedAsync(first, last);
            } catch (RuntimeException e) {
                read = CompletableFuture.failedFuture(e);
            }
            return read.handle((entries, error) -> {
                if (error != null) {
                    throw readError(WalLedgers.code(error), where, error);
                }
                try (entries) {
                    return decode(entries, first, last, where);
                }
            });
        });
    }

    /**
     * The batches in {@code entries}, which must be exactly {@code first..last}, each holding a retained slice of its
     * entry's buffer (no copy); the caller closes {@code entries} and owns the batches. On failure none is kept.
     */
    private List<FetchedBatch> decode(LedgerEntries entries, long first, long last, Map<String, Object> where) {
        List<FetchedBatch> batches = new ArrayList<>();
        long expected = first;
        try {
            for (LedgerEntry entry : entries) {
                if (entry.getEntryId() != expected) {
                    break;
                }
                ByteBuf data = entry.getEntryBuffer();
                bytesRead.add(data.readableBytes());
                batches.add(FetchedBatch.decode(Payloads.retainedSlice(data)));
                expected++;
            }
        } catch (RuntimeException ex) {
            batches.forEach(FetchedBatch::release);
            if (ex instanceof NereusException n) {
                where.putAll(n.context());
                throw new NereusException(n.code(), where, n);
            }
            throw ex;
        }
        if (expected <= last) {
            batches.forEach(FetchedBatch::release);
            where.put("missingEntry", expected);
            throw readError(BKException.Code.NoSuchEntryException, where);
        }
        return batches;
    }

    private CompletableFuture<ReadHandle> handle(long sliceId) {
        CompletableFuture<ReadHandle> f = handles.computeIfAbsent(sliceId, id -> WalLedgers
                .openToRead(bk, id, password)
                .handle((rh, error) -> {
                    if (error != null) {
                        throw readError(WalLedgers.code(error), ErrorContext.of("slice", id), error);
                    }
                    return rh;
                }));
        f.whenComplete((rh, t) -> {
            if (t != null) {
                handles.remove(sliceId, f);
            }
        });
        return f;
    }

    /**
     * TARGET_MISSING when the ledger or entry does not exist (evidence of loss); CORRUPT_DATA when the bytes fail
     * BookKeeper's digest (the client reports that only once every bookie holding the entry returned bytes that fail
     * it: no copy is usable); else RETRIABLE_READ_FAILED.
     */
    private static NereusException readError(int rc, Map<String, Object> where) {
        return readError(rc, where, BKException.create(rc));
    }

    private static NereusException readError(int rc, Map<String, Object> where, Throwable cause) {
        boolean missing = WalLedgers.noSuchLedger(rc) || rc == BKException.Code.NoSuchEntryException;
        ErrorCode code = missing ? ErrorCode.TARGET_MISSING
                : rc == BKException.Code.DigestMatchException ? ErrorCode.CORRUPT_DATA
                : ErrorCode.RETRIABLE_READ_FAILED;
        where.put("rc", rc);
        return new NereusException(code, where, Failures.unwrap(cause));
    }

    /** Closes the slices' handles and drops the cached batches (a fetch still in flight releases its own at its end). */
    @Override
    public void close() {
        handles.values().forEach(f -> f.thenAccept(ReadHandle::closeAsync));
        handles.clear();
        synchronized (batches) {
            batches.values().forEach(WalReader::evicted);
            batches.clear();
        }
    }
}
