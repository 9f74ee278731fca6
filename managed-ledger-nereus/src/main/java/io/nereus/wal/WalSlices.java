package io.nereus.wal;

import io.nereus.metadata.SliceRegistration;
import io.nereus.metadata.WalSliceStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slices of one {@link WalWriter} from creation to seal, recorded in {@link WalSliceStore}:
 * <ol>
 *   <li><b>create</b>: take (or reuse) the writer's {@link WriterLease}, have BookKeeper create the ledger with
 *       custom metadata naming the WAL format, the writer and the lease incarnation, then <b>register</b> it OPEN
 *       under that lease. Only then does the writer write a batch to it, so every ledger holding a batch is a
 *       registered slice. A crash between creation and registration leaves an empty ledger that no record names
 *       (its custom metadata does); a refused registration deletes the ledger; a registration whose outcome is
 *       unknown closes it and seals whatever was registered;</li>
 *   <li><b>write</b>: batches are bound to the current slice as they are written ({@link #bind});</li>
 *   <li><b>retire</b> (size, age, a failed write, the writer closing): no new batches; once every batch written
 *       to it is acknowledged or failed, BookKeeper closes the ledger;</li>
 *   <li><b>seal</b>: once the ledger is closed and every batch bound to the slice has finished its commit, the
 *       slice is sealed. Commits of a slice's batches never meet a SEALED slice of their own writer. A slice whose
 *       close or seal fails is left to slice recovery, which fences, closes and seals it.</li>
 * </ol>
 * From creation until sealed (or given up) a slice is <b>held</b>: {@link #holds} tells this instance's
 * {@link WalSliceRecovery} to keep away from it.
 *
 * <p>Confined to the writer's owner thread (completions hop back through {@code owner}), except {@link #holds},
 * which any thread may call.
 */
final class WalSlices {
    private static final Logger LOG = LoggerFactory.getLogger(WalWriter.class);

    /** What the pipeline hears back, on the owner thread. */
    interface Listener {
        /** The slice asked for is registered and current. */
        void sliceReady();

        /** Creating the slice asked for failed; the batches waiting for it fail with {@code error}. */
        void sliceFailed(Throwable error);

        /** A retired slice was sealed or given up: the writer may be idle now. */
        void sliceSettled();
    }

    private final BookKeeper bk;
    private final WalSliceStore store;
    private final WriterLease lease;
    private final WalConfig config;
    private final String writerId;
    private final Clock clock;
    private final Executor owner;
    private final Listener listener;
    private final SliceMirrors mirrors;

    private Slice current;
    private boolean creating;
    /** Slices created and not yet sealed or given up, by id (the current one included). */
    private final Map<Long, Slice> unsealed = new HashMap<>();
    /** Ledger ids from creation until sealed or given up; read by recovery on other threads. */
    private final Set<Long> held = ConcurrentHashMap.newKeySet();
    /** Ledgers being deleted or closed after a failed registration. */
    private int cleanups;
    /** Callers of {@link #whenSettled}: each waits for the slices unsealed when it asked. */
    private final List<Settling> settling = new ArrayList<>();

    private record Settling(Set<Long> slices, CompletableFuture<Void> done) {
    }

    WalSlices(BookKeeper bk, WalSliceStore store, WriterLease lease, WalConfig config, String writerId, Clock clock,
            Executor owner, Listener listener, SliceMirrors mirrors) {
        this.mirrors = mirrors;
        this.bk = bk;
        this.store = store;
        this.lease = lease;
        this.config = config;
        this.writerId = writerId;
        this.clock = clock;
        this.owner = owner;
        this.listener = listener;
    }

    /** The slice to write to, null when there is none (then {@link #create}). */
    Slice current() {
        return current;
    }

    /** True while a slice is being created and registered. */
    boolean creating() {
        return creating;
    }

    /** Nothing in flight: no slice being created, none waiting to be sealed, no cleanup running. */
    boolean idle() {
        return !creating && unsealed.isEmpty() && cleanups == 0;
    }

    /** Whether this writer holds slice {@code sliceId} (from creation until sealed or given up); any thread. */
    boolean holds(long sliceId) {
        return held.contains(sliceId);
    }

    /** Starts creating the next slice unless one is being created. */
    void create() {
        if (creating) {
            return;
        }
        creating = true;
        lease.incarnation().whenComplete((incarnation, error) -> owner.execute(() -> {
            if (error != null) {
                failed(error);
            } else {
                createLedger(incarnation);
            }
        }));
    }

    private void createLedger(long incarnation) {
        Map<String, byte[]> custom = Map.of(
                WalWriter.LEDGER_METADATA_FORMAT, utf8(Short.toString(WalBatchCodec.VERSION)),
                WalWriter.LEDGER_METADATA_WRITER, utf8(writerId),
                WalWriter.LEDGER_METADATA_INCARNATION, utf8(Long.toString(incarnation)));
        WalLedgers.create(bk, config, custom)
                .whenComplete((lh, error) -> owner.execute(() -> created(lh, error, incarnation)));
    }

    private void created(WriteHandle lh, Throwable createError, long incarnation) {
        if (createError != null) {
            LOG.warn("creating a WAL slice failed: rc={}", WalLedgers.code(createError));
            failed(createError);
            return;
        }
        long id = lh.getId();
        held.add(id);
        store.register(id, writerId, incarnation).whenComplete((r, error) -> owner.execute(() -> {
            if (r instanceof SliceRegistration.Registered) {
                LOG.info("WAL slice opened: slice={} writer={} incarnation={}", id, writerId, incarnation);
                Slice s = new Slice(lh, clock.instant(), mirrors.start(id, config.sliceMaxBytes()));
                unsealed.put(id, s);
                current = s;
                creating = false;
                listener.sliceReady();
                return;
            }
            if (r instanceof SliceRegistration.LeaseGone) {
                lease.lost(incarnation);
            }
            if (error != null) {
                LOG.warn("registering a WAL slice failed, its outcome unknown: slice={}", id, error);
                cleanup(id, lh, false);
                failed(error);
            } else {
                LOG.warn("registering a WAL slice was refused: slice={} result={}", id, r);
                cleanup(id, lh, true);
                failed(new IllegalStateException("WAL slice registration refused: " + r));
            }
        }));
    }

    /**
     * Gets rid of a ledger whose registration did not succeed: deleted when the registration was refused (no
     * record names it); otherwise closed and sealed, in case the registration did land.
     */
    private void cleanup(long id, WriteHandle lh, boolean refused) {
        cleanups++;
        if (refused) {
            WalLedgers.delete(bk, id).whenComplete((r, e) -> owner.execute(() -> cleaned(id)));
        } else {
            lh.closeAsync().whenComplete((c, ce) -> store.seal(id)
                    .whenComplete((r, e) -> owner.execute(() -> cleaned(id))));
        }
    }

    private void cleaned(long id) {
        cleanups--;
        held.remove(id);
        listener.sliceSettled();
    }

    private void failed(Throwable error) {
        creating = false;
        listener.sliceFailed(error);
    }

    /** Whether {@code s} is due to be retired: a write failed, or it reached its size or age. */
    boolean due(Slice s) {
        return s.broken || s.bytes >= config.sliceMaxBytes()
                || !clock.instant().isBefore(s.created.plus(config.sliceMaxAge()));
    }

    /** A batch of {@code bytes} bytes is written to {@code s} now; it is bound to the slice until its commit ends. */
    void bind(Slice s, int bytes) {
        s.bytes += bytes;
        s.pending++;
        s.unfinished++;
    }

    /** The write of a batch to {@code s} finished, {@code failed} or not. */
    void added(Slice s, boolean failed) {
        s.pending--;
        if (failed) {
            s.broken = true;
            if (s.mirror != null) {
                s.mirror.drop("a write to the slice failed");
            }
        }
        if (s.retired && s.pending == 0) {
            close(s);
        }
    }

    /** A batch written to slice {@code sliceId} has finished its commit (or failed); -1: written nowhere. */
    void finished(long sliceId) {
        Slice s = unsealed.get(sliceId);
        if (s != null) {
            s.unfinished--;
            sealIfDone(s);
        }
    }

    /** No more batches go to {@code s}; it closes once its written batches are acknowledged or failed. */
    void retire(Slice s) {
        if (!s.retired && s.mirror != null) {
            s.mirror.finish();
        }
        s.retired = true;
        if (current == s) {
            current = null;
        }
        if (s.pending == 0) {
            close(s);
        }
    }

    private void close(Slice s) {
        if (s.closing) {
            return;
        }
        s.closing = true;
        s.ledger.closeAsync().whenComplete((ignored, error) -> owner.execute(() -> {
            if (error == null) {
                s.closed = true;
                sealIfDone(s);
            } else {
                LOG.warn("closing a WAL slice failed, leaving it to slice recovery: slice={} rc={}", s.id(),
                        WalLedgers.code(error));
                giveUp(s);
            }
        }));
    }

    private void sealIfDone(Slice s) {
        if (!s.closed || s.unfinished > 0 || s.sealing) {
            return;
        }
        s.sealing = true;
        store.seal(s.id()).whenComplete((sealed, error) -> owner.execute(() -> {
            if (error != null) {
                LOG.warn("sealing a WAL slice failed, leaving it to slice recovery: slice={}", s.id(), error);
            } else {
                LOG.info("WAL slice sealed: slice={} writer={}", s.id(), writerId);
            }
            giveUp(s);
        }));
    }

    private void giveUp(Slice s) {
        unsealed.remove(s.id());
        held.remove(s.id());
        for (Iterator<Settling> it = settling.iterator(); it.hasNext(); ) {
            Settling w = it.next();
            w.slices().remove(s.id());
            if (w.slices().isEmpty()) {
                it.remove();
                w.done().complete(null);
            }
        }
        listener.sliceSettled();
    }

    /**
     * Retires the current slice, if any (the next batch opens a new one); {@code done} completes once every slice
     * created so far is sealed, or given up to slice recovery when its close or seal failed.
     */
    void rollAndSettle(CompletableFuture<Void> done) {
        if (current != null) {
            retire(current);
        }
        if (unsealed.isEmpty()) {
            done.complete(null);
        } else {
            settling.add(new Settling(new HashSet<>(unsealed.keySet()), done));
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A registered slice of this writer: {@code pending}, its batches written but not yet acknowledged;
     * {@code unfinished}, its batches whose commit has not finished.
     */
    static final class Slice {
        final WriteHandle ledger;
        final Instant created;
        /** The slice's local mirror ({@link SliceMirrors}); null when it has none. */
        final SliceMirrors.Mirror mirror;
        long bytes;
        int pending;
        int unfinished;
        boolean broken;
        boolean retired;
        boolean closing;
        boolean closed;
        boolean sealing;

        Slice(WriteHandle ledger, Instant created, SliceMirrors.Mirror mirror) {
            this.ledger = ledger;
            this.created = created;
            this.mirror = mirror;
        }

        long id() {
            return ledger.getId();
        }
    }
}
