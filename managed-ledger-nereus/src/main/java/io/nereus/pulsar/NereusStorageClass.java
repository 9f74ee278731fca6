package io.nereus.pulsar;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.mledger.ManagedLedgerFactory;
import org.apache.bookkeeper.stats.StatsProvider;
import org.apache.pulsar.broker.storage.BookkeeperManagedLedgerStorageClass;

/**
 * The {@value NereusManagedLedgerStorage#NEREUS} storage class: topics stored by Nereus (its factory routes the few
 * ledgers Pulsar requires to be stock to the stock factory, see {@link RoutingManagedLedgerFactory}). It is a
 * {@link BookkeeperManagedLedgerStorageClass} whose BookKeeper client is the broker's real one (the one the WAL
 * writes to), so broker features that use BookKeeper directly (schemas, compaction) keep working.
 */
final class NereusStorageClass implements BookkeeperManagedLedgerStorageClass {
    private final ManagedLedgerFactory factory;
    private final BookkeeperManagedLedgerStorageClass bookkeeper;

    NereusStorageClass(ManagedLedgerFactory factory, BookkeeperManagedLedgerStorageClass bookkeeper) {
        this.factory = factory;
        this.bookkeeper = bookkeeper;
    }

    @Override
    public String getName() {
        return NereusManagedLedgerStorage.NEREUS;
    }

    @Override
    public ManagedLedgerFactory getManagedLedgerFactory() {
        return factory;
    }

    @Override
    public BookKeeper getBookKeeperClient() {
        return bookkeeper.getBookKeeperClient();
    }

    @Override
    public StatsProvider getStatsProvider() {
        return bookkeeper.getStatsProvider();
    }
}
