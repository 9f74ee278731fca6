package io.nereus.pulsar;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.apache.bookkeeper.mledger.ManagedLedgerException;

/**
 * Pulsar's callback style at the facade (STYLE §9): one future-returning core method per operation, delivered to
 * Pulsar's callback on the ledger's executor with the failure mapped by {@link PulsarErrors}.
 */
public final class Callbacks {
    private Callbacks() {
    }

    public static <T> void deliver(CompletableFuture<T> f, Executor executor, Consumer<T> ok,
            Consumer<ManagedLedgerException> failed) {
        f.whenCompleteAsync((v, t) -> {
            if (t == null) {
                ok.accept(v);
            } else {
                failed.accept(PulsarErrors.map(t));
            }
        }, executor);
    }
}
