package io.nereus.pulsar.cursor;

import java.util.concurrent.atomic.LongAdder;
import org.apache.bookkeeper.mledger.ManagedCursorMXBean;

/**
 * Persistence counters of one cursor, as Pulsar's {@link ManagedCursorMXBean} reports them. Nereus keeps cursor
 * state in the metadata store (FoundationDB), never in a cursor ledger, so saves count as metadata-store
 * ("Zookeeper") persists and the ledger counters and sizes stay zero. Thread-safe.
 */
final class CursorStatsBean implements ManagedCursorMXBean {
    private final String name;
    private final String ledgerName;
    private final LongAdder ledgerSucceed = new LongAdder();
    private final LongAdder ledgerErrors = new LongAdder();
    private final LongAdder metadataSucceed = new LongAdder();
    private final LongAdder metadataErrors = new LongAdder();
    private final LongAdder writeSize = new LongAdder();
    private final LongAdder readSize = new LongAdder();

    CursorStatsBean(String name, String ledgerName) {
        this.name = name;
        this.ledgerName = ledgerName;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public String getLedgerName() {
        return ledgerName;
    }

    @Override
    public void persistToLedger(boolean success) {
        (success ? ledgerSucceed : ledgerErrors).increment();
    }

    @Override
    public void persistToZookeeper(boolean success) {
        (success ? metadataSucceed : metadataErrors).increment();
    }

    @Override
    public long getPersistLedgerSucceed() {
        return ledgerSucceed.sum();
    }

    @Override
    public long getPersistLedgerErrors() {
        return ledgerErrors.sum();
    }

    @Override
    public long getPersistZookeeperSucceed() {
        return metadataSucceed.sum();
    }

    @Override
    public long getPersistZookeeperErrors() {
        return metadataErrors.sum();
    }

    @Override
    public void addWriteCursorLedgerSize(long size) {
        writeSize.add(size);
    }

    @Override
    public void addReadCursorLedgerSize(long size) {
        readSize.add(size);
    }

    @Override
    public long getWriteCursorLedgerSize() {
        return writeSize.sum();
    }

    @Override
    public long getWriteCursorLedgerLogicalSize() {
        return writeSize.sum();
    }

    @Override
    public long getReadCursorLedgerSize() {
        return readSize.sum();
    }
}
