package io.nereus.fdb.embedded;

import com.apple.foundationdb.KeyArrayResult;
import com.apple.foundationdb.KeyRangeArrayResult;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MappedKeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.async.AsyncIterable;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * The overloads of {@link ReadTransaction}, funnelled into the few methods a transaction and its snapshot
 * view implement.
 */
abstract class EmbeddedReadTransaction implements ReadTransaction {

    @Override
    public abstract AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit, boolean reverse,
                                                     StreamingMode mode);

    @Override
    public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end) {
        return getRange(begin, end, ROW_LIMIT_UNLIMITED, false, StreamingMode.ITERATOR);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit) {
        return getRange(begin, end, limit, false, StreamingMode.ITERATOR);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit, boolean reverse) {
        return getRange(begin, end, limit, reverse, StreamingMode.ITERATOR);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(byte[] begin, byte[] end) {
        return getRange(begin, end, ROW_LIMIT_UNLIMITED, false, StreamingMode.ITERATOR);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(byte[] begin, byte[] end, int limit) {
        return getRange(begin, end, limit, false, StreamingMode.ITERATOR);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(byte[] begin, byte[] end, int limit, boolean reverse) {
        return getRange(begin, end, limit, reverse, StreamingMode.ITERATOR);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(byte[] begin, byte[] end, int limit, boolean reverse, StreamingMode mode) {
        return getRange(KeySelector.firstGreaterOrEqual(begin), KeySelector.firstGreaterOrEqual(end), limit, reverse,
                mode);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(Range range) {
        return getRange(range.begin, range.end);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(Range range, int limit) {
        return getRange(range.begin, range.end, limit);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(Range range, int limit, boolean reverse) {
        return getRange(range.begin, range.end, limit, reverse);
    }

    @Override
    public AsyncIterable<KeyValue> getRange(Range range, int limit, boolean reverse, StreamingMode mode) {
        return getRange(range.begin, range.end, limit, reverse, mode);
    }

    /** Mapped ranges need FoundationDB's server-side index support; EmbeddedFdb does not provide them. */
    @Override
    public AsyncIterable<MappedKeyValue> getMappedRange(KeySelector begin, KeySelector end, byte[] mapper, int limit,
                                                       boolean reverse, StreamingMode mode) {
        throw new UnsupportedOperationException("EmbeddedFdb does not support mapped range reads (getMappedRange)");
    }

    @Override
    public CompletableFuture<Long> getEstimatedRangeSizeBytes(Range range) {
        return getEstimatedRangeSizeBytes(range.begin, range.end);
    }

    @Override
    public CompletableFuture<KeyArrayResult> getRangeSplitPoints(Range range, long chunkSize) {
        return getRangeSplitPoints(range.begin, range.end, chunkSize);
    }

    /** Blob granules are a FoundationDB server feature that EmbeddedFdb does not provide. */
    @Override
    public CompletableFuture<KeyRangeArrayResult> getBlobGranuleRanges(byte[] begin, byte[] end, int rowLimit) {
        throw new UnsupportedOperationException("EmbeddedFdb does not support blob granules");
    }

    @Override
    public <T> T read(Function<? super ReadTransaction, T> retryable) {
        return retryable.apply(this);
    }

    @Override
    public <T> CompletableFuture<T> readAsync(Function<? super ReadTransaction, ? extends CompletableFuture<T>> retryable) {
        try {
            return retryable.apply(this);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
