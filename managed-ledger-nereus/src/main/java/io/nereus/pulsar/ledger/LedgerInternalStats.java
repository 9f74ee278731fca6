package io.nereus.pulsar.ledger;

import java.util.List;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;

/**
 * A Nereus ledger's {@code internalStats} as the broker's admin API shows them: one virtual ledger holding every
 * stored entry, never offloaded, with the ledger's live counters. Built from a ledger's volatile fields, so safe
 * from any thread; values are a snapshot, not one atomic cut.
 */
final class LedgerInternalStats {
    private LedgerInternalStats() {
    }

    static ManagedLedgerInternalStats of(NereusManagedLedger ml, boolean includeLedgerMetadata) {
        ManagedLedgerInternalStats s = new ManagedLedgerInternalStats();
        s.entriesAddedCounter = ml.entriesAdded();
        s.numberOfEntries = ml.getNumberOfEntries();
        s.totalSize = ml.getTotalSize();
        s.currentLedgerEntries = s.numberOfEntries;
        s.currentLedgerSize = s.totalSize;
        s.lastLedgerCreatedTimestamp = java.time.Instant.ofEpochMilli(ml.createdAtMillis()).toString();
        s.waitingCursorsCount = ml.waitingReaders();
        s.pendingAddEntriesCount = ml.getPendingAddEntriesCount();
        s.lastConfirmedEntry = ml.getLastConfirmedEntry().toString();
        s.state = ml.state().pulsarName();
        ManagedLedgerInternalStats.LedgerInfo li = new ManagedLedgerInternalStats.LedgerInfo();
        li.ledgerId = ml.ledgerId();
        li.entries = s.numberOfEntries;
        li.size = s.totalSize;
        li.offloaded = false;
        if (includeLedgerMetadata) {
            li.metadata = ml.describeStream();
        }
        s.ledgers = List.of(li);
        s.cursors = ml.cursors().stats();
        return s;
    }
}
