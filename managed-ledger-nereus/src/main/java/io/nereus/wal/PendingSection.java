package io.nereus.wal;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;

/**
 * One stream's appends in the open batch of a {@link WalWriter}: consecutive entries of one writer epoch, with
 * the futures and liveness checks of the appends they came from.
 *
 * <p>Filled by appenders under the {@link OpenBatch} monitor while its batch is open; once the batch is cut it
 * is never changed again, and its waiters are completed by whichever thread ends the appends (the closing
 * thread, the owner thread, or the thread that finished the commit).
 */
final class PendingSection {
    final StreamId stream;
    final long epoch;
    final long firstOffset;
    long nextOffset;
    // Sized for the usual section, one append: with a thousand streams a batch holds about one entry of each, and
    // the default capacity of ten made these lists about 4 % of all the broker allocated (1,000 topics, batched).
    final List<AppendEntry> entries = new ArrayList<>(2);
    private final List<CompletableFuture<StreamHead>> waiters = new ArrayList<>(1);
    private final List<BooleanSupplier> liveness = new ArrayList<>(1);

    PendingSection(StreamId stream, long epoch, long firstOffset) {
        this.stream = stream;
        this.epoch = epoch;
        this.firstOffset = firstOffset;
        this.nextOffset = firstOffset;
    }

    void add(List<AppendEntry> more, CompletableFuture<StreamHead> waiter, BooleanSupplier live) {
        for (AppendEntry e : more) {
            entries.add(e);
            nextOffset = Math.addExact(nextOffset, e.recordCount());
        }
        waiters.add(waiter);
        liveness.add(live);
    }

    /** False once any of the appends' callers reports its stream failed since. */
    boolean live() {
        for (BooleanSupplier l : liveness) {
            if (!l.getAsBoolean()) {
                return false;
            }
        }
        return true;
    }

    /** The stored form of the section; computes its CRC32C, so it is called once, when the batch is sealed. */
    WalSection toWalSection() {
        return WalSection.of(stream, firstOffset, entries);
    }

    /** Releases the WAL's reference to each entry's payload (see {@link WalWriter#append}); called once. */
    void releasePayloads() {
        for (AppendEntry e : entries) {
            e.payload().release();
        }
    }

    void complete(StreamHead head) {
        waiters.forEach(w -> w.complete(head));
    }

    void fail(Throwable t) {
        waiters.forEach(w -> w.completeExceptionally(t));
    }
}
