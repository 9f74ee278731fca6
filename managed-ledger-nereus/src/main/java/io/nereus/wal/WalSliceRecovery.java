package io.nereus.wal;

import io.nereus.metadata.SliceCensus;
import io.nereus.metadata.WalSlice;
import io.nereus.metadata.WalSliceState;
import io.nereus.metadata.WalSliceStore;
import io.nereus.metadata.WalWriterLease;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds WAL slices left OPEN by writers that are gone and recovers them: opens the slice's ledger with BookKeeper
 * recovery (which fences it, so its old writer can add nothing more, and closes it at the last entry the bookies
 * hold), then seals the slice. No slice stays open forever: every instance runs this at start and every
 * {@link WalConfig#recoveryInterval}, so a slice is sealed at most about one lease plus one interval after its
 * writer stopped renewing.
 *
 * <p><b>Which slices.</b> From one snapshot of the OPEN slices and the leases ({@link WalSliceStore#census}), an
 * OPEN slice is recovered when this instance's writer does not hold it ({@link WalSlices#holds}) and
 * <ul>
 *   <li>its lease is gone: the writer closed (it releases its lease after sealing its slices) or was found expired
 *       earlier. A lease is taken before any slice registers under it, and registration reads it, so an OPEN slice
 *       without its lease in the same snapshot has no live writer;</li>
 *   <li>or its lease has expired: this instance has seen the same beat for the lease's whole length by its own
 *       clock. A writer renews every third of its lease, so a writer that keeps renewing is never judged expired,
 *       whatever the hosts' clocks say: only rates are compared, never clock readings of two hosts. A restarted
 *       broker that reuses its writer id takes a new lease (a new incarnation), so the slices of its previous
 *       process are judged by the old lease like any other writer's;</li>
 *   <li>or it is registered under this writer's own current lease but no longer held (its close or seal failed,
 *       or its registration's outcome was unknown).</li>
 * </ul>
 * Once every OPEN slice of an expired lease is sealed, the lease is removed ({@link WalSliceStore#expireLease},
 * refused when it was renewed meanwhile or a slice of it became OPEN).
 *
 * <p><b>Why nothing acknowledged is lost.</b> A batch is acknowledged only after its commit, and committed only
 * after BookKeeper acknowledged its write; BookKeeper's recovery keeps every entry acknowledged to the writer, so
 * every committed batch stays readable in the closed ledger. A batch that reached the bookies but was not
 * committed was never acknowledged; recovery may keep it in the ledger, where no index record names it. A writer
 * judged expired while it still runs (paused longer than its lease) loses no acknowledged entry either: its next
 * writes to the fenced ledger fail, and its commits into the slice, now SEALED, are refused
 * ({@link io.nereus.metadata.CommitResult.SliceNotOpen}), so those appends fail retriably without acknowledgement;
 * it then takes a new lease and goes on in a new slice. When BookKeeper's recovery cannot finish (the bookies' last
 * entry of the ledger is unreadable, a write torn by a crash), the slice is salvaged instead: sealed, then its
 * ledger closed at the last committed entry (see {@link #salvage}).
 *
 * <p>Runs never overlap: {@link #runOnce} during a run returns that run. Its observations are kept only for leases
 * present in the last snapshot. Thread-safe.
 */
public final class WalSliceRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(WalSliceRecovery.class);
    /** SEALED slices checked at start for a ledger a salvage left open (there are few: they are collected). */
    private static final int SEALED_SCAN_LIMIT = 10_000;

    /** The slices of this instance's own writer, which recovery leaves alone. */
    interface LocalWriter {
        /** Whether the writer holds slice {@code sliceId}. */
        boolean holds(long sliceId);

        /** The incarnation of the lease the writer holds, 0 when none. */
        long incarnation();
    }

    /** What one run did: the slices it sealed and the leases it removed, by id. */
    public record Report(List<Long> sealed, List<Long> expiredLeases) {
        public Report {
            sealed = List.copyOf(sealed);
            expiredLeases = List.copyOf(expiredLeases);
        }
    }

    private record Observation(long beat, Instant since) {
    }

    private final BookKeeper bk;
    private final WalSliceStore store;
    private final byte[] password;
    private final Clock clock;
    private final LocalWriter local;
    private final Map<Long, Observation> seen = new ConcurrentHashMap<>();
    /** SEALED slices salvaged ({@link #salvage}) whose ledger is not closed yet. */
    private final Set<Long> unclosed = ConcurrentHashMap.newKeySet();
    /** Whether the SEALED slices were checked for unclosed ledgers since start. */
    private volatile boolean scannedSealed;
    private CompletableFuture<Report> running;

    WalSliceRecovery(BookKeeper bk, WalSliceStore store, byte[] password, Clock clock, LocalWriter local) {
        this.bk = Objects.requireNonNull(bk, "bk");
        this.store = Objects.requireNonNull(store, "store");
        this.password = password.clone();
        this.clock = Objects.requireNonNull(clock, "clock");
        this.local = Objects.requireNonNull(local, "local");
    }

    /**
     * Runs recovery once (or joins the run in progress).
     *
     * @return what the run did; fails when reading the census failed. A slice whose recovery failed is logged,
     *         left OPEN and tried again by the next run
     */
    public synchronized CompletableFuture<Report> runOnce() {
        if (running == null || running.isDone()) {
            try {
                running = closeUnclosed().exceptionally(t -> {
                    LOG.warn("looking for salvaged WAL slices left unclosed failed, trying again later", t);
                    return null;
                }).thenCompose(ignored -> store.census()).thenCompose(this::recover);
            } catch (RuntimeException e) {
                running = CompletableFuture.failedFuture(e);
            }
        }
        return running;
    }

    private CompletableFuture<Report> recover(SliceCensus census) {
        Instant now = clock.instant();
        long own = local.incarnation();
        seen.keySet().retainAll(census.leases().keySet());
        Map<Long, Long> expired = new HashMap<>();
        for (Map.Entry<Long, WalWriterLease> e : census.leases().entrySet()) {
            long incarnation = e.getKey();
            WalWriterLease lease = e.getValue();
            Observation o = seen.get(incarnation);
            if (o == null || o.beat() != lease.beat()) {
                seen.put(incarnation, new Observation(lease.beat(), now));
            } else if (incarnation != own && !now.isBefore(o.since().plus(lease.lease()))) {
                expired.put(incarnation, lease.beat());
            }
        }
        List<CompletableFuture<Long>> recoveries = new ArrayList<>();
        Map<Long, Integer> openOfExpired = new HashMap<>();
        for (Map.Entry<Long, WalSlice> e : census.open().entrySet()) {
            long id = e.getKey();
            WalSlice slice = e.getValue();
            long incarnation = slice.incarnation();
            if (expired.containsKey(incarnation)) {
                openOfExpired.merge(incarnation, 1, Integer::sum);
            }
            if (local.holds(id)) {
                continue;
            }
            boolean abandoned = incarnation == own || !census.leases().containsKey(incarnation)
                    || expired.containsKey(incarnation);
            if (abandoned) {
                recoveries.add(recoverSlice(id, slice));
            }
        }
        return CompletableFuture.allOf(recoveries.toArray(new CompletableFuture<?>[0])).thenCompose(ignored -> {
            List<Long> sealed = new ArrayList<>();
            Map<Long, Integer> sealedOfExpired = new HashMap<>();
            for (CompletableFuture<Long> r : recoveries) {
                Long id = r.join();
                if (id != null) {
                    sealed.add(id);
                    long incarnation = census.open().get(id).incarnation();
                    sealedOfExpired.merge(incarnation, 1, Integer::sum);
                }
            }
            return expireLeases(expired, openOfExpired, sealedOfExpired).thenApply(gone -> {
                Report report = new Report(sealed, gone);
                if (!sealed.isEmpty() || !gone.isEmpty()) {
                    LOG.info("WAL slice recovery: sealed={} expiredLeases={}", sealed, gone);
                }
                return report;
            });
        });
    }

    /** Removes each expired lease whose OPEN slices (in the census) were all sealed by this run. */
    private CompletableFuture<List<Long>> expireLeases(Map<Long, Long> expired, Map<Long, Integer> open,
            Map<Long, Integer> sealed) {
        List<Long> candidates = new ArrayList<>();
        List<CompletableFuture<Boolean>> removals = new ArrayList<>();
        for (Map.Entry<Long, Long> e : expired.entrySet()) {
            long incarnation = e.getKey();
            if (open.getOrDefault(incarnation, 0).equals(sealed.getOrDefault(incarnation, 0))) {
                candidates.add(incarnation);
                removals.add(store.expireLease(incarnation, e.getValue()).exceptionally(t -> {
                    LOG.warn("removing an expired WAL writer lease failed: incarnation={}", incarnation, t);
                    return false;
                }));
            }
        }
        return CompletableFuture.allOf(removals.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
            List<Long> gone = new ArrayList<>();
            for (int i = 0; i < candidates.size(); i++) {
                if (removals.get(i).join()) {
                    gone.add(candidates.get(i));
                    seen.remove(candidates.get(i));
                }
            }
            return gone;
        });
    }

    /**
     * Fences and closes the slice's ledger, then seals it; when BookKeeper cannot recover the ledger, salvages it
     * ({@link #salvage}). The slice id once sealed, null when it failed.
     */
    private CompletableFuture<Long> recoverSlice(long id, WalSlice slice) {
        CompletableFuture<Boolean> closed = WalLedgers.recover(bk, id, password).handle((rh, error) -> {
            if (error == null) {
                LOG.info("WAL slice fenced and closed by recovery: slice={} writer={} incarnation={} lastEntry={}",
                        id, slice.writerId(), slice.incarnation(), rh.getLastAddConfirmed());
                rh.closeAsync();
                return true;
            }
            if (WalLedgers.noSuchLedger(WalLedgers.code(error))) {
                LOG.error("an OPEN WAL slice has no ledger; anything committed into it is lost: slice={} writer={}",
                        id, slice.writerId());
                return true;
            }
            LOG.warn("BookKeeper could not recover a WAL slice's ledger, salvaging it: slice={} writer={} rc={}", id,
                    slice.writerId(), WalLedgers.code(error), error);
            return false;
        });
        return closed.thenCompose(recovered -> recovered ? store.seal(id).thenApply(s -> id) : salvage(id))
                .handle((sealed, error) -> {
                    if (error != null) {
                        LOG.warn("WAL slice recovery failed, trying again later: slice={} writer={}", id,
                                slice.writerId(), error);
                        return null;
                    }
                    return sealed;
                });
    }

    /**
     * Seals a slice whose ledger BookKeeper could not recover, then closes the ledger at the last entry a committed
     * record names. BookKeeper's recovery fails for good when the bookies' last entry of the ledger is unreadable:
     * a batch whose write every bookie holding it was killed in the middle of (BookKeeper's journal has no checksum
     * of its own, so a torn record comes back at restart as an entry whose digest does not match); with one bookie,
     * or with every bookie of the ensemble crashed at once, no bookie answers validly, and the ledger could then
     * never be opened, not even to read its committed entries. Such a batch was never acknowledged by the bookies,
     * so never committed: it lies past every committed entry. Sealing first makes the slice's ranges final (a
     * commit into a SEALED slice is refused), so the last entry a record names
     * ({@link WalSliceStore#lastNamedEntry}) cannot move afterwards; the ledger is then closed there
     * ({@link WalLedgers#closeAt}), and every committed entry reads again. Batches the bookies acknowledged past it
     * were never committed, so never acknowledged to a producer. The bookies that answered BookKeeper's failed
     * recovery were fenced by it. Should the close fail after the seal, the slice is remembered and closed by the
     * next run; the first run after start finds such slices among the SEALED ones.
     *
     * @return the slice id once sealed and closed
     */
    private CompletableFuture<Long> salvage(long id) {
        return store.seal(id).thenCompose(sealed -> {
            unclosed.add(id); // only once SEALED: closing the ledger of a slice still OPEN could cut off a commit
            return closeSealed(id);
        }).thenApply(ignored -> id);
    }

    /** Closes the ledger of SEALED slice {@code id} at the last entry a record names, and forgets it as unclosed. */
    private CompletableFuture<Void> closeSealed(long id) {
        return store.lastNamedEntry(id).thenCompose(last -> WalLedgers.closeAt(bk, id, last.orElse(-1L))
                .thenAccept(closedAt -> {
                    unclosed.remove(id);
                    if (last.isPresent() && closedAt < last.getAsLong()) {
                        LOG.error("a WAL slice's ledger was closed before its last committed entry; the entries past "
                                + "it are lost: slice={} closedAt={} lastCommittedEntry={}", id, closedAt,
                                last.getAsLong());
                    } else {
                        LOG.error("WAL slice salvaged: BookKeeper could not recover its ledger (its last entry on the "
                                + "bookies is unreadable, a write torn by a crash), so the ledger was closed at the "
                                + "last committed entry; every committed entry stays readable: slice={} lastEntry={}",
                                id, closedAt);
                    }
                }));
    }

    /**
     * Closes the ledgers of salvaged slices whose close failed: those remembered, and at the first run after start,
     * any SEALED slice whose ledger is still open (a salvage whose close failed before a restart). Failures are
     * logged and tried again by the next run.
     */
    private CompletableFuture<Void> closeUnclosed() {
        CompletableFuture<Void> found = CompletableFuture.completedFuture(null);
        if (!scannedSealed) {
            found = store.slices(WalSliceState.SEALED, 0, SEALED_SCAN_LIMIT).thenCompose(sealed -> {
                List<CompletableFuture<Void>> checks = new ArrayList<>();
                for (long id : sealed.keySet()) {
                    CompletableFuture<LedgerMetadata> metadata;
                    try {
                        metadata = bk.getLedgerMetadata(id);
                    } catch (RuntimeException e) {
                        metadata = CompletableFuture.failedFuture(e);
                    }
                    checks.add(metadata.handle((m, t) -> {
                        if (t == null && !m.isClosed()) {
                            unclosed.add(id);
                        }
                        return null; // a ledger whose metadata cannot be read is not one a salvage left open
                    }));
                }
                return CompletableFuture.allOf(checks.toArray(new CompletableFuture<?>[0]));
            }).thenRun(() -> scannedSealed = true);
        }
        return found.thenCompose(ignored -> {
            List<CompletableFuture<Void>> closes = new ArrayList<>();
            for (long id : List.copyOf(unclosed)) {
                closes.add(closeSealed(id).exceptionally(t -> {
                    LOG.warn("closing a salvaged WAL slice's ledger failed, trying again later: slice={}", id, t);
                    return null;
                }));
            }
            return CompletableFuture.allOf(closes.toArray(new CompletableFuture<?>[0]));
        });
    }
}
