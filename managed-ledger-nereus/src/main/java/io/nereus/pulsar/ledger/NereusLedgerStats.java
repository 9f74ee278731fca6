package io.nereus.pulsar.ledger;

import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.ManagedCursor;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerMBeanImpl;
import org.apache.bookkeeper.mledger.util.StatsBuckets;
import org.apache.pulsar.common.stats.Rate;

/**
 * Statistics of one Nereus ledger. It is a {@link ManagedLedgerMBeanImpl} because the broker's Prometheus
 * aggregation casts {@code ManagedLedger.getStats()} to that class; the parent is built without a
 * {@code ManagedLedgerImpl}, so every method that would read one is overridden here, and the add-entry samples
 * (whose parent method would read the ledger's write quorum) are kept in this class's own counters.
 * Rates are computed by {@link #refreshStats}, which the factory calls every stats period.
 */
final class NereusLedgerStats extends ManagedLedgerMBeanImpl {
    private final NereusManagedLedger ledger;
    private final Rate addEntryOps = new Rate();
    private final Rate addEntryWithReplicasOps = new Rate();
    private final StatsBuckets entrySizes = new StatsBuckets(ENTRY_SIZE_BUCKETS_BYTES);

    NereusLedgerStats(NereusManagedLedger ledger) {
        super(null);
        this.ledger = ledger;
    }

    @Override
    public void refreshStats(long period, TimeUnit unit) {
        super.refreshStats(period, unit);
        double seconds = unit.toMillis(period) / 1000.0;
        if (seconds > 0) {
            addEntryOps.calculateRate(seconds);
            addEntryWithReplicasOps.calculateRate(seconds);
            entrySizes.refresh();
        }
    }

    @Override
    public void addAddEntrySample(long size) {
        addEntryOps.recordEvent(size);
        entrySizes.addValue(size);
        addEntryWithReplicasOps.recordEvent(size * ledger.walWriteQuorum());
    }

    @Override
    public String getName() {
        return ledger.getName();
    }

    @Override
    public double getAddEntryMessagesRate() {
        return addEntryOps.getRate();
    }

    @Override
    public double getAddEntryBytesRate() {
        return addEntryOps.getValueRate();
    }

    @Override
    public long getAddEntryBytesTotal() {
        return addEntryOps.getTotalValue();
    }

    @Override
    public double getAddEntryWithReplicasBytesRate() {
        return addEntryWithReplicasOps.getValueRate();
    }

    @Override
    public long getAddEntryWithReplicasBytesTotal() {
        return addEntryWithReplicasOps.getTotalValue();
    }

    @Override
    public long getAddEntrySucceed() {
        return addEntryOps.getCount();
    }

    @Override
    public long getAddEntrySucceedTotal() {
        return addEntryOps.getTotalCount();
    }

    @Override
    public double getEntrySizeAverage() {
        return entrySizes.getAvg();
    }

    @Override
    public long[] getEntrySizeBuckets() {
        return entrySizes.getBuckets();
    }

    @Override
    public StatsBuckets getInternalEntrySizeBuckets() {
        return entrySizes;
    }

    /** Bytes kept by storage: the WAL writes every byte to {@code writeQuorum} bookies. */
    @Override
    public long getStoredMessagesSize() {
        return ledger.getTotalSize() * ledger.walWriteQuorum();
    }

    @Override
    public long getStoredMessagesLogicalSize() {
        return ledger.getTotalSize();
    }

    @Override
    public long getNumberOfMessagesInBacklog() {
        long count = 0;
        for (ManagedCursor cursor : ledger.getCursors()) {
            count += cursor.getNumberOfEntriesInBacklog(false);
        }
        return count;
    }
}
