package io.nereus.pulsar.ledger;

import io.nereus.metadata.CursorStore;
import io.nereus.metadata.LedgerProperties;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WriteOutcome;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * A managed ledger's properties: the stored map and its in-memory copy. Updates are applied one at a time in call
 * order, each computed from the state the previous one left, saved conditionally on the writer epoch, and only
 * then made visible; a fenced or failed save changes nothing. Thread-safe.
 */
final class LedgerPropertiesState {
    private final CursorStore store;
    private final StreamId stream;
    private final long writerEpoch;
    private final Function<WriteOutcome, WriteOutcome> check;
    private final Consumer<Map<String, String>> onUpdate;
    private volatile Map<String, String> current = Map.of();
    private CompletableFuture<?> last = CompletableFuture.completedFuture(null);

    /**
     * @param check    turns a refused outcome into a failure (fenced, unknown stream)
     * @param onUpdate told the new map after each successful save (the interceptor)
     */
    LedgerPropertiesState(CursorStore store, StreamId stream, long writerEpoch,
            Function<WriteOutcome, WriteOutcome> check, Consumer<Map<String, String>> onUpdate) {
        this.store = store;
        this.stream = stream;
        this.writerEpoch = writerEpoch;
        this.check = check;
        this.onUpdate = onUpdate;
    }

    /** Loads the stored map; call once before use. */
    CompletableFuture<Map<String, String>> load() {
        return store.loadProperties(stream).thenApply(p -> {
            current = Map.copyOf(p.values());
            return current;
        });
    }

    Map<String, String> get() {
        return current;
    }

    CompletableFuture<Map<String, String>> put(Map<String, String> update) {
        return apply(m -> {
            m.putAll(update);
            return m;
        });
    }

    CompletableFuture<Map<String, String>> replace(Map<String, String> all) {
        return apply(m -> new HashMap<>(all));
    }

    CompletableFuture<Map<String, String>> remove(String key) {
        return apply(m -> {
            m.remove(key);
            return m;
        });
    }

    private synchronized CompletableFuture<Map<String, String>> apply(UnaryOperator<Map<String, String>> change) {
        CompletableFuture<Map<String, String>> next = last.handle((v, t) -> null).thenCompose(ignored -> {
            Map<String, String> proposed = Map.copyOf(change.apply(new HashMap<>(current)));
            return store.saveProperties(stream, writerEpoch, new LedgerProperties(proposed)).thenApply(outcome -> {
                check.apply(outcome);
                current = proposed;
                onUpdate.accept(proposed);
                return proposed;
            });
        });
        last = next;
        return next;
    }
}
