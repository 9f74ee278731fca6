package io.nereus.wal;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
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
 */
public final class WalReader implements AutoCloseable {
    private final BookKeeper bk;
    private final byte[] password;
    private final Map<Long, CompletableFuture<ReadHandle>> handles = new ConcurrentHashMap<>();
    private final Map<BatchKey, CompletableFuture<WalBatch>> batches;
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder requests = new LongAdder();
    /** Batches fetched together when a reader goes on from one batch to the next. */
    private final int readAhead;

    private record BatchKey(long sliceId, long entryId) {
    }

    public WalReader(BookKeeper bk, byte[] password, int cachedBatches) {
        this.bk = Objects.requireNonNull(bk, "bk");
        this.password = password.clone();
        this.readAhead = Math.max(1, cachedBatches / 8);
        this.batches = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<BatchKey, CompletableFuture<WalBatch>> eldest) {
                return size() > cachedBatches;
            }
        };
    }

    /**
     * The batch stored at entry {@code entryId} of slice {@code sliceId}; fails with a {@link NereusException}
     * naming {@code slice} and {@code entry}: TARGET_MISSING when the slice's ledger or the entry does not exist,
     * CORRUPT_DATA when the stored bytes are not a valid batch ({@link WalBatchCodec#decode}) or fail BookKeeper's
     * digest on every bookie holding them, RETRIABLE_READ_FAILED for any other BookKeeper failure.
     */
    public CompletableFuture<WalBatch> read(long sliceId, long entryId) {
        BatchKey key = new BatchKey(sliceId, entryId);
        CompletableFuture<WalBatch> f;
        boolean mine = false;
        boolean sequential = false;
        synchronized (batches) {
            f = batches.get(key);
            if (f == null) {
                f = new CompletableFuture<>();
                batches.put(key, f);
                mine = true;
                sequential = readAhead > 1 && batches.containsKey(new BatchKey(sliceId, entryId - 1));
            }
        }
        if (mine) {
            if (sequential) {
                readAhead(sliceId, entryId, f);
            } else {
                fetchInto(key, f);
            }
        }
        return f;
    }

    /** Fetches one batch into its cache slot {@code f}; a failure leaves the cache. */
    private void fetchInto(BatchKey key, CompletableFuture<WalBatch> f) {
        fetch(key.sliceId(), key.entryId()).whenComplete((b, t) -> {
            if (t != null) {
                synchronized (batches) {
                    batches.remove(key, f);
                }
                f.completeExceptionally(t);
            } else {
                f.complete(b);
            }
        });
    }

    /**
     * A reader went on from the batch before {@code entryId}: fetch it and the next ones it will want, up to the
     * read-ahead and the slice's last confirmed entry ({@link #lastConfirmed}), in one BookKeeper request, into the
     * cache. Should the range read fail, each batch is fetched on its own, so that one bad entry fails only its own
     * reads.
     */
    private void readAhead(long sliceId, long entryId, CompletableFuture<WalBatch> first) {
        long wanted = entryId + readAhead - 1;
        handle(sliceId).thenCompose(rh -> lastConfirmed(rh, wanted)).whenComplete((lac, error) -> {
            if (error != null) {
                fetchInto(new BatchKey(sliceId, entryId), first);
                return;
            }
            long last = Math.min(wanted, Math.max(entryId, lac));
            List<BatchKey> keys = new ArrayList<>();
            List<CompletableFuture<WalBatch>> slots = new ArrayList<>();
            keys.add(new BatchKey(sliceId, entryId));
            slots.add(first);
            synchronized (batches) {
                for (long e = entryId + 1; e <= last; e++) {
                    BatchKey k = new BatchKey(sliceId, e);
                    if (batches.containsKey(k)) {
                        break; // fetched or being fetched already: read ahead no further than the gap
                    }
                    CompletableFuture<WalBatch> slot = new CompletableFuture<>();
                    batches.put(k, slot);
                    keys.add(k);
                    slots.add(slot);
                }
            }
            long to = entryId + keys.size() - 1;
            fetch(sliceId, entryId, to).whenComplete((got, t) -> {
                if (t != null || got.size() != keys.size()) {
                    for (int i = 0; i < keys.size(); i++) {
                        fetchInto(keys.get(i), slots.get(i));
                    }
                    return;
                }
                for (int i = 0; i < keys.size(); i++) {
                    slots.get(i).complete(got.get(i));
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
     * cache: for scans (generation-0 repair) that would otherwise evict what readers need.
     */
    public CompletableFuture<WalBatch> readUncached(long sliceId, long entryId) {
        return fetch(sliceId, entryId);
    }

    /**
     * The batches at entries {@code firstEntry..lastEntry} of slice {@code sliceId}, in entry order, fetched in one
     * BookKeeper request without using or filling the batch cache: for the materializer's sequential pass over a
     * sealed slice. Fails as {@link #read} does, naming the range.
     */
    public CompletableFuture<List<WalBatch>> readRange(long sliceId, long firstEntry, long lastEntry) {
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
     * Forgets slice {@code sliceId} (its ledger was deleted): closes its handle and drops its cached batches, so that
     * a read of it asks BookKeeper again and finds it missing.
     */
    public void forget(long sliceId) {
        CompletableFuture<ReadHandle> h = handles.remove(sliceId);
        if (h != null) {
            h.thenAccept(ReadHandle::closeAsync);
        }
        synchronized (batches) {
            batches.keySet().removeIf(k -> k.sliceId() == sliceId);
        }
    }

    /** Forgets a cached batch (after its bytes proved unusable). */
    public void invalidate(long sliceId, long entryId) {
        synchronized (batches) {
            batches.remove(new BatchKey(sliceId, entryId));
        }
    }

    private CompletableFuture<WalBatch> fetch(long sliceId, long entryId) {
        return fetch(sliceId, entryId, entryId).thenApply(batches -> batches.get(0));
    }

    /**
     * The batches of entries {@code first..last}, decoded; failures name the slice and the entry (a range: its first
     * and last entry).
     */
    private CompletableFuture<List<WalBatch>> fetch(long sliceId, long first, long last) {
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

    /** The batches in {@code entries}, which must be exactly {@code first..last}; the caller releases them. */
    private List<WalBatch> decode(LedgerEntries entries, long first, long last, Map<String, Object> where) {
        List<WalBatch> batches = new ArrayList<>();
        long expected = first;
        try {
            for (LedgerEntry entry : entries) {
                if (entry.getEntryId() != expected) {
                    break;
                }
                byte[] data = entry.getEntryBytes();
                bytesRead.add(data.length);
                batches.add(WalBatchCodec.decode(data));
                expected++;
            }
        } catch (NereusException ex) {
            where.putAll(ex.context());
            throw new NereusException(ex.code(), where, ex);
        }
        if (expected <= last) {
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

    @Override
    public void close() {
        handles.values().forEach(f -> f.thenAccept(ReadHandle::closeAsync));
        handles.clear();
    }
}
