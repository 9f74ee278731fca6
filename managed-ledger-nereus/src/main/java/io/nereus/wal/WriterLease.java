package io.nereus.wal;

import io.nereus.metadata.WalSliceStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease of one {@link WalWriter} ({@link io.nereus.metadata.WalWriterLease}): taken before the writer registers
 * its first slice, renewed every third of its length, released when the writer closes. Its incarnation is what
 * the writer's slices are registered under; another instance recovers them only once this lease is gone or has
 * gone unrenewed for its whole length ({@link WalSliceRecovery}).
 *
 * <p>A lease lost while the writer lives (renewal found it gone: others judged the writer dead, e.g. after a pause
 * longer than the lease, sealed its slices and removed it) is replaced by a new incarnation the next time a slice is
 * registered; the old incarnation is never renewed again.
 *
 * <p>Confined to the writer's owner thread: every method runs there, and metadata completions hop back to it
 * through {@code owner}; {@link #current()} alone may be read from any thread.
 */
final class WriterLease {
    private static final Logger LOG = LoggerFactory.getLogger(WalWriter.class);

    private final WalSliceStore store;
    private final String writerId;
    private final Duration length;
    private final Executor owner;
    /** The lease being taken or held; null when none is (not yet taken, lost, failed or released). */
    private CompletableFuture<Long> taking;
    /** The incarnation held, 0 when none; written on the owner, read anywhere. */
    private volatile long held;
    private boolean renewing;
    private boolean released;

    WriterLease(WalSliceStore store, String writerId, Duration length, Executor owner) {
        this.store = store;
        this.writerId = writerId;
        this.length = length;
        this.owner = owner;
    }

    /**
     * The incarnation to register a slice under: the one held, or a new one taken now (completing on the owner
     * thread). Fails when taking it fails; the next call tries again.
     */
    CompletableFuture<Long> incarnation() {
        if (released) {
            return CompletableFuture.failedFuture(new IllegalStateException("WAL writer lease released"));
        }
        if (taking == null) {
            CompletableFuture<Long> next = new CompletableFuture<>();
            taking = next;
            store.takeLease(writerId, length).whenComplete((incarnation, error) -> owner.execute(() -> {
                if (error != null) {
                    LOG.warn("taking the WAL writer lease failed: writer={}", writerId, error);
                    if (taking == next) {
                        taking = null;
                    }
                    next.completeExceptionally(error);
                    return;
                }
                if (taking == next) {
                    held = incarnation;
                    LOG.info("WAL writer lease taken: writer={} incarnation={} lease={}", writerId, incarnation, length);
                }
                next.complete(incarnation);
            }));
        }
        return taking;
    }

    /** The lease {@code incarnation} is gone: the next registration takes a new one. */
    void lost(long incarnation) {
        if (held == incarnation) {
            LOG.warn("WAL writer lease lost, taking a new one with the next slice: writer={} incarnation={}", writerId,
                    incarnation);
            held = 0;
            taking = null;
        }
    }

    /** Renews the lease held, if any and no renewal is in flight. */
    void renew() {
        long incarnation = held;
        if (incarnation == 0 || renewing || released) {
            return;
        }
        renewing = true;
        store.renewLease(incarnation).whenComplete((renewed, error) -> owner.execute(() -> {
            renewing = false;
            if (error != null) {
                LOG.warn("renewing the WAL writer lease failed: writer={} incarnation={}", writerId, incarnation, error);
            } else if (!renewed) {
                lost(incarnation);
            }
        }));
    }

    /**
     * Releases the lease held (the writer is closing and has sealed its slices); no lease is taken or renewed
     * afterwards. The future completes on the owner thread, whether or not the removal succeeded.
     */
    CompletableFuture<Void> release() {
        released = true;
        long incarnation = held;
        held = 0;
        taking = null;
        if (incarnation == 0) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        store.releaseLease(incarnation).whenComplete((ignored, error) -> owner.execute(() -> {
            if (error != null) {
                LOG.warn("releasing the WAL writer lease failed, it expires instead: writer={} incarnation={}",
                        writerId, incarnation, error);
            }
            done.complete(null);
        }));
        return done;
    }

    /** The incarnation held now, 0 when none; any thread. */
    long current() {
        return held;
    }
}
