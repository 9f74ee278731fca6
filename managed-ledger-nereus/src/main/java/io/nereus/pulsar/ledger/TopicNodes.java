package io.nereus.pulsar.ledger;

import io.nereus.error.Failures;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.metadata.api.MetadataStore;
import org.apache.pulsar.metadata.api.MetadataStoreException;

/**
 * The broker's own record that a persistent topic exists: a node {@code /managed-ledgers/<managed ledger name>} in
 * the broker's local metadata store. Pulsar answers "does this topic exist" and lists a namespace's topics from
 * these nodes (stock storage keeps its ledger metadata there), so a Nereus ledger writes an empty node when it is
 * opened, as the admin API does when it creates a topic, and removes it when the ledger is deleted. The data of a
 * ledger lives in Nereus; the node carries nothing.
 */
public final class TopicNodes {
    static final String ROOT = "/managed-ledgers/";

    private final MetadataStore store;

    public TopicNodes(MetadataStore store) {
        this.store = store;
    }

    /** Creates the node of {@code managedLedgerName} unless it exists. */
    CompletableFuture<Void> ensure(String managedLedgerName) {
        String path = ROOT + managedLedgerName;
        return store.exists(path).thenCompose(exists -> exists ? CompletableFuture.completedFuture(null)
                : store.put(path, new byte[0], Optional.of(-1L)).handle((stat, t) -> {
                    if (t != null && !(Failures.unwrap(t) instanceof MetadataStoreException.BadVersionException)) {
                        throw new java.util.concurrent.CompletionException(t);
                    }
                    return null; // created, or created meanwhile by someone else
                }));
    }

    /** Removes the node of {@code managedLedgerName} if it exists. */
    CompletableFuture<Void> remove(String managedLedgerName) {
        return store.deleteIfExists(ROOT + managedLedgerName, Optional.empty());
    }
}
