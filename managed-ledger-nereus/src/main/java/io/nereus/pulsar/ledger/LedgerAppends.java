package io.nereus.pulsar.ledger;

import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.OffsetRange;
import io.nereus.pulsar.PulsarErrors;
import io.nereus.stream.NereusStream;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.intercept.ManagedLedgerInterceptor;

/**
 * The append path of one managed ledger: the state check, the interceptor, the hand-off to the stream, and the
 * completion that moves the ledger's committed end.
 *
 * <p>Owner: the ledger's ordered executor (STYLE §7), as in Pulsar's own managed ledger. An append hops onto it
 * once, is checked and handed to the stream there in call order, and completes there in commit order (the stream
 * completes one stream's appends in offset order); no lock is held. {@link #handedOff} runs on the same executor,
 * so terminate sees every append that passed the check. {@code lastAdd} changes only on the executor; counters
 * other threads read are atomics.
 *
 * <p><b>Order across a failure.</b> Once an append fails, every append added before the broker has seen every
 * append added so far complete fails too, without reaching the stream: the broker fences the topic when an append
 * fails and disconnects its producers, which then resend everything unacknowledged in order, so an append added in
 * that window succeeding would store a producer's later message before its earlier, failed one (the stream would
 * take it at its re-read head). Pulsar's own managed ledger fails its pending appends the same way when it cannot
 * write them. A failure is noticed on the executor when it is delivered, or earlier, at a hand-off, by the stream's
 * write session having changed since the last one; the window closes when no added append is left incomplete,
 * which the broker waits for before it lets producers publish again.
 */
final class LedgerAppends {
    private final NereusManagedLedger ledger;
    private final NereusStream stream;
    private final NereusLedgerStats stats;
    private final Executor executor;
    private final AtomicInteger pending = new AtomicInteger();
    /** Appends added (counted at {@link #add}, before the hop to the executor) and not yet completed. */
    private final AtomicInteger incomplete = new AtomicInteger();
    private final AtomicLong entriesAdded = new AtomicLong();
    private CompletableFuture<?> lastAdd = CompletableFuture.completedFuture(null); // executor only
    /** The stream's write session the last hand-off saw; -1 before the first. Executor only. */
    private long session = -1;
    /** An append failed and some added before the broker saw it are still incomplete. Executor only. */
    private boolean failing;

    LedgerAppends(NereusManagedLedger ledger, NereusStream stream, NereusLedgerStats stats, Executor executor) {
        this.ledger = ledger;
        this.stream = stream;
        this.stats = stats;
        this.executor = executor;
    }

    /** Appends one entry; completes on the ledger's executor with its position, in commit order. */
    CompletableFuture<Position> add(AddOperation op, int numberOfMessages, ManagedLedgerInterceptor interceptor) {
        CompletableFuture<Position> result = new CompletableFuture<>();
        long started = System.nanoTime();
        incomplete.incrementAndGet();
        try {
            executor.execute(() -> handOff(op, numberOfMessages, interceptor, started, result));
        } catch (RejectedExecutionException e) {
            incomplete.decrementAndGet();
            stats.recordAddEntryError();
            result.completeExceptionally(ledger.stateError(LedgerState.CLOSED));
        }
        return result;
    }

    /** On the executor, as an added append completes (before its result): the end of a failure's window. */
    private void finished(boolean failed) {
        failing |= failed;
        if (incomplete.decrementAndGet() == 0 && failing) {
            failing = false;
            session = stream.writeSession();
        }
    }

    /** On the executor: the state check, the interceptor and the hand-off to the stream. */
    private void handOff(AddOperation op, int numberOfMessages, ManagedLedgerInterceptor interceptor, long started,
            CompletableFuture<Position> result) {
        LedgerState s = ledger.state();
        if (s != LedgerState.OPEN) {
            finished(false);
            stats.recordAddEntryError();
            result.completeExceptionally(ledger.stateError(s));
            return;
        }
        long current = stream.writeSession();
        if (session != -1 && current != session) {
            failing = true; // an append handed off earlier failed (or is failing); its failure is not yet delivered
        }
        if (failing) {
            finished(true);
            stats.recordAddEntryError();
            result.completeExceptionally(new ManagedLedgerException("append refused: an earlier append of ledger "
                    + ledger.getName() + " failed, and the appends added before the broker saw that fail with it"));
            return;
        }
        session = current;
        ByteBuf data;
        try {
            if (interceptor != null) {
                interceptor.beforeAddEntry(op, numberOfMessages);
            }
            data = op.getData();
        } catch (RuntimeException e) {
            finished(false);
            result.completeExceptionally(new ManagedLedgerException.ManagedLedgerInterceptException(e));
            return;
        }
        pending.incrementAndGet();
        int bytes = data.readableBytes();
        // the buffer itself, not a copy: the stream takes references of its own (the op keeps its reference until
        // the append has completed, so that the broker's callback sees the data); cached once committed only while a
        // cursor is active, as Pulsar's managed ledger caches an added entry
        CompletableFuture<OffsetRange> appended =
                stream.append(List.of(AppendEntry.of(data)), ledger.hasActiveCursors());
        lastAdd = appended;
        appended.whenCompleteAsync((range, t) -> {
            pending.decrementAndGet();
            finished(t != null);
            if (t != null) {
                stats.recordAddEntryError();
                if (interceptor != null) {
                    interceptor.afterFailedAddEntry(numberOfMessages);
                }
                ManagedLedgerException e = PulsarErrors.map(t);
                if (e instanceof ManagedLedgerException.ManagedLedgerFencedException) {
                    ledger.fencedByNewerWriter();
                }
                result.completeExceptionally(e);
                return;
            }
            entriesAdded.incrementAndGet();
            ledger.committed(range, bytes);
            long micros = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - started);
            stats.addAddEntrySample(bytes);
            stats.addAddEntryLatencySample(micros, TimeUnit.MICROSECONDS);
            stats.addLedgerAddEntryLatencySample(micros, TimeUnit.MICROSECONDS);
            result.complete(PositionFactory.create(ledger.ledgerId(), range.start())); // runs the caller's callback
            ledger.wakeReaders(range.end());
        }, executor);
    }

    /**
     * Completes, on the executor, with the last append handed to the stream once every append submitted before
     * this call has been checked: called after the ledger left OPEN, so no later append gets past the check and,
     * once the returned append completes, every append that did has.
     */
    CompletableFuture<CompletableFuture<?>> handedOff() {
        CompletableFuture<CompletableFuture<?>> f = new CompletableFuture<>();
        try {
            executor.execute(() -> f.complete(lastAdd));
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(ledger.stateError(LedgerState.CLOSED));
        }
        return f;
    }

    int pending() {
        return pending.get();
    }

    long entriesAdded() {
        return entriesAdded.get();
    }
}
