package io.nereus.fdb.embedded;

import com.apple.foundationdb.KeyArrayResult;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.TransactionOptions;
import com.apple.foundationdb.async.AsyncIterable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * {@code Transaction.snapshot()}: the same transaction, reading without read conflicts. Reads see the
 * transaction's own writes unless snapshot read-your-writes is off (options 600/601). It holds no state: every
 * call goes to the transaction, with the same threading and lifecycle (one per transaction, created with it).
 */
final class SnapshotView extends EmbeddedReadTransaction {
    private final EmbeddedTransaction tr;

    SnapshotView(EmbeddedTransaction tr) {
        this.tr = tr;
    }

    @Override
    public boolean isSnapshot() {
        return true;
    }

    @Override
    public ReadTransaction snapshot() {
        return this;
    }

    @Override
    public CompletableFuture<Long> getReadVersion() {
        return tr.getReadVersion();
    }

    @Override
    public void setReadVersion(long version) {
        tr.setReadVersion(version);
    }

    @Override
    public boolean addReadConflictRangeIfNotSnapshot(byte[] begin, byte[] end) {
        return false;
    }

    @Override
    public boolean addReadConflictKeyIfNotSnapshot(byte[] key) {
        return false;
    }

    @Override
    public CompletableFuture<byte[]> get(byte[] key) {
        return tr.readValue(key, true);
    }

    @Override
    public CompletableFuture<byte[]> getKey(KeySelector selector) {
        return tr.readKey(selector, true);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit, boolean reverse,
                                            StreamingMode mode) {
        return tr.readRange(begin, end, limit, reverse, mode, true);
    }

    @Override
    public CompletableFuture<Long> getEstimatedRangeSizeBytes(byte[] begin, byte[] end) {
        return tr.getEstimatedRangeSizeBytes(begin, end);
    }

    @Override
    public CompletableFuture<KeyArrayResult> getRangeSplitPoints(byte[] begin, byte[] end, long chunkSize) {
        return tr.getRangeSplitPoints(begin, end, chunkSize);
    }

    @Override
    public TransactionOptions options() {
        return tr.options();
    }

    @Override
    public Executor getExecutor() {
        return tr.getExecutor();
    }
}
