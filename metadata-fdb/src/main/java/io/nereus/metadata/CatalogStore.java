package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import io.nereus.metadata.codec.CatalogEntryCodec;
import io.nereus.metadata.codec.CounterCodec;
import io.nereus.metadata.codec.StreamHeadCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The catalog: which stream incarnation a managed-ledger name has ({@code (CATALOG, name)}), and the
 * allocation of stream ids and virtual ledger ids from their counters ({@code (COUNTER, name)}). Creating an
 * incarnation also writes its stream's first head; deleting one marks that head DELETING, which stops commits,
 * and writes the stream's purge mark {@code (PURGE, sid)}.
 *
 * <p>Each operation is one transaction of the shared {@link TransactionRunner}, reading the catalog entry it
 * changes, so two brokers opening or deleting the same name race as a conflict, and a retried commit finds
 * its own earlier result. Methods return futures and never throw: argument errors and refusals fail the
 * future. Thread-safe; holds no mutable state.
 */
public final class CatalogStore {
    private final TransactionRunner tx;
    private final NereusKeyspace ks;

    CatalogStore(TransactionRunner tx, NereusKeyspace ks) {
        this.tx = tx;
        this.ks = ks;
    }

    /**
     * The ACTIVE catalog entry of {@code managedLedgerName}, creating it (stream id, virtual ledger id from the
     * reserved range, an OPEN head) when the name is new or was deleted; a re-created name gets the next
     * incarnation and new ids.
     *
     * @return a future failing with {@link IllegalStateException} while the name's old incarnation is DELETING
     */
    public CompletableFuture<CatalogEntry> openStream(String managedLedgerName) {
        return guard(() -> {
            byte[] key = ks.catalogKey(managedLedgerName);
            return tx.run(tr -> tr.get(key).thenCompose(v -> {
                Optional<CatalogEntry> existing = Optional.ofNullable(v)
                        .map(b -> CatalogEntryCodec.INSTANCE.decode(managedLedgerName, b));
                if (existing.isPresent() && existing.get().state() == CatalogState.ACTIVE) {
                    return CompletableFuture.completedFuture(existing.get());
                }
                if (existing.isPresent() && existing.get().state() == CatalogState.DELETING) {
                    throw new IllegalStateException("managed ledger " + managedLedgerName + " is being deleted");
                }
                return allocateIds(tr).thenApply(ids -> {
                    CatalogEntry entry = existing.map(e -> e.reincarnate(ids.stream, ids.ledger))
                            .orElseGet(() -> new CatalogEntry(managedLedgerName, ids.stream, ids.ledger, 1,
                                    CatalogState.ACTIVE));
                    tr.set(key, CatalogEntryCodec.INSTANCE.encode(entry));
                    tr.set(ks.headKey(ids.stream), StreamHeadCodec.INSTANCE.encode(StreamHead.initial()));
                    return entry;
                });
            }));
        });
    }

    private record Ids(StreamId stream, long ledger) {
    }

    private CompletableFuture<Ids> allocateIds(Transaction tr) {
        byte[] streamKey = ks.counterKey(NereusKeyspace.STREAM_ID_COUNTER);
        byte[] ledgerKey = ks.counterKey(NereusKeyspace.VIRTUAL_LEDGER_ID_COUNTER);
        CompletableFuture<byte[]> s = tr.get(streamKey);
        CompletableFuture<byte[]> l = tr.get(ledgerKey);
        return s.thenCombine(l, (sv, lv) -> {
            long sid = sv == null ? 1 : CounterCodec.INSTANCE.decode(sv);
            long lid = lv == null ? CatalogEntry.MIN_VIRTUAL_LEDGER_ID : CounterCodec.INSTANCE.decode(lv);
            tr.set(streamKey, CounterCodec.INSTANCE.encode(Math.addExact(sid, 1)));
            tr.set(ledgerKey, CounterCodec.INSTANCE.encode(Math.addExact(lid, 1)));
            return new Ids(new StreamId(sid), lid);
        });
    }

    /** The catalog entry of {@code managedLedgerName} in whatever state, if the name was ever created. */
    public CompletableFuture<Optional<CatalogEntry>> catalogEntry(String managedLedgerName) {
        return guard(() -> {
            byte[] key = ks.catalogKey(managedLedgerName);
            return tx.read(tr -> tr.get(key).thenApply(v -> Optional.ofNullable(v)
                    .map(b -> CatalogEntryCodec.INSTANCE.decode(managedLedgerName, b))));
        });
    }

    /**
     * Up to {@code limit} catalog entries, in whatever state, by name, starting after {@code afterName} (from the
     * first name when empty).
     */
    public CompletableFuture<List<CatalogEntry>> entries(Optional<String> afterName, int limit) {
        return guard(() -> {
            if (limit < 1) {
                throw new IllegalArgumentException("limit must be >= 1: " + limit);
            }
            Range all = ks.catalogRange();
            Range rest = afterName.map(n -> new Range(ByteArrayUtil.join(ks.catalogKey(n), new byte[] {0}), all.end))
                    .orElse(all);
            return tx.read(tr -> tr.getRange(rest, limit).asList().thenApply(kvs -> {
                List<CatalogEntry> out = new ArrayList<>(kvs.size());
                for (KeyValue kv : kvs) {
                    out.add(CatalogEntryCodec.INSTANCE.decode(ks.unpackCatalogKey(kv.getKey()), kv.getValue()));
                }
                return out;
            }));
        });
    }

    /**
     * Deletes {@code managedLedgerName}: its catalog entry becomes DELETED (the name is free for a new
     * incarnation), its stream's head DELETING, which stops commits, and the stream gets a purge mark
     * {@code (PURGE, sid)}: the garbage collector then deletes its objects and removes its keys
     * ({@link CollectionStore#purgeStream}). Returns the DELETED entry, or empty when the name does not exist.
     * Idempotent.
     */
    public CompletableFuture<Optional<CatalogEntry>> deleteStream(String managedLedgerName) {
        return guard(() -> {
            byte[] key = ks.catalogKey(managedLedgerName);
            return tx.run(tr -> tr.get(key).thenCompose(v -> {
                if (v == null) {
                    return CompletableFuture.completedFuture(Optional.<CatalogEntry>empty());
                }
                CatalogEntry entry = CatalogEntryCodec.INSTANCE.decode(managedLedgerName, v);
                if (entry.state() == CatalogState.DELETED) {
                    return CompletableFuture.completedFuture(Optional.of(entry));
                }
                CatalogEntry deleted = entry.withState(CatalogState.DELETING).withState(CatalogState.DELETED);
                tr.set(key, CatalogEntryCodec.INSTANCE.encode(deleted));
                tr.set(ks.purgeKey(entry.streamId()), new byte[0]);
                byte[] headKey = ks.headKey(entry.streamId());
                return tr.get(headKey).thenApply(h -> {
                    if (h != null) {
                        StreamHead head = StreamHeadCodec.INSTANCE.decode(h);
                        tr.set(headKey, StreamHeadCodec.INSTANCE.encode(head.withState(StreamState.DELETING)));
                    }
                    return Optional.of(deleted);
                });
            }));
        });
    }
}
