package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import io.nereus.metadata.codec.ProducerStateCodec;
import io.nereus.metadata.codec.ProducerStateEndCodec;
import io.nereus.metadata.codec.StreamHeadCodec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The idempotent-producer state of streams written by the Kafka adapter: per producer its epoch and last batches
 * under {@code (STREAM, sid, PRODUCER, producerId)}, and under {@code (STREAM, sid, PRODUCER_END)} the offset below
 * which those entries reflect every batch of the stream. The adapter saves a snapshot now and then and, when it
 * opens the stream, loads it and replays the batches from its end offset to the committed end (the batches carry
 * their producer id, epoch and sequence), so the state survives a restart without a metadata write per append.
 *
 * <p>Saves are conditional on the stream's writer epoch, read in the same transaction, so a writer that lost the
 * stream cannot overwrite the state its successor keeps. Deleting the stream purges these keys with the rest of the
 * stream's keys. Methods return futures and never throw; argument errors fail the future. Thread-safe; holds no
 * mutable state.
 */
public final class ProducerStateStore {
    /** Producer entries written per transaction of one save (each at most ~170 bytes of value). */
    static final int SAVE_BATCH = 2_000;

    private final TransactionRunner tx;
    private final NereusKeyspace ks;

    ProducerStateStore(TransactionRunner tx, NereusKeyspace ks) {
        this.tx = tx;
        this.ks = ks;
    }

    /** The stored snapshot of {@code stream}, read in one transaction; {@link ProducerSnapshot#empty()} if none. */
    public CompletableFuture<ProducerSnapshot> load(StreamId stream) {
        return guard(() -> {
            byte[] endKey = ks.producerEndKey(stream);
            Range range = ks.producerRange(stream);
            return tx.read(tr -> tr.get(endKey).thenCombine(tr.getRange(range).asList(), (end, kvs) -> {
                Map<Long, ProducerState> producers = new HashMap<>();
                for (KeyValue kv : kvs) {
                    long id = ks.unpackProducerKey(kv.getKey()).producerId();
                    producers.put(id, ProducerStateCodec.INSTANCE.decode(id, kv.getValue()));
                }
                return new ProducerSnapshot(end == null ? 0 : ProducerStateEndCodec.INSTANCE.decode(end), producers);
            }));
        });
    }

    /**
     * Writes {@code changed} producer states and then raises the stored end offset to {@code endOffset}, if
     * {@code writerEpoch} is the stream's. The caller's states must reflect exactly the stream's batches below
     * {@code endOffset}, which must not lie beyond the committed end. Up to {@link #SAVE_BATCH} producers go in one
     * transaction; more take a series of them, the end offset moving only in the last, so a save interrupted part
     * way leaves some entries ahead of the stored end offset: a reader's replay from there must skip batches an
     * entry already holds (their offsets are not above its last batch's). An end offset below the stored one does
     * not lower it (the entries are written all the same; they are never older than the stored ones when the
     * caller is the stream's writer, which saves in order).
     *
     * @return {@link WriteOutcome#WRITTEN}, or Fenced / UnknownStream from the first transaction that found so
     *         (earlier transactions of the series stay written); a future failing with
     *         {@link IllegalArgumentException} when {@code endOffset} is beyond the committed end
     */
    public CompletableFuture<WriteOutcome> save(StreamId stream, long writerEpoch, long endOffset,
            List<ProducerState> changed) {
        return guard(() -> {
            Objects.requireNonNull(stream, "stream");
            if (endOffset < 0) {
                throw new IllegalArgumentException("producer state end offset must be >= 0: " + endOffset);
            }
            List<ProducerState> states = List.copyOf(changed);
            List<byte[]> keys = new ArrayList<>(states.size());
            List<byte[]> values = new ArrayList<>(states.size());
            for (ProducerState s : states) {
                keys.add(ks.producerKey(stream, s.producerId()));
                values.add(ProducerStateCodec.INSTANCE.encode(s));
            }
            AtomicReference<WriteOutcome> outcome = new AtomicReference<>(WriteOutcome.WRITTEN);
            int[] next = {0};
            return tx.repeat(() -> {
                int from = next[0];
                int to = Math.min(states.size(), from + SAVE_BATCH);
                boolean last = to == states.size();
                return saveStep(stream, writerEpoch, endOffset, keys.subList(from, to), values.subList(from, to), last)
                        .thenApply(o -> {
                            next[0] = to;
                            if (o != WriteOutcome.WRITTEN) {
                                outcome.set(o);
                                return false;
                            }
                            return !last;
                        });
            }).thenApply(ignored -> outcome.get());
        });
    }

    private CompletableFuture<WriteOutcome> saveStep(StreamId stream, long writerEpoch, long endOffset,
            List<byte[]> keys, List<byte[]> values, boolean last) {
        byte[] headKey = ks.headKey(stream);
        byte[] endKey = ks.producerEndKey(stream);
        return tx.run(tr -> tr.get(headKey).thenCombine(tr.get(endKey), (h, storedEnd) -> {
            if (h == null) {
                return new WriteOutcome.UnknownStream(stream);
            }
            StreamHead head = StreamHeadCodec.INSTANCE.decode(h);
            if (head.writerEpoch() != writerEpoch) {
                return new WriteOutcome.Fenced(head.writerEpoch(), writerEpoch);
            }
            if (endOffset > head.committedEnd()) {
                throw new IllegalArgumentException("producer state end offset " + endOffset
                        + " is beyond the committed end " + head.committedEnd() + " of " + stream);
            }
            for (int i = 0; i < keys.size(); i++) {
                tr.set(keys.get(i), values.get(i));
            }
            if (last && (storedEnd == null || ProducerStateEndCodec.INSTANCE.decode(storedEnd) < endOffset)) {
                tr.set(endKey, ProducerStateEndCodec.INSTANCE.encode(endOffset));
            }
            return WriteOutcome.WRITTEN;
        }));
    }
}
