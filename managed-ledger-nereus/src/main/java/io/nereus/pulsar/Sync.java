package io.nereus.pulsar;

import io.nereus.metadata.MetadataExecutor;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.mledger.ManagedLedgerException;

/**
 * The blocking variants of Pulsar's managed-ledger API, each a wait on the one future-returning method. A wait given
 * up (interrupted, timed out) gives up the result too: entries in it are released when it arrives. A wait on a
 * metadata thread fails at once: the work it waits for would be queued behind it on the same thread
 * ({@link MetadataExecutor}), so it would never end.
 */
public final class Sync {
    private Sync() {
    }

    /** Waits for {@code f}; a failure is rethrown as the {@link ManagedLedgerException} Pulsar expects. */
    public static <T> T await(CompletableFuture<T> f) throws InterruptedException, ManagedLedgerException {
        refuseOnMetadataThread(f);
        try {
            return f.get();
        } catch (ExecutionException e) {
            throw PulsarErrors.map(e.getCause());
        } catch (InterruptedException e) {
            f.thenAccept(Callbacks::releaseEntries);
            throw e;
        }
    }

    /** As {@link #await(CompletableFuture)}, failing after {@code timeout}; {@code what} names the operation. */
    public static <T> T await(CompletableFuture<T> f, Duration timeout, String what)
            throws InterruptedException, ManagedLedgerException {
        refuseOnMetadataThread(f);
        try {
            return f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw PulsarErrors.map(e.getCause());
        } catch (InterruptedException e) {
            f.thenAccept(Callbacks::releaseEntries);
            throw e;
        } catch (TimeoutException e) {
            f.thenAccept(Callbacks::releaseEntries);
            throw new ManagedLedgerException(what + ": operation timed out after " + timeout.toSeconds() + " s");
        }
    }

    private static void refuseOnMetadataThread(CompletableFuture<?> f) throws ManagedLedgerException {
        if (MetadataExecutor.isPoolThread() && !f.isDone()) {
            f.thenAccept(Callbacks::releaseEntries);
            throw new ManagedLedgerException("a blocking managed-ledger call on the metadata thread "
                    + Thread.currentThread().getName() + " would wait for itself; call the asynchronous variant");
        }
    }
}
