package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import io.nereus.metadata.codec.CounterCodec;
import io.nereus.metadata.codec.OffsetRangeCodec;
import io.nereus.metadata.codec.WalSliceCodec;
import io.nereus.metadata.codec.WalWriterLeaseCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * The WAL's slices and its writers' leases: which slices (BookKeeper ledgers) exist, in which state, under which
 * writer, and which stream ranges each holds. Owns {@code (WAL, sliceId)} with its by-state copy
 * {@code (WAL_STATE, state, sliceId)}, {@code (WAL_LEASE, incarnation)} and the counter of incarnations; the
 * per-stream ranges {@code (WAL, sliceId, sid)} are written by the commit transaction
 * ({@link StreamCommitStore#commit}) and only read here.
 *
 * <p>When each record is written:
 * <ul>
 *   <li>a WAL writer {@linkplain #takeLease takes a lease} (a new incarnation) before its first slice, renews it
 *       every third of its length, and {@linkplain #releaseLease releases it} when it closes, after sealing its
 *       slices;</li>
 *   <li>once BookKeeper has created a slice's ledger and before any batch is written to it, the writer
 *       {@linkplain #register registers} it OPEN under its lease (refused when the lease is gone);</li>
 *   <li>every commit of WAL batches extends, in the same transaction, the range of each stream it advances in
 *       the batches' slice, and is refused unless that slice is OPEN (see {@link StreamCommitStore#commit});</li>
 *   <li>the writer {@linkplain #transition seals} a slice after BookKeeper closed its ledger and every batch
 *       written to it has finished its commit; slice recovery (another instance, or the same one) seals a slice
 *       after opening its ledger with BookKeeper recovery, which fences and closes it, when its writer's lease is
 *       gone or expired (see {@link WalWriterLease} and {@link #census}), and then
 *       {@linkplain #expireLease removes that lease}; when BookKeeper cannot recover the ledger (its last entry is
 *       unreadable on every bookie), recovery seals the slice first and then closes the ledger at the last entry a
 *       record names ({@link #lastNamedEntry}).</li>
 * </ul>
 * A SEALED slice therefore receives no commit: its ranges are final. A slice's state moves only as
 * {@link WalSliceState#canTransitionTo} allows, in one transaction that reads it; moving to the state it has is a
 * no-op, so every operation here may be retried.
 *
 * <p>Each operation is one transaction of the shared {@link TransactionRunner}. Methods return futures and never
 * throw: argument errors fail the future. Thread-safe; holds no mutable state.
 */
public final class WalSliceStore {
    private final TransactionRunner tx;
    private final NereusKeyspace ks;
    private final StoredRecords records;

    WalSliceStore(TransactionRunner tx, NereusKeyspace ks, StoredRecords records) {
        this.tx = tx;
        this.ks = ks;
        this.records = records;
    }

    // ---- leases ----

    /**
     * Takes a new lease for writer {@code writerId}: allocates the next incarnation and stores its lease at beat 0.
     * A retry after an unknown commit result may allocate a second incarnation; the one nobody renews expires and
     * is removed by slice recovery like any other.
     *
     * @return the incarnation, {@code > 0}
     */
    public CompletableFuture<Long> takeLease(String writerId, Duration lease) {
        return guard(() -> {
            byte[] counter = ks.counterKey(NereusKeyspace.WAL_INCARNATION_COUNTER);
            WalWriterLease initial = new WalWriterLease(writerId, 0, lease);
            return tx.run(tr -> tr.get(counter).thenApply(v -> {
                long incarnation = v == null ? 1 : CounterCodec.INSTANCE.decode(v);
                tr.set(counter, CounterCodec.INSTANCE.encode(Math.addExact(incarnation, 1)));
                tr.set(ks.walLeaseKey(incarnation), WalWriterLeaseCodec.INSTANCE.encode(initial));
                return incarnation;
            }));
        });
    }

    /** Advances the beat of lease {@code incarnation}; false (nothing written) when the lease is gone. */
    public CompletableFuture<Boolean> renewLease(long incarnation) {
        return guard(() -> {
            byte[] key = ks.walLeaseKey(incarnation);
            return tx.run(tr -> tr.get(key).thenApply(v -> {
                if (v == null) {
                    return false;
                }
                tr.set(key, WalWriterLeaseCodec.INSTANCE.encode(WalWriterLeaseCodec.INSTANCE.decode(v).renewed()));
                return true;
            }));
        });
    }

    /**
     * Removes lease {@code incarnation}, as its writer does when it closes. A slice of it still OPEN then has no
     * lease and is recovered by the next recovery run of any instance. Idempotent.
     */
    public CompletableFuture<Void> releaseLease(long incarnation) {
        return guard(() -> {
            byte[] key = ks.walLeaseKey(incarnation);
            return tx.run(tr -> {
                tr.clear(key);
                return CompletableFuture.completedFuture((Void) null);
            });
        });
    }

    /**
     * Removes lease {@code incarnation} that the caller found expired at beat {@code observedBeat}, unless it was
     * renewed since (its beat moved) or a slice of it is OPEN (registered after the caller sealed the ones it saw).
     * Reads the lease and the OPEN listing, so a racing renewal or registration is a conflict.
     *
     * @return true when the lease is gone now (removed, or absent already)
     */
    public CompletableFuture<Boolean> expireLease(long incarnation, long observedBeat) {
        return guard(() -> {
            byte[] key = ks.walLeaseKey(incarnation);
            return tx.run(tr -> {
                CompletableFuture<byte[]> lease = tr.get(key);
                CompletableFuture<List<KeyValue>> open = tr.getRange(ks.walStateRange(WalSliceState.OPEN)).asList();
                return lease.thenCombine(open, (v, kvs) -> {
                    if (v == null) {
                        return true;
                    }
                    if (WalWriterLeaseCodec.INSTANCE.decode(v).beat() != observedBeat) {
                        return false;
                    }
                    for (KeyValue kv : kvs) {
                        if (WalSliceCodec.INSTANCE.decode(kv.getValue()).incarnation() == incarnation) {
                            return false;
                        }
                    }
                    tr.clear(key);
                    return true;
                });
            });
        });
    }

    /** Lease {@code incarnation} as stored now; empty when it is gone. */
    public CompletableFuture<Optional<WalWriterLease>> lease(long incarnation) {
        return guard(() -> {
            byte[] key = ks.walLeaseKey(incarnation);
            return tx.read(tr -> tr.get(key).thenApply(v -> Optional.ofNullable(v)
                    .map(WalWriterLeaseCodec.INSTANCE::decode)));
        });
    }

    // ---- slices ----

    /**
     * Registers slice {@code sliceId} (the ledger BookKeeper just created) OPEN for writer {@code writerId} under
     * lease {@code incarnation}, conditional on that lease being present (read in the transaction, so a racing
     * {@link #expireLease} is a conflict). Registering the same slice again for the same writer and incarnation
     * while it is OPEN is a no-op reported {@link SliceRegistration.Registered}.
     */
    public CompletableFuture<SliceRegistration> register(long sliceId, String writerId, long incarnation) {
        return guard(() -> {
            WalSlice slice = WalSlice.open(writerId, incarnation);
            byte[] sliceKey = ks.walSliceKey(sliceId);
            byte[] leaseKey = ks.walLeaseKey(incarnation);
            return tx.run(tr -> {
                CompletableFuture<byte[]> lease = tr.get(leaseKey);
                CompletableFuture<byte[]> existing = tr.get(sliceKey);
                return lease.thenCombine(existing, (l, e) -> {
                    if (e != null) {
                        WalSlice stored = WalSliceCodec.INSTANCE.decode(e);
                        return stored.equals(slice) ? new SliceRegistration.Registered(stored)
                                : new SliceRegistration.Taken(stored);
                    }
                    if (l == null) {
                        return new SliceRegistration.LeaseGone(incarnation);
                    }
                    write(tr, sliceId, Optional.empty(), slice);
                    return new SliceRegistration.Registered(slice);
                });
            });
        });
    }

    /**
     * Moves slice {@code sliceId} to {@code next} (the one method that changes a slice's state): reads the slice,
     * checks {@link WalSliceState#canTransitionTo}, and rewrites it with its by-state copy. Moving to the state it
     * already has writes nothing.
     *
     * @return the slice as stored afterwards, empty when there is no such slice; a future failing with
     *         {@link IllegalStateException} (nothing written) when the table forbids the move
     */
    public CompletableFuture<Optional<WalSlice>> transition(long sliceId, WalSliceState next) {
        return guard(() -> {
            Objects.requireNonNull(next, "next");
            byte[] key = ks.walSliceKey(sliceId);
            return tx.run(tr -> tr.get(key).thenApply(v -> {
                if (v == null) {
                    return Optional.<WalSlice>empty();
                }
                WalSlice stored = WalSliceCodec.INSTANCE.decode(v);
                if (stored.state() == next) {
                    return Optional.of(stored);
                }
                WalSlice moved = stored.withState(next);
                write(tr, sliceId, Optional.of(stored.state()), moved);
                return Optional.of(moved);
            }));
        });
    }

    /** {@link #transition} to SEALED: the slice's ledger is closed and no commit may extend its ranges. */
    public CompletableFuture<Optional<WalSlice>> seal(long sliceId) {
        return transition(sliceId, WalSliceState.SEALED);
    }

    /** Writes {@code slice} and its by-state copy, clearing the copy under {@code before}; inside {@code tr}. */
    void write(Transaction tr, long sliceId, Optional<WalSliceState> before, WalSlice slice) {
        byte[] value = WalSliceCodec.INSTANCE.encode(slice);
        before.ifPresent(s -> tr.clear(ks.walStateKey(s, sliceId)));
        tr.set(ks.walSliceKey(sliceId), value);
        tr.set(ks.walStateKey(slice.state(), sliceId), value);
    }

    /** Slice {@code sliceId} as stored now; empty when it was never registered (or is gone). */
    public CompletableFuture<Optional<WalSlice>> slice(long sliceId) {
        return guard(() -> {
            byte[] key = ks.walSliceKey(sliceId);
            return tx.read(tr -> tr.get(key).thenApply(v -> Optional.ofNullable(v).map(WalSliceCodec.INSTANCE::decode)));
        });
    }

    /** Up to {@code limit} slices in {@code state} with ids from {@code fromSliceId} on, by slice id. */
    public CompletableFuture<SortedMap<Long, WalSlice>> slices(WalSliceState state, long fromSliceId, int limit) {
        return guard(() -> {
            if (limit < 1) {
                throw new IllegalArgumentException("limit must be >= 1: " + limit);
            }
            var range = ks.walStateRange(state, fromSliceId);
            return tx.read(tr -> tr.getRange(range, limit).asList().thenApply(this::byState));
        });
    }

    /**
     * The range of every stream that committed into slice {@code sliceId}: from the first offset the stream
     * committed into the slice to the end of its last commit into it. Every offset of the stream whose batch is in
     * the slice lies inside; an offset inside lies in another slice only where the stream's writer moved away from
     * this writer and back while the slice stayed open (generation-0 records name the exact slice of each offset).
     */
    public CompletableFuture<SortedMap<StreamId, OffsetRange>> ranges(long sliceId) {
        return guard(() -> {
            var range = ks.walSliceStreamsRange(sliceId);
            return tx.read(tr -> tr.getRange(range).asList().thenApply(kvs -> {
                SortedMap<StreamId, OffsetRange> out = new TreeMap<>();
                for (KeyValue kv : kvs) {
                    out.put(ks.unpackWalStreamKey(kv.getKey()).stream(), OffsetRangeCodec.INSTANCE.decode(kv.getValue()));
                }
                return out;
            }));
        });
    }

    /**
     * The last entry of slice {@code sliceId} that a committed record still names, from one snapshot: for each
     * stream's range in the slice ({@link #ranges}), the generation-0 record of the COMMITTED view that ends where
     * the range ends (the stream's last commit into the slice), in the lookup space (the stream's open run included) or
     * the FALLBACK space. Empty when no
     * record names the slice any more (nothing was committed into it, or all of it was trimmed). Meant for a slice
     * whose ranges are final (SEALED): of an OPEN slice, a later commit may name a later entry.
     */
    public CompletableFuture<OptionalLong> lastNamedEntry(long sliceId) {
        return guard(() -> tx.read(tr -> tr.getRange(ks.walSliceStreamsRange(sliceId)).asList().thenCompose(kvs -> {
            List<CompletableFuture<List<IndexRecord>>> scans = new ArrayList<>();
            for (KeyValue kv : kvs) {
                StreamId stream = ks.unpackWalStreamKey(kv.getKey()).stream();
                long end = OffsetRangeCodec.INSTANCE.decode(kv.getValue()).end();
                OffsetRange endingThere = new OffsetRange(end, end + 1);
                scans.add(tr.getRange(ks.indexEndOffsetRange(stream, ReadView.COMMITTED, endingThere)).asList()
                        .thenApply(records::index));
                scans.add(tr.getRange(ks.fallbackEndOffsetRange(stream, ReadView.COMMITTED, endingThere)).asList()
                        .thenApply(records::fallback));
                scans.add(records.openRun(tr, stream).thenApply(open -> open.filter(r -> r.endOffset() == end)
                        .map(List::of).orElse(List.of())));
            }
            return CompletableFuture.allOf(scans.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
                OptionalLong last = OptionalLong.empty();
                for (CompletableFuture<List<IndexRecord>> scan : scans) {
                    for (IndexRecord r : scan.join()) {
                        if (r.generation().isAppend() && r.target() instanceof WalTarget t && t.sliceId() == sliceId
                                && (last.isEmpty() || t.entryId() > last.getAsLong())) {
                            last = OptionalLong.of(t.entryId());
                        }
                    }
                }
                return last;
            });
        })));
    }

    /** Every OPEN slice and every lease, from one snapshot (see {@link SliceCensus}). */
    public CompletableFuture<SliceCensus> census() {
        return guard(() -> tx.read(tr -> {
            CompletableFuture<SortedMap<Long, WalSlice>> open = tr.getRange(ks.walStateRange(WalSliceState.OPEN))
                    .asList().thenApply(this::byState);
            CompletableFuture<SortedMap<Long, WalWriterLease>> leases = leases(tr);
            return open.thenCombine(leases, SliceCensus::new);
        }));
    }

    private CompletableFuture<SortedMap<Long, WalWriterLease>> leases(ReadTransaction tr) {
        return tr.getRange(ks.walLeaseRange()).asList().thenApply(kvs -> {
            SortedMap<Long, WalWriterLease> out = new TreeMap<>();
            for (KeyValue kv : kvs) {
                out.put(ks.unpackWalLeaseKey(kv.getKey()), WalWriterLeaseCodec.INSTANCE.decode(kv.getValue()));
            }
            return out;
        });
    }

    private SortedMap<Long, WalSlice> byState(List<KeyValue> kvs) {
        SortedMap<Long, WalSlice> out = new TreeMap<>();
        for (KeyValue kv : kvs) {
            out.put(ks.unpackWalStateKey(kv.getKey()).walSliceId(), WalSliceCodec.INSTANCE.decode(kv.getValue()));
        }
        return out;
    }
}
