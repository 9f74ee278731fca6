package io.nereus.kafka;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ProducerState;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WriteOutcome;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import io.nereus.stream.ReadResult;
import io.nereus.stream.StreamStorage;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Kafka partition's log on one Nereus stream, written by this instance (it holds the stream's writer epoch):
 * appends of v2 record batches, each validated ({@link BatchRule}), given its offsets by rewriting its base offset and
 * stored as one ranged entry of {@code lastOffsetDelta + 1} offsets; fetches that start with the whole batch holding
 * the fetch offset; idempotent-producer deduplication; the log start offset (Kafka's DeleteRecords as {@link #trim})
 * and the high watermark (the stream's committed end as this log has seen it complete); ListOffsets by time.
 *
 * <p>Appends are pipelined: each is handed to the stream at once with the offsets the log predicts
 * ({@link NereusStream#append(List, long)}, which refuses to store a batch at any other offset), and completes in
 * offset order. When one fails, the appends behind it fail too (the stream drops them); the log then waits until
 * none is in flight, re-reads the stream's head, replays the batches committed past its high watermark into its
 * producer state (a failed append whose commit nevertheless happened is found so, and its producer's retry is
 * acknowledged as a duplicate), and continues at the committed end; appends arriving meanwhile wait. A fenced stream
 * (another writer took it) fails this log for good.
 *
 * <p>Producer state: {@link ProducerTable} in memory, saved to the metadata store
 * ({@link io.nereus.metadata.ProducerStateStore}) every {@link KafkaLogConfig#snapshotEveryBatches} new batches,
 * before a trim and on {@link #close}; {@link #open} loads it and replays the stream's batches from the saved end
 * offset to the committed end, so a restart forgets nothing the stream holds.
 *
 * <p>Thread-safe: the state below is guarded by this object's monitor, which is never held while calling out to a
 * caller's future (completions are run after it is released). Futures never throw synchronously.
 *
 * <pre>
 *   RECOVERING ──head read, replayed──▶ READY ──an append failed──▶ RECOVERING
 *        └────────── fenced, unreadable ──┴──────────▶ FAILED        (any) ──close──▶ CLOSED
 * </pre>
 */
public final class KafkaPartitionLog {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaPartitionLog.class);

    /** The log's mode (diagram on the class); {@link #moveTo} is the one place it changes. */
    enum Mode {
        RECOVERING, READY, FAILED, CLOSED;

        boolean canTransitionTo(Mode next) {
            return switch (next) {
                case READY -> this == RECOVERING;
                case RECOVERING -> this == READY;
                case FAILED -> this == READY || this == RECOVERING;
                case CLOSED -> true;
            };
        }
    }

    /** An append handed to the stream, until it completes in offset order. */
    private static final class InFlight {
        final List<ProducerTable.Decision> decisions;
        final long end;
        final int batches;
        final CompletableFuture<Void> stored;
        boolean done;
        Throwable error;

        InFlight(List<ProducerTable.Decision> decisions, long end, int batches, CompletableFuture<Void> stored) {
            this.decisions = decisions;
            this.end = end;
            this.batches = batches;
            this.stored = stored;
        }
    }

    private final NereusStream stream;
    private final MetadataStore metadata;
    private final KafkaLogConfig config;
    private final long writerEpoch;

    // guarded by this
    private final ProducerTable producers = new ProducerTable();
    private final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private Mode mode = Mode.RECOVERING;
    private long nextOffset;
    private long highWatermark;
    private long logStartOffset;
    private CompletableFuture<Void> recovered = new CompletableFuture<>();
    private boolean recovering;
    private NereusException failure;
    private long batchesSinceSnapshot;
    private CompletableFuture<Void> snapshots = CompletableFuture.completedFuture(null);

    private KafkaPartitionLog(NereusStream stream, MetadataStore metadata, KafkaLogConfig config, long writerEpoch) {
        this.stream = stream;
        this.metadata = metadata;
        this.config = config;
        this.writerEpoch = writerEpoch;
    }

    /**
     * Opens the partition log stored in the stream of {@code name} (creating it if absent): takes the stream's writer
     * (fencing any earlier one), loads the saved producer state and replays the batches committed after it.
     */
    public static CompletableFuture<KafkaPartitionLog> open(StreamStorage storage, MetadataStore metadata, String name,
            KafkaLogConfig config) {
        try {
            Objects.requireNonNull(storage, "storage");
            Objects.requireNonNull(metadata, "metadata");
            Objects.requireNonNull(config, "config");
            return storage.openStream(name).thenCompose(stream -> stream.acquireWriter()
                    .thenCompose(epoch -> metadata.producers().load(stream.id()).thenCompose(snapshot -> {
                        KafkaPartitionLog log = new KafkaPartitionLog(stream, metadata, config, epoch);
                        synchronized (log) {
                            log.producers.load(snapshot);
                            log.highWatermark = snapshot.endOffset();
                            log.recovering = true;
                        }
                        return log.recover().thenApply(ignored -> log);
                    })));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    public StreamId streamId() {
        return stream.id();
    }

    /** The stream's writer epoch this log writes with. */
    public long writerEpoch() {
        return writerEpoch;
    }

    /** The first offset of the log's committed data: every offset below it is committed and readable (or trimmed). */
    public synchronized long highWatermark() {
        return highWatermark;
    }

    /** The first offset still readable (Kafka's log start offset). */
    public synchronized long logStartOffset() {
        return logStartOffset;
    }

    /** The committed state of idempotent producer {@code producerId}, if the log knows it. */
    public synchronized Optional<ProducerState> producerState(long producerId) {
        return producers.state(producerId);
    }

    // ---- append ----

    /**
     * Appends the batches of {@code records}: validates every batch (failing INVALID_RECORD_BATCH, naming the batch
     * and the rule), checks idempotent producers' epochs and sequences (INVALID_PRODUCER_EPOCH, OUT_OF_ORDER_SEQUENCE),
     * then stores each new batch as one entry at the next offsets; a producer's retry of a batch stored before, or
     * still in flight, is acknowledged with that batch's offsets. A refusal stores nothing of the append. Completes
     * once every batch is committed; other failures are the stream's (a RETRIABLE_ code: the producer retries).
     * The caller's buffer is not modified.
     */
    public CompletableFuture<AppendResult> append(MemoryRecords records) {
        List<ValidBatch> batches;
        try {
            batches = RecordBatches.validate(Objects.requireNonNull(records, "records"), config.maxBatchBytes());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return appendValidated(batches);
    }

    private CompletableFuture<AppendResult> appendValidated(List<ValidBatch> batches) {
        CompletableFuture<Void> wait;
        synchronized (this) {
            switch (mode) {
                case READY:
                    return appendLocked(batches);
                case RECOVERING:
                    wait = recovered;
                    break;
                case FAILED:
                    return CompletableFuture.failedFuture(failure);
                default:
                    return CompletableFuture.failedFuture(closed());
            }
        }
        return wait.thenCompose(ignored -> appendValidated(batches));
    }

    private CompletableFuture<AppendResult> appendLocked(List<ValidBatch> batches) {
        CompletableFuture<Void> stored = new CompletableFuture<>();
        List<ProducerTable.Decision> decisions;
        try {
            decisions = producers.plan(batches, nextOffset, stored);
        } catch (NereusException e) {
            return CompletableFuture.failedFuture(withStream(e));
        }
        long start = nextOffset;
        long end = start;
        List<AppendEntry> entries = new ArrayList<>(decisions.size());
        List<CompletableFuture<?>> waits = new ArrayList<>();
        waits.add(stored);
        for (ProducerTable.Decision d : decisions) {
            if (d instanceof ProducerTable.Decision.Store s) {
                s.batch().assignBaseOffset(s.offsets().start());
                entries.add(new AppendEntry(s.batch().bytes(), s.batch().recordCount()));
                end = s.offsets().end();
            } else if (d instanceof ProducerTable.Decision.Duplicate dup) {
                waits.add(dup.stored());
            }
        }
        CompletableFuture<AppendResult> result = CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0]))
                .thenApply(ignored -> resultOf(decisions));
        if (entries.isEmpty()) {
            stored.complete(null);
            return result;
        }
        nextOffset = end;
        InFlight f = new InFlight(decisions, end, entries.size(), stored);
        inFlight.addLast(f);
        stream.append(entries, start).whenComplete((range, error) -> completed(f, range, error));
        return result;
    }

    private static AppendResult resultOf(List<ProducerTable.Decision> decisions) {
        List<AppendResult.Batch> out = new ArrayList<>(decisions.size());
        for (ProducerTable.Decision d : decisions) {
            if (d instanceof ProducerTable.Decision.Store s) {
                out.add(new AppendResult.Batch(s.offsets().start(), s.offsets().end() - 1, false));
            } else if (d instanceof ProducerTable.Decision.Duplicate dup) {
                out.add(new AppendResult.Batch(dup.original().firstOffset(), dup.original().lastOffset(), true));
            }
        }
        return new AppendResult(out);
    }

    /** Completes appends in offset order; the first failure starts a recovery once none is in flight. */
    private void completed(InFlight f, OffsetRange range, Throwable error) {
        List<Runnable> after = new ArrayList<>();
        synchronized (this) {
            f.done = true;
            f.error = error;
            if (error == null && range.end() != f.end) {
                f.error = new NereusException(ErrorCode.DATA_LOSS, ErrorContext.of("stream", stream.id(),
                        "expectedEnd", f.end, "storedRange", range));
            }
            while (!inFlight.isEmpty() && inFlight.peekFirst().done) {
                InFlight h = inFlight.pollFirst();
                if (h.error == null) {
                    if (mode == Mode.READY) {
                        producers.committed(h.decisions);
                        highWatermark = h.end;
                        batchesSinceSnapshot += h.batches;
                    }
                    after.add(() -> h.stored.complete(null));
                } else {
                    NereusException n = asNereus(h.error);
                    if (mode == Mode.READY) {
                        if (n.retriable()) {
                            LOG.info("Kafka partition log recovering after a failed append stream={} offset={}",
                                    stream.id(), highWatermark);
                            moveTo(Mode.RECOVERING);
                            recovered = new CompletableFuture<>();
                        } else {
                            after.add(failLocked(n));
                        }
                        producers.clearPending();
                    }
                    after.add(() -> h.stored.completeExceptionally(n));
                }
            }
            if (mode == Mode.RECOVERING && inFlight.isEmpty() && !recovering) {
                recovering = true;
                after.add(this::recover);
            }
            if (mode == Mode.READY && batchesSinceSnapshot >= config.snapshotEveryBatches()) {
                batchesSinceSnapshot = 0;
                after.add(() -> snapshotProducerState().exceptionally(t -> {
                    LOG.warn("Kafka partition log could not save its producer state stream={} code={}", stream.id(),
                            asNereus(t).code());
                    return null;
                }));
            }
        }
        after.forEach(Runnable::run);
    }

    /**
     * Reads the head, replays the batches from the high watermark (or the trim offset) to the committed end into the
     * producer state and continues there. Runs in RECOVERING with nothing in flight.
     */
    private CompletableFuture<Void> recover() {
        return stream.head().thenCompose(head -> {
            if (head.writerEpoch() != writerEpoch) {
                throw new NereusException(ErrorCode.FENCED, ErrorContext.of("stream", stream.id(), "headEpoch",
                        head.writerEpoch(), "requestEpoch", writerEpoch));
            }
            long from;
            synchronized (this) {
                from = Math.max(highWatermark, head.trimOffset());
            }
            return replay(from, head).thenApply(ignored -> head);
        }).handle((head, error) -> {
            List<Runnable> after = new ArrayList<>();
            synchronized (this) {
                recovering = false;
                if (mode != Mode.RECOVERING) {
                    return null;
                }
                if (error != null) {
                    after.add(failLocked(asNereus(error)));
                } else {
                    nextOffset = head.committedEnd();
                    highWatermark = head.committedEnd();
                    logStartOffset = Math.max(logStartOffset, head.trimOffset());
                    moveTo(Mode.READY);
                    CompletableFuture<Void> r = recovered;
                    after.add(() -> r.complete(null));
                }
            }
            after.forEach(Runnable::run);
            return null;
        });
    }

    /** Applies the producer fields of every batch in {@code [from, head.committedEnd)} to the producer state. */
    private CompletableFuture<Void> replay(long from, StreamHead head) {
        if (from >= head.committedEnd()) {
            return CompletableFuture.completedFuture(null);
        }
        OffsetRange readable = head.readableRange();
        return stream.read(ReadView.COMMITTED, from, Integer.MAX_VALUE, config.scanBytes(),
                BoundaryMode.CONTAINING_ENTRY, readable).thenCompose(r -> {
            try {
                if (r.entries().isEmpty()) {
                    throw new NereusException(ErrorCode.DATA_LOSS, ErrorContext.of("stream", stream.id(), "offset",
                            from));
                }
                synchronized (this) {
                    for (StreamEntry e : r.entries()) {
                        MutableRecordBatch b = ValidBatch.batchOf(e.payload().nioBuffer());
                        ValidBatch.Producer.of(b).ifPresent(p -> producers.replay(p, e.range(), b.maxTimestamp()));
                    }
                }
            } finally {
                r.release();
            }
            return replay(r.nextOffset(), head);
        });
    }

    // ---- read ----

    /**
     * A fetch from {@code offset}: the whole batch containing it, then the following batches while their bytes stay
     * within {@code maxBytes} (the first batch is returned whatever its size), as stored. At the high watermark the
     * records are empty; below the log start offset or beyond the high watermark the read fails OFFSET_OUT_OF_RANGE.
     */
    public CompletableFuture<FetchResult> read(long offset, int maxBytes) {
        if (maxBytes < 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("maxBytes must be >= 0: " + maxBytes));
        }
        long hw;
        long start;
        synchronized (this) {
            hw = highWatermark;
            start = logStartOffset;
        }
        if (offset < start || offset > hw) {
            return CompletableFuture.failedFuture(outOfRange(offset, start, hw));
        }
        if (offset == hw) {
            return CompletableFuture.completedFuture(new FetchResult(MemoryRecords.EMPTY, hw, start));
        }
        return stream.read(ReadView.COMMITTED, offset, Integer.MAX_VALUE, maxBytes, BoundaryMode.CONTAINING_ENTRY,
                OffsetRange.of(start, hw)).handle((r, error) -> {
            if (error != null) {
                Throwable t = Failures.unwrap(error);
                if (t instanceof NereusException n && n.code() == ErrorCode.OFFSET_TRIMMED) {
                    throw outOfRange(offset, logStartOffset(), hw);
                }
                throw t instanceof RuntimeException re ? re : new IllegalStateException(t);
            }
            try {
                return new FetchResult(concat(r), hw, start);
            } finally {
                r.release();
            }
        });
    }

    /** The entries' bytes back to back in one new heap buffer: the fetch's records, which outlive the entries. */
    private static MemoryRecords concat(ReadResult r) {
        int size = 0;
        for (StreamEntry e : r.entries()) {
            size += e.size();
        }
        ByteBuffer buf = ByteBuffer.allocate(size);
        for (StreamEntry e : r.entries()) {
            buf.put(e.payload().nioBuffer());
        }
        return MemoryRecords.readableRecords(buf.flip());
    }

    /**
     * Kafka's ListOffsets by time: the first record from the log start offset on, in offset order, whose timestamp is
     * at or after {@code timestamp}, or empty when no record of the committed log has one. Reads batch headers from
     * the log start (records only of the batch whose max timestamp reaches {@code timestamp}); the log keeps no time
     * index, so the cost grows with the log's size.
     */
    public CompletableFuture<Optional<TimestampOffset>> offsetForTimestamp(long timestamp) {
        long hw;
        long start;
        synchronized (this) {
            hw = highWatermark;
            start = logStartOffset;
        }
        return scanForTimestamp(timestamp, start, start, hw);
    }

    private CompletableFuture<Optional<TimestampOffset>> scanForTimestamp(long timestamp, long at, long start,
            long hw) {
        if (at >= hw) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return stream.read(ReadView.COMMITTED, at, Integer.MAX_VALUE, config.scanBytes(),
                BoundaryMode.CONTAINING_ENTRY, OffsetRange.of(start, hw)).thenCompose(r -> {
            try {
                for (StreamEntry e : r.entries()) {
                    MutableRecordBatch b = ValidBatch.batchOf(e.payload().nioBuffer());
                    if (b.maxTimestamp() < timestamp) {
                        continue;
                    }
                    for (org.apache.kafka.common.record.Record rec : b) {
                        if (rec.offset() >= start && rec.timestamp() >= timestamp) {
                            return CompletableFuture.completedFuture(
                                    Optional.of(new TimestampOffset(rec.timestamp(), rec.offset())));
                        }
                    }
                }
            } finally {
                r.release();
            }
            if (r.entries().isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<TimestampOffset>empty());
            }
            return scanForTimestamp(timestamp, r.nextOffset(), start, hw);
        });
    }

    // ---- trim, snapshots, close ----

    /**
     * Kafka's DeleteRecords: raises the log start offset to {@code offset} (at most the high watermark; a lower or
     * equal one leaves it), which may lie inside a batch: fetches from it return that whole batch. Saves the
     * producer state first, so a restart never needs the trimmed batches. Completes with the new log start offset;
     * fails OFFSET_OUT_OF_RANGE beyond the high watermark, FENCED when another writer took the stream.
     */
    public CompletableFuture<Long> trim(long offset) {
        long hw;
        long start;
        synchronized (this) {
            hw = highWatermark;
            start = logStartOffset;
        }
        if (offset < 0 || offset > hw) {
            return CompletableFuture.failedFuture(outOfRange(offset, start, hw));
        }
        if (offset <= start) {
            return CompletableFuture.completedFuture(start);
        }
        return snapshotProducerState()
                .thenCompose(ignored -> metadata.streams().trim(stream.id(), offset, writerEpoch))
                .thenApply(head -> {
                    synchronized (this) {
                        logStartOffset = Math.max(logStartOffset, head.trimOffset());
                        return logStartOffset;
                    }
                });
    }

    /**
     * Saves the producers changed since the last save, with the high watermark as the saved end offset, after any
     * save still running. Fails (and keeps them marked changed) when the save fails; FENCED fails the log.
     */
    public CompletableFuture<Void> snapshotProducerState() {
        synchronized (this) {
            CompletableFuture<Void> next = snapshots.handle((v, t) -> null).thenCompose(ignored -> saveNow());
            snapshots = next;
            return next;
        }
    }

    private CompletableFuture<Void> saveNow() {
        long end;
        List<ProducerState> changed;
        synchronized (this) {
            end = highWatermark;
            changed = producers.takeDirty();
            batchesSinceSnapshot = 0;
        }
        return metadata.producers().save(stream.id(), writerEpoch, end, changed).handle((outcome, error) -> {
            if (error == null && outcome == WriteOutcome.WRITTEN) {
                return null;
            }
            NereusException n = error != null ? asNereus(error)
                    : new NereusException(ErrorCode.FENCED, ErrorContext.of("stream", stream.id(), "outcome", outcome));
            Runnable fail = null;
            synchronized (this) {
                producers.markDirty(changed);
                if (n.code() == ErrorCode.FENCED && (mode == Mode.READY || mode == Mode.RECOVERING)) {
                    fail = failLocked(n);
                }
            }
            if (fail != null) {
                fail.run();
            }
            throw n;
        });
    }

    /**
     * Stops the log: later appends fail CLOSED (those in flight complete as the stream completes them), then saves the
     * producer state. The stream and its storage stay open (their owner closes them).
     */
    public CompletableFuture<Void> close() {
        CompletableFuture<Void> r;
        synchronized (this) {
            if (mode == Mode.CLOSED) {
                return snapshots.handle((v, t) -> null);
            }
            boolean saved = mode == Mode.READY;
            moveTo(Mode.CLOSED);
            r = recovered;
            if (!saved) {
                r.complete(null);
                return CompletableFuture.completedFuture(null);
            }
        }
        CompletableFuture<Void> inFlightDone;
        synchronized (this) {
            inFlightDone = CompletableFuture.allOf(inFlight.stream().map(f -> f.stored.handle((v, t) -> null))
                    .toArray(CompletableFuture<?>[]::new));
        }
        return inFlightDone.thenCompose(ignored -> snapshotProducerState());
    }

    // ---- helpers ----

    /** Moves to FAILED with {@code cause}; returns what to run once the monitor is released. */
    private Runnable failLocked(NereusException cause) {
        if (mode == Mode.FAILED || mode == Mode.CLOSED) {
            return () -> { };
        }
        LOG.warn("Kafka partition log failed stream={} code={}", stream.id(), cause.code());
        moveTo(Mode.FAILED);
        failure = cause;
        producers.clearPending();
        CompletableFuture<Void> r = recovered;
        return () -> r.complete(null);
    }

    /** The one place the mode changes; called under this object's monitor. */
    private void moveTo(Mode next) {
        if (!mode.canTransitionTo(next)) {
            throw new IllegalStateException("Kafka partition log " + stream.id() + ": mode " + mode + " cannot become "
                    + next);
        }
        mode = next;
    }

    private NereusException closed() {
        return new NereusException(ErrorCode.CLOSED, Map.of("stream", stream.id()));
    }

    private NereusException outOfRange(long offset, long start, long hw) {
        return new NereusException(ErrorCode.OFFSET_OUT_OF_RANGE, ErrorContext.of("stream", stream.id(), "offset",
                offset, "logStartOffset", start, "highWatermark", hw));
    }

    private NereusException withStream(NereusException e) {
        Map<String, Object> context = ErrorContext.of("stream", stream.id());
        context.putAll(e.context());
        return new NereusException(e.code(), context, e.getCause());
    }

    private NereusException asNereus(Throwable t) {
        Throwable u = Failures.unwrap(t);
        if (u instanceof NereusException n) {
            return n;
        }
        return new NereusException(ErrorCode.RETRIABLE_COMMIT_FAILED, Map.of("stream", stream.id()), u);
    }
}
