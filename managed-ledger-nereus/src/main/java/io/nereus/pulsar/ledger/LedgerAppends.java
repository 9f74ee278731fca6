package io.nereus.pulsar.ledger;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.OffsetRange;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.stream.NereusStream;
import io.netty.buffer.ByteBufUtil;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.intercept.ManagedLedgerInterceptor;

/**
 * The append path of one managed ledger: the state check, the interceptor, the hand-off to the stream, and the
 * completion that moves the ledger's committed end. Appends complete on the ledger's executor in commit order
 * (the stream completes one stream's appends in offset order; the completion is the append's one hop onto the
 * executor).
 *
 * <p>Locking: the check and the hand-off run under this object's monitor, and {@link #stopAccepting} changes the
 * ledger's state under the same monitor, so terminate sees every append that passed the check. Nothing under the
 * monitor takes the ledger's monitor. Counters are atomics or volatile with one writer (the completion, on the
 * executor).
 */
final class LedgerAppends {
    private final NereusManagedLedger ledger;
    private final NereusStream stream;
    private final NereusLedgerStats stats;
    private final Executor executor;
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicLong entriesAdded = new AtomicLong();
    private volatile long committedBytes;
    private CompletableFuture<?> lastAdd = CompletableFuture.completedFuture(null); // guarded by this

    LedgerAppends(NereusManagedLedger ledger, NereusStream stream, NereusLedgerStats stats, Executor executor,
            long committedBytes) {
        this.ledger = ledger;
        this.stream = stream;
        this.stats = stats;
        this.executor = executor;
        this.committedBytes = committedBytes;
    }

    /** Appends one entry; completes on the ledger's executor with its position, in commit order. */
    CompletableFuture<Position> add(AddOperation op, int numberOfMessages, ManagedLedgerInterceptor interceptor) {
        long started = System.nanoTime();
        CompletableFuture<OffsetRange> appended;
        byte[] bytes;
        synchronized (this) {
            LedgerState s = ledger.state();
            if (s != LedgerState.OPEN) {
                stats.recordAddEntryError();
                return failedOnExecutor(ledger.stateError(s));
            }
            try {
                if (interceptor != null) {
                    interceptor.beforeAddEntry(op, numberOfMessages);
                }
                bytes = ByteBufUtil.getBytes(op.getData());
            } catch (RuntimeException e) {
                return failedOnExecutor(new ManagedLedgerException.ManagedLedgerInterceptException(e));
            }
            pending.incrementAndGet();
            appended = stream.append(List.of(AppendEntry.of(bytes)));
            lastAdd = appended;
        }
        return appended.handleAsync((range, t) -> {
            pending.decrementAndGet();
            if (t != null) {
                stats.recordAddEntryError();
                if (interceptor != null) {
                    interceptor.afterFailedAddEntry(numberOfMessages);
                }
                ManagedLedgerException e = PulsarErrors.map(t);
                if (e instanceof ManagedLedgerException.ManagedLedgerFencedException) {
                    ledger.fencedByNewerWriter();
                }
                throw new CompletionException(e);
            }
            committedBytes += bytes.length;
            entriesAdded.incrementAndGet();
            ledger.committed(range);
            long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - started);
            stats.addAddEntrySample(bytes.length);
            stats.addAddEntryLatencySample(micros, TimeUnit.MICROSECONDS);
            stats.addLedgerAddEntryLatencySample(micros, TimeUnit.MICROSECONDS);
            return PositionFactory.create(ledger.ledgerId(), range.start());
        }, executor);
    }

    /**
     * Runs {@code stop} (the ledger's move out of OPEN) under the append monitor and returns the last append handed
     * to the stream: once it completes, every append that passed the state check has.
     */
    synchronized CompletableFuture<?> stopAccepting(Runnable stop) {
        stop.run();
        return lastAdd;
    }

    int pending() {
        return pending.get();
    }

    long entriesAdded() {
        return entriesAdded.get();
    }

    /** Payload bytes committed to the stream, from its creation (the head's cumulative count at open). */
    long committedBytes() {
        return committedBytes;
    }

    private <T> CompletableFuture<T> failedOnExecutor(Throwable t) {
        CompletableFuture<T> f = new CompletableFuture<>();
        executor.execute(() -> f.completeExceptionally(t));
        return f;
    }
}
