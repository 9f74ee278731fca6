package io.nereus.kafka;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ProducerBatch;
import io.nereus.metadata.ProducerSnapshot;
import io.nereus.metadata.ProducerState;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The idempotent-producer bookkeeping of one {@link KafkaPartitionLog}: per producer the state that the stream's
 * committed batches establish ({@code committed}, reflecting exactly the batches below the log's high watermark),
 * and the batches of appends still in flight ({@code pending}, in offset order), which a retry or the next batch is
 * checked against too. Decides, as Kafka's broker does for a client's produce request, whether each batch of an
 * append is new (stored at the offsets it is given), a retry of a batch already stored or in flight (acknowledged
 * with that batch's offsets), or refused: a producer epoch older than the last seen one (INVALID_PRODUCER_EPOCH), a
 * sequence that does not continue the producer's last batch or a new epoch not starting at sequence 0
 * (OUT_OF_ORDER_SEQUENCE). A producer the table does not know may start at any sequence.
 *
 * <p>Not thread-safe: the log calls it under its monitor.
 */
final class ProducerTable {
    private final Map<Long, ProducerState> committed = new HashMap<>();
    private final Map<Long, ArrayDeque<Pending>> pending = new HashMap<>();
    private final Set<Long> dirty = new HashSet<>();

    /** A batch of an append in flight: its epoch, what the state will remember of it, and the append's outcome. */
    private record Pending(int epoch, ProducerBatch batch, CompletableFuture<?> stored) {
    }

    /** What an append does with one of its batches. */
    sealed interface Decision {
        ValidBatch batch();

        /** New: store it at {@code offsets}. */
        record Store(ValidBatch batch, OffsetRange offsets) implements Decision {
        }

        /**
         * A retry of {@code original}: acknowledge its offsets once {@code stored} (the original's append) completes;
         * nothing is stored.
         */
        record Duplicate(ValidBatch batch, ProducerBatch original, CompletableFuture<?> stored) implements Decision {
        }
    }

    /** Replaces the committed state by a stored snapshot's (nothing in flight). */
    void load(ProducerSnapshot snapshot) {
        committed.clear();
        pending.clear();
        dirty.clear();
        committed.putAll(snapshot.producers());
    }

    /**
     * Decides every batch of an append whose new batches get offsets from {@code nextOffset} on, in order, and
     * remembers the new ones as in flight, to complete with {@code stored}. All or nothing: a refused batch fails the
     * whole append and leaves the table as it was.
     *
     * @throws NereusException INVALID_PRODUCER_EPOCH or OUT_OF_ORDER_SEQUENCE naming the batch and the producer
     */
    List<Decision> plan(List<ValidBatch> batches, long nextOffset, CompletableFuture<?> stored) {
        Map<Long, View> views = new HashMap<>();
        List<Decision> out = new ArrayList<>(batches.size());
        long next = nextOffset;
        for (ValidBatch b : batches) {
            if (b.producer().isEmpty()) {
                out.add(new Decision.Store(b, OffsetRange.of(next, next + b.recordCount())));
                next += b.recordCount();
                continue;
            }
            ValidBatch.Producer p = b.producer().get();
            View v = views.computeIfAbsent(p.id(), this::view);
            if (!v.recent.isEmpty()) {
                if (p.epoch() < v.epoch) {
                    throw refused(ErrorCode.INVALID_PRODUCER_EPOCH, b, "currentEpoch", v.epoch);
                }
                if (p.epoch() == v.epoch) {
                    Optional<Known> dup = v.find(p.firstSequence(), p.lastSequence());
                    if (dup.isPresent()) {
                        out.add(new Decision.Duplicate(b, dup.get().batch(), dup.get().stored()));
                        continue;
                    }
                    int last = v.recent.getLast().batch().lastSequence();
                    if (!inSequence(last, p.firstSequence())) {
                        throw refused(ErrorCode.OUT_OF_ORDER_SEQUENCE, b, "lastSequence", last);
                    }
                } else if (p.firstSequence() != 0) {
                    throw refused(ErrorCode.OUT_OF_ORDER_SEQUENCE, b, "lastSequence", "none in this epoch");
                }
            }
            OffsetRange offsets = OffsetRange.of(next, next + b.recordCount());
            next = offsets.end();
            v.add(p.epoch(), new Known(batchOf(p, offsets, b), stored));
            out.add(new Decision.Store(b, offsets));
        }
        for (Decision d : out) {
            if (d instanceof Decision.Store s && s.batch().producer().isPresent()) {
                ValidBatch.Producer p = s.batch().producer().get();
                pending.computeIfAbsent(p.id(), id -> new ArrayDeque<>())
                        .addLast(new Pending(p.epoch(), batchOf(p, s.offsets(), s.batch()), stored));
            }
        }
        return out;
    }

    /** The append of {@code decisions} is committed (appends complete in offset order): its batches become state. */
    void committed(List<Decision> decisions) {
        for (Decision d : decisions) {
            if (d instanceof Decision.Store s && s.batch().producer().isPresent()) {
                long id = s.batch().producer().get().id();
                ArrayDeque<Pending> q = pending.get(id);
                Pending head = q == null ? null : q.pollFirst();
                if (head == null) {
                    throw new IllegalStateException("producer " + id + " committed a batch it has not in flight");
                }
                if (q.isEmpty()) {
                    pending.remove(id);
                }
                apply(id, head.epoch(), head.batch());
            }
        }
    }

    /** Forgets every append in flight (they failed, or their outcome is found by replaying the stream). */
    void clearPending() {
        pending.clear();
    }

    /**
     * Applies a batch read back from the stream at {@code offsets} (replay after a restart or a failure); a batch the
     * producer's state already holds (not past its last batch) is skipped, so replaying a range twice is harmless.
     */
    void replay(ValidBatch.Producer p, OffsetRange offsets, long maxTimestamp) {
        ProducerState current = committed.get(p.id());
        if (current != null && offsets.end() - 1 <= current.last().lastOffset()) {
            return;
        }
        apply(p.id(), p.epoch(), new ProducerBatch(p.firstSequence(), p.lastSequence(), offsets.start(),
                offsets.end() - 1, maxTimestamp));
    }

    private void apply(long id, int epoch, ProducerBatch batch) {
        ProducerState current = committed.get(id);
        committed.put(id, current == null ? ProducerState.first(id, epoch, batch) : current.with(epoch, batch));
        dirty.add(id);
    }

    /** The committed states changed since the last call (to save), forgetting that they changed. */
    List<ProducerState> takeDirty() {
        List<ProducerState> out = new ArrayList<>(dirty.size());
        for (long id : dirty) {
            out.add(committed.get(id));
        }
        dirty.clear();
        return out;
    }

    /** Marks {@code states}' producers changed again (their save failed). */
    void markDirty(Collection<ProducerState> states) {
        states.forEach(s -> dirty.add(s.producerId()));
    }

    /** The committed state of {@code producerId}, if it has one. */
    Optional<ProducerState> state(long producerId) {
        return Optional.ofNullable(committed.get(producerId));
    }

    int size() {
        return committed.size();
    }

    private static ProducerBatch batchOf(ValidBatch.Producer p, OffsetRange offsets, ValidBatch b) {
        return new ProducerBatch(p.firstSequence(), p.lastSequence(), offsets.start(), offsets.end() - 1,
                b.maxTimestamp());
    }

    /** Kafka's rule: the next sequence follows the last one, wrapping from {@code Integer.MAX_VALUE} to 0. */
    static boolean inSequence(int lastSequence, int nextSequence) {
        return nextSequence == lastSequence + 1L || (nextSequence == 0 && lastSequence == Integer.MAX_VALUE);
    }

    private static NereusException refused(ErrorCode code, ValidBatch b, String key, Object value) {
        ValidBatch.Producer p = b.producer().orElseThrow();
        return new NereusException(code, ErrorContext.of("batch", b.index(), "producerId", p.id(), "epoch",
                p.epoch(), "sequence", p.firstSequence(), key, value));
    }

    /** A batch a producer appended, stored ({@code stored} complete) or in flight. */
    private record Known(ProducerBatch batch, CompletableFuture<?> stored) {
    }

    /** A producer's current epoch and its last batches in it, committed and in flight, while deciding an append. */
    private static final class View {
        int epoch = -1;
        final ArrayDeque<Known> recent = new ArrayDeque<>();

        void add(int batchEpoch, Known k) {
            if (batchEpoch != epoch) {
                recent.clear();
                epoch = batchEpoch;
            }
            recent.addLast(k);
            if (recent.size() > ProducerState.MAX_BATCHES) {
                recent.removeFirst();
            }
        }

        Optional<Known> find(int firstSequence, int lastSequence) {
            for (Known k : recent) {
                if (k.batch().firstSequence() == firstSequence && k.batch().lastSequence() == lastSequence) {
                    return Optional.of(k);
                }
            }
            return Optional.empty();
        }
    }

    private View view(long producerId) {
        View v = new View();
        ProducerState c = committed.get(producerId);
        if (c != null) {
            for (ProducerBatch b : c.batches()) {
                v.add(c.epoch(), new Known(b, DONE));
            }
        }
        for (Pending p : pending.getOrDefault(producerId, new ArrayDeque<>())) {
            v.add(p.epoch(), new Known(p.batch(), p.stored()));
        }
        return v;
    }

    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);
}
