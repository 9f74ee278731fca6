package io.nereus.pulsar.compaction;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.generation.CompactionResult;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.StreamEntry;
import io.nereus.pulsar.Callbacks;
import io.nereus.pulsar.PulsarEntries;
import io.nereus.pulsar.ledger.OpenLedger;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.pulsar.common.api.proto.BrokerEntryMetadata;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.compaction.TopicCompactionService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pulsar's {@link TopicCompactionService} of a topic stored by Nereus: compaction is the stream's
 * {@link io.nereus.metadata.ReadView#TOPIC_COMPACTED} view. {@link #compact()} publishes a new compacted generation
 * and its horizon in one metadata transaction ({@link io.nereus.generation.TopicCompactor}); reads serve that
 * generation, whose entries keep their original positions {@code (ledgerId, offset)}. The last compacted position is
 * {@code (ledgerId, horizon - 1)}: below and at it a {@code readCompacted} reader gets the compacted view, above it the
 * live topic (Pulsar's dispatcher does that switch, {@code CompactedTopicUtils}).
 *
 * <p>The current generation is read from the metadata when the service is created (a topic load, after a restart or
 * an ownership change, sees the horizon every earlier owner published: it never moves back) and again whenever this
 * broker's compactor changed it (a compaction; the view dropped because the {@code __compaction} subscription was
 * deleted, which disables compaction as Pulsar's compactor subscription does by deleting its compacted ledger). A
 * compaction first opens the {@code __compaction} subscription (as Pulsar's compactor subscribes it) and, after a
 * successful publication, moves it to the horizon, never ahead of what is published. Thread-safe: the generation is
 * a volatile reference; compactions of one topic are serialized by the broker ({@code PersistentTopic}).
 */
final class NereusTopicCompactionService implements TopicCompactionService {
    private static final Logger LOG = LoggerFactory.getLogger(NereusTopicCompactionService.class);
    /** Compacted entries read per step when searching by publish time or entry index. */
    static final int SEARCH_CHUNK = 100;
    /** Compactions run again when offsets they read were trimmed under them. */
    static final int TRIMMED_RETRIES = 3;

    private final String topic;
    private final OpenLedger ledger;
    private final PulsarCompactionPolicy policy;
    private final CompactionCursor compactionCursor;
    /** The compacted view as last read, and the compactor's change count of the stream when it was read. */
    private volatile View current;

    /** The topic's {@code __compaction} subscription, as Pulsar's compactor uses it. */
    interface CompactionCursor {
        /** Creates the subscription at the earliest position unless it exists. */
        CompletableFuture<Void> open();

        /** Acknowledges the subscription up to {@code position} (the last compacted one), creating it if absent. */
        CompletableFuture<Void> moveTo(Position position);
    }

    private record View(long changes, CompletableFuture<Optional<IndexRecord>> record) {
    }

    NereusTopicCompactionService(String topic, OpenLedger ledger, boolean retainNullKey,
            CompactionCursor compactionCursor) {
        this.topic = Objects.requireNonNull(topic, "topic");
        this.ledger = Objects.requireNonNull(ledger, "ledger");
        this.policy = new PulsarCompactionPolicy(ledger.ledgerId(), retainNullKey);
        this.compactionCursor = Objects.requireNonNull(compactionCursor, "compactionCursor");
        this.current = load();
    }

    private View load() {
        long changes = ledger.storage().compactor().changes(ledger.stream().id());
        return new View(changes, ledger.storage().compactor().compactedRecord(ledger.stream().id()));
    }

    /**
     * The current compacted view: the one in memory unless this broker's compactor changed it since it was read (a
     * compaction, or the view dropped when the {@code __compaction} subscription was deleted).
     */
    private CompletableFuture<Optional<IndexRecord>> view() {
        View v = current;
        if (v.changes() != ledger.storage().compactor().changes(ledger.stream().id())) {
            v = load();
            current = v;
        }
        return v.record();
    }

    /** The current compacted generation (its range end is the horizon); empty when the topic has none. */
    CompletableFuture<Optional<IndexRecord>> compactedRecord() {
        return handOff(view());
    }

    /** {@code f} completed on the ledger's executor: the broker's code never runs on a metadata thread. */
    private <T> CompletableFuture<T> handOff(CompletableFuture<T> f) {
        return Callbacks.handOff(f, ledger.executor());
    }

    /**
     * Opens the {@code __compaction} subscription first, as Pulsar's compactor does when it subscribes (it holds the
     * offsets a later compaction reads), then compacts and moves the subscription to the new horizon.
     */
    @Override
    public CompletableFuture<Void> compact() {
        return compactionCursor.open()
                .thenCompose(opened -> handOff(compactOnce(TRIMMED_RETRIES))) // moveTo calls into the broker
                .thenCompose(result -> {
                    // read again rather than taking the result's record: a drop may have come after the publication
                    current = load();
                    if (result instanceof CompactionResult.Published p) {
                        return compactionCursor.moveTo(lastPosition(p.record())).exceptionally(error -> {
                            LOG.warn("compacted, but the __compaction cursor did not move to the horizon; it holds"
                                    + " the offsets above its position until the next compaction: topic={}"
                                    + " horizon={}", topic, p.record().endOffset(), Failures.unwrap(error));
                            return null;
                        });
                    }
                    if (result instanceof CompactionResult.UpToDate) {
                        return CompletableFuture.completedFuture(null);
                    }
                    return CompletableFuture.failedFuture(new IllegalStateException("compaction of " + topic
                            + " was not published: " + ((CompactionResult.Refused) result).outcome()));
                });
    }

    /**
     * One compaction of the stream, run again (at most {@code retries} more times, from a new head) when offsets it
     * was reading were trimmed meanwhile: a trim decided before the {@code __compaction} subscription existed may
     * land after the compaction read the head. Once the subscription exists it holds every offset a compaction reads.
     */
    private CompletableFuture<CompactionResult> compactOnce(int retries) {
        return ledger.storage().compact(ledger.stream(), policy).handle((result, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(result);
            }
            Throwable cause = Failures.unwrap(error);
            if (retries > 0 && cause instanceof NereusException n && n.code() == ErrorCode.OFFSET_TRIMMED) {
                LOG.info("offsets were trimmed while the compaction read them; compacting again from the new trim"
                        + " point: topic={}", topic);
                return compactOnce(retries - 1);
            }
            return CompletableFuture.<CompactionResult>failedFuture(cause);
        }).thenCompose(f -> f);
    }

    private Position lastPosition(IndexRecord record) {
        return PositionFactory.create(ledger.ledgerId(), record.endOffset() - 1);
    }

    @Override
    public CompletableFuture<List<Entry>> readCompactedEntries(Position startPosition, int numberOfEntriesToRead) {
        Objects.requireNonNull(startPosition, "startPosition");
        if (numberOfEntriesToRead <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "entries to read must be > 0: " + numberOfEntriesToRead));
        }
        long from = startPosition.getLedgerId() < ledger.ledgerId() ? 0
                : startPosition.getLedgerId() > ledger.ledgerId() ? Long.MAX_VALUE
                : Math.max(0, startPosition.getEntryId());
        return handOff(read(from, numberOfEntriesToRead, true).thenApply(this::entries));
    }

    /** Compacted entries from the first ending after {@code from}; none at or beyond the horizon. */
    private CompletableFuture<List<StreamEntry>> read(long from, int max, boolean mayReload) {
        return view().thenCompose(record -> {
            if (record.isEmpty() || from >= record.get().endOffset()) {
                return CompletableFuture.completedFuture(List.<StreamEntry>of());
            }
            return ledger.storage().compactor().read(record.get(), from, max, Long.MAX_VALUE)
                    .handle((entries, error) -> {
                        if (error == null) {
                            return CompletableFuture.completedFuture(entries);
                        }
                        if (mayReload && Failures.unwrap(error) instanceof NereusException n
                                && n.code() == ErrorCode.TARGET_MISSING) {
                            current = load(); // a newer generation replaced it and its object was collected
                            return read(from, max, false);
                        }
                        return CompletableFuture.<List<StreamEntry>>failedFuture(Failures.unwrap(error));
                    }).thenCompose(f -> f);
        });
    }

    /** Pulsar entries wrapping the stored entries' buffers, taking over their references ({@link PulsarEntries}). */
    private List<Entry> entries(List<StreamEntry> stored) {
        return PulsarEntries.takeAll(ledger.ledgerId(), stored);
    }

    @Override
    public CompletableFuture<Entry> readLastCompactedEntry() {
        return handOff(view().thenCompose(record -> record.isEmpty() ? CompletableFuture.completedFuture(null)
                : ledger.storage().compactor().last(record.get()).thenApply(last -> last.map(e ->
                        PulsarEntries.take(ledger.ledgerId(), e)).orElse(null))));
    }

    @Override
    public CompletableFuture<Position> getLastCompactedPosition() {
        return handOff(view().thenApply(record -> record.map(this::lastPosition).orElse(null)));
    }

    @Override
    public CompletableFuture<Entry> findEntryByPublishTime(long publishTime) {
        return findFirst(e -> {
            ByteBuf b = e.payload().slice(); // indices of its own: parsing moves them
            return Commands.parseMessageMetadata(b).getPublishTime() >= publishTime;
        });
    }

    @Override
    public CompletableFuture<Entry> findEntryByEntryIndex(long entryIndex) {
        return findFirst(e -> {
            BrokerEntryMetadata m = Commands.parseBrokerEntryMetadataIfExist(e.payload().slice());
            return m != null && m.hasIndex() && m.getIndex() >= entryIndex;
        });
    }

    /**
     * The first compacted entry matching {@code predicate}, read in order chunk by chunk (the compacted view holds
     * one entry per key at most, so a scan is bounded by the keys); {@code null} when none does.
     */
    private CompletableFuture<Entry> findFirst(Predicate<StreamEntry> predicate) {
        return handOff(findFrom(0, predicate));
    }

    private CompletableFuture<Entry> findFrom(long from, Predicate<StreamEntry> predicate) {
        return read(from, SEARCH_CHUNK, true).thenCompose(entries -> {
            StreamEntry found = null;
            try {
                for (StreamEntry e : entries) {
                    if (predicate.test(e)) {
                        found = e.retainedSlice();
                        break;
                    }
                }
            } finally {
                StreamEntry.releaseAll(entries); // the match lives on in its own reference
            }
            if (found != null) {
                return CompletableFuture.completedFuture(PulsarEntries.take(ledger.ledgerId(), found));
            }
            if (entries.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            return findFrom(entries.get(entries.size() - 1).range().end(), predicate);
        });
    }

    @Override
    public void close() {
        // nothing held: the stream belongs to the managed ledger, the compactor to the storage
    }
}
