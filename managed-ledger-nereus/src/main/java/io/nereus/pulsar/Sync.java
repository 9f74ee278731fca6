package io.nereus.pulsar;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.bookkeeper.mledger.ManagedLedgerException;

/** The blocking variants of Pulsar's managed-ledger API, each a wait on the one future-returning method. */
final class Sync {
    private Sync() {
    }

    /** Waits for {@code f}; a failure is rethrown as the {@link ManagedLedgerException} Pulsar expects. */
    static <T> T await(CompletableFuture<T> f) throws InterruptedException, ManagedLedgerException {
        try {
            return f.get();
        } catch (ExecutionException e) {
            throw PulsarErrors.map(e.getCause());
        }
    }
}
