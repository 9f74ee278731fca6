package io.nereus.metadata;

import java.util.Objects;

/**
 * The catalog entry of one managed-ledger name, stored under {@code (CATALOG, managedLedgerName)}.
 *
 * <p>Virtual ledger ids are what Pulsar sees as the ledger id of every position of the stream. They are
 * allocated at or above {@link #MIN_VIRTUAL_LEDGER_ID} ({@code 2^62}), a range BookKeeper's ledger id
 * generators, which count up from 0, do not reach; so a virtual ledger id never equals a real ledger id.
 *
 * @param managedLedgerName the Pulsar managed-ledger name; non-empty (its key size is checked by the keyspace)
 * @param streamId          the stream of the current incarnation
 * @param virtualLedgerId   the virtual ledger id of the current incarnation, {@code >= MIN_VIRTUAL_LEDGER_ID}
 * @param incarnation       1 for the first creation of the name, incremented by each re-creation
 * @param state             lifecycle state
 */
public record CatalogEntry(
        String managedLedgerName,
        StreamId streamId,
        long virtualLedgerId,
        long incarnation,
        CatalogState state) {

    public static final long MIN_VIRTUAL_LEDGER_ID = 1L << 62;

    public CatalogEntry {
        Objects.requireNonNull(managedLedgerName, "managedLedgerName");
        Objects.requireNonNull(streamId, "streamId");
        Objects.requireNonNull(state, "state");
        if (managedLedgerName.isEmpty()) {
            throw new IllegalArgumentException("managed-ledger name must not be empty");
        }
        if (virtualLedgerId < MIN_VIRTUAL_LEDGER_ID) {
            throw new IllegalArgumentException("virtual ledger id " + virtualLedgerId
                    + " is below the reserved range starting at " + MIN_VIRTUAL_LEDGER_ID);
        }
        if (incarnation < 1) {
            throw new IllegalArgumentException("catalog incarnation must be >= 1: " + incarnation);
        }
    }

    /** This entry in state {@code next}, checked by {@link CatalogState#transitionTo}. */
    public CatalogEntry withState(CatalogState next) {
        return new CatalogEntry(managedLedgerName, streamId, virtualLedgerId, incarnation, state.transitionTo(next));
    }

    /**
     * The ACTIVE entry of the name's next incarnation.
     *
     * @throws IllegalStateException unless this entry is DELETED
     */
    public CatalogEntry reincarnate(StreamId newStream, long newVirtualLedgerId) {
        if (state != CatalogState.DELETED) {
            throw new IllegalStateException("only a DELETED catalog entry can be re-created, this one is " + state);
        }
        return new CatalogEntry(managedLedgerName, newStream, newVirtualLedgerId, Math.addExact(incarnation, 1),
                CatalogState.ACTIVE);
    }
}
