package io.nereus.pulsar.ledger;

import io.nereus.generation.ObjectCoverage;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.stream.StreamStorage;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Nereus ledger's answer to Pulsar's offload API: an offload request materializes the stream below the position
 * into objects (higher generations) and completes after their publication; the offload counters report what lives
 * in objects. Pulsar's notion of offloading whole ledgers does not apply: the one virtual ledger is never
 * "offloaded" as such; its entries move to objects in place and stay readable through the same positions.
 *
 * <p>The object coverage is read from the index at open, after each request and, at most every
 * {@link #REFRESH_MILLIS}, when the broker asks for the offloaded size (background materialization publishes
 * without telling the ledger). Thread-safe.
 */
final class LedgerOffload {
    private static final Logger LOG = LoggerFactory.getLogger(LedgerOffload.class);
    static final long REFRESH_MILLIS = 10_000;

    private final NereusManagedLedger ml;
    private final StreamStorage storage;
    private final Clock clock;
    private final AtomicBoolean refreshing = new AtomicBoolean();
    private volatile ObjectCoverage coverage = ObjectCoverage.NONE;
    private volatile long refreshedAt;
    private volatile long lastSuccess;
    private volatile long lastFailure;

    LedgerOffload(NereusManagedLedger ml, StreamStorage storage, Clock clock) {
        this.ml = ml;
        this.storage = storage;
        this.clock = clock;
    }

    /**
     * Materializes the entries before {@code pos} (clamped to the last confirmed entry) and completes with the
     * position before which every entry is in objects.
     */
    CompletableFuture<Position> offloadPrefix(Position pos) {
        if (pos == null || pos.getLedgerId() != ml.ledgerId() || pos.getEntryId() < 0) {
            return CompletableFuture.failedFuture(new ManagedLedgerException.InvalidCursorPositionException(
                    "offload position " + pos + " is not a position of managed ledger " + ml.getName()
                            + " (its virtual ledger is " + ml.ledgerId() + ")"));
        }
        long upTo = pos.getEntryId();
        return storage.offload(ml.streamId(), upTo).handle((offset, error) -> {
            if (error != null) {
                lastFailure = clock.millis();
                LOG.warn("[{}] offload below {} failed", ml.getName(), pos, error);
                throw new java.util.concurrent.CompletionException(PulsarErrors.map(error));
            }
            lastSuccess = clock.millis();
            refresh();
            LOG.info("[{}] offload below {}: entries before {} are in objects", ml.getName(), pos, offset);
            return PositionFactory.create(ml.ledgerId(), offset);
        });
    }

    /**
     * Payload bytes of the ledger's entries held in objects from its first entry on, as last read; refreshed in the
     * background when stale.
     */
    long offloadedSize() {
        if (clock.millis() - refreshedAt > REFRESH_MILLIS) {
            refresh();
        }
        return coverage.bytes();
    }

    ObjectCoverage coverage() {
        return coverage;
    }

    long lastSuccessMillis() {
        return lastSuccess;
    }

    long lastFailureMillis() {
        return lastFailure;
    }

    /** Reads the coverage again (one at a time); failures keep the last value. */
    CompletableFuture<ObjectCoverage> refresh() {
        if (!refreshing.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(coverage);
        }
        return storage.objectCoverage(ml.streamId()).handle((c, error) -> {
            refreshing.set(false);
            if (error != null) {
                LOG.debug("[{}] reading the object coverage failed", ml.getName(), error);
                return coverage;
            }
            coverage = c;
            refreshedAt = clock.millis();
            return c;
        });
    }

    /** A line for the ledger's metadata in internal stats. */
    String describe() {
        ObjectCoverage c = coverage;
        if (c.objects() == 0) {
            return "no entries in objects yet";
        }
        return c.objects() + " objects holding " + c.entries() + " entries (" + c.bytes() + " payload bytes) of"
                + " offsets [" + c.firstOffset() + ", " + c.endOffset() + ")";
    }
}
