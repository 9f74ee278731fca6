package io.nereus.pulsar.ledger;

import java.util.List;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;

/**
 * A Nereus ledger's {@code internalStats} as the broker's admin API shows them: one virtual ledger holding every
 * stored entry, with the ledger's live counters; it counts as offloaded once all its entries are in objects, and
 * its metadata (with {@code includeLedgerMetadata}) says how many objects hold how much of it. Built from a ledger's volatile fields, so safe
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
        // the virtual ledger counts as offloaded once every entry of it lies in objects
        var coverage = ml.offload().coverage();
        li.offloaded = coverage.objects() > 0 && coverage.firstOffset() <= ml.trimOffset()
                && coverage.endOffset() >= ml.committedEnd() && coverage.entries() >= s.numberOfEntries;
        if (includeLedgerMetadata) {
            li.metadata = ml.describeStream();
        }
        s.ledgers = List.of(li);
        s.cursors = ml.cursors().stats();
        return s;
    }
}
