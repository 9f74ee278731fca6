package io.nereus.metadata;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.codec.IndexRecordCodec;
import io.nereus.metadata.codec.StreamHeadCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Typed access, inside a caller's transaction, to the records more than one store reads or moves: the stream
 * head and the generation-index records of the lookup and RETIRED spaces. Decoding failures surface as a
 * {@link io.nereus.error.NereusException} of code METADATA_FORMAT and fail the caller's transaction. Stateless
 * apart from the keyspace; thread-safe.
 */
final class StoredRecords {
    private final NereusKeyspace ks;

    StoredRecords(NereusKeyspace ks) {
        this.ks = ks;
    }

    /** The failure of an operation on {@code stream} when it has no head (never created, or removed). */
    static NereusException unknownStream(StreamId stream) {
        return new NereusException(ErrorCode.NOT_FOUND, Map.of("stream", stream));
    }

    /** The head of {@code stream} as {@code tr} sees it (a read, so a conflict if it changes before commit). */
    CompletableFuture<Optional<StreamHead>> head(ReadTransaction tr, StreamId stream) {
        return tr.get(ks.headKey(stream))
                .thenApply(v -> Optional.ofNullable(v).map(StreamHeadCodec.INSTANCE::decode));
    }

    /** Decodes key-values read from the lookup space (INDEX). */
    List<IndexRecord> index(List<KeyValue> kvs) {
        List<IndexRecord> records = new ArrayList<>(kvs.size());
        for (KeyValue kv : kvs) {
            records.add(IndexRecordCodec.INSTANCE.decode(ks.unpackIndexKey(kv.getKey()), kv.getValue()));
        }
        return records;
    }

    /** Decodes key-values read from the RETIRED space. */
    List<IndexRecord> retired(List<KeyValue> kvs) {
        List<IndexRecord> records = new ArrayList<>(kvs.size());
        for (KeyValue kv : kvs) {
            records.add(IndexRecordCodec.INSTANCE.decode(ks.unpackRetiredKey(kv.getKey()), kv.getValue()));
        }
        return records;
    }

    /** Decodes key-values read from the FALLBACK space. */
    List<IndexRecord> fallback(List<KeyValue> kvs) {
        List<IndexRecord> records = new ArrayList<>(kvs.size());
        for (KeyValue kv : kvs) {
            records.add(IndexRecordCodec.INSTANCE.decode(ks.unpackFallbackKey(kv.getKey()), kv.getValue()));
        }
        return records;
    }

    /**
     * The open run of {@code stream} ({@link IndexKey#openRun}) as {@code tr} sees it (a read: a conflict if a
     * commit extends or replaces it), empty when the stream has none.
     */
    CompletableFuture<Optional<IndexRecord>> openRun(ReadTransaction tr, StreamId stream) {
        IndexKey key = IndexKey.openRun(stream);
        return tr.get(ks.indexKey(key))
                .thenApply(v -> Optional.ofNullable(v).map(b -> IndexRecordCodec.INSTANCE.decode(key, b)));
    }

    /**
     * Moves {@code retired} out of the lookup space (from its own key, or from the open-run key when it is an open
     * run) and out of FALLBACK into RETIRED under its own end, stored as given.
     */
    void moveToRetired(Transaction tr, IndexRecord retired) {
        IndexKey k = IndexKey.atEnd(retired);
        tr.clear(ks.indexKey(IndexKey.of(retired)));
        tr.clear(ks.fallbackKey(k));
        tr.set(ks.retiredKey(k), IndexRecordCodec.INSTANCE.encode(retired.storedOpen(false)));
    }

    /**
     * Moves {@code superseded} (a generation-0 record a higher generation now covers) out of the lookup space into
     * FALLBACK under its own end, its state unchanged: the resolver still reads it when every higher generation fails.
     */
    void moveToFallback(Transaction tr, IndexRecord superseded) {
        tr.clear(ks.indexKey(IndexKey.of(superseded)));
        tr.set(ks.fallbackKey(IndexKey.atEnd(superseded)),
                IndexRecordCodec.INSTANCE.encode(superseded.storedOpen(false)));
    }
}
