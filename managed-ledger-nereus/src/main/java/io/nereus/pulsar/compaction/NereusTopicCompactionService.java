package io.nereus.pulsar.compaction;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.generation.CompactionResult;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.StreamEntry;
import io.nereus.pulsar.ledger.OpenLedger;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionFactory;
import org.apache.bookkeeper.mledger.impl.EntryImpl;
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
 * an ownership change, sees the horizon every earlier owner published: it never moves back) and replaced after each
 * compaction. After a successful compaction the {@code __compaction} cursor is moved to the horizon (created if
 * absent, as Pulsar's compactor subscribes it), never ahead of what is published. Thread-safe: the generation is a
 * volatile reference; compactions of one topic are serialized by the broker ({@code PersistentTopic}).
 */
final class NereusTopicCompactionService implements TopicCompactionService {
    private static final Logger LOG = LoggerFactory.getLogger(NereusTopicCompactionService.class);
    /** Compacted entries read per step when searching by publish time or entry index. */
    static final int SEARCH_CHUNK = 100;

    private final String topic;
    private final OpenLedger ledger;
    private final PulsarCompactionPolicy policy;
    private final Function<Position, CompletableFuture<Void>> compactionCursor;
    private volatile CompletableFuture<Optional<IndexRecord>> current;

    /**
     * @param compactionCursor moves the topic's {@code __compaction} cursor to a position (the last compacted one)
     */
    NereusTopicCompactionService(String topic, OpenLedger ledger, boolean retainNullKey,
            Function<Position, CompletableFuture<Void>> compactionCursor) {
        this.topic = Objects.requireNonNull(topic, "topic");
        this.ledger = Objects.requireNonNull(ledger, "ledger");
        this.policy = new PulsarCompactionPolicy(ledger.ledgerId(), retainNullKey);
        this.compactionCursor = Objects.requireNonNull(compactionCursor, "compactionCursor");
        this.current = load();
    }

    private CompletableFuture<Optional<IndexRecord>> load() {
        return ledger.storage().compactor().compactedRecord(ledger.stream().id());
    }

    @Override
    public CompletableFuture<Void> compact() {
        return ledger.storage().compact(ledger.stream(), policy).thenCompose(result -> {
            if (result instanceof CompactionResult.Published p) {
                current = CompletableFuture.completedFuture(Optional.of(p.record()));
                return compactionCursor.apply(lastPosition(p.record())).exceptionally(error -> {
                    LOG.warn("compacted, but the __compaction cursor did not move to the horizon; it holds the"
                            + " offsets above its position until the next compaction: topic={} horizon={}", topic,
                            p.record().endOffset(), Failures.unwrap(error));
                    return null;
                });
            }
            if (result instanceof CompactionResult.UpToDate u) {
                current = CompletableFuture.completedFuture(u.current());
                return CompletableFuture.completedFuture(null);
            }
            current = load();
            return CompletableFuture.failedFuture(new IllegalStateException("compaction of " + topic
                    + " was not published: " + ((CompactionResult.Refused) result).outcome()));
        });
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
        return read(from, numberOfEntriesToRead, true).thenApply(this::entries);
    }

    /** Compacted entries from the first ending after {@code from}; none at or beyond the horizon. */
    private CompletableFuture<List<StreamEntry>> read(long from, int max, boolean mayReload) {
        return current.thenCompose(record -> {
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

    private List<Entry> entries(List<StreamEntry> stored) {
        List<Entry> out = new ArrayList<>(stored.size());
        for (StreamEntry e : stored) {
            out.add(EntryImpl.create(ledger.ledgerId(), e.range().start(), e.payload()));
        }
        return out;
    }

    @Override
    public CompletableFuture<Entry> readLastCompactedEntry() {
        return current.thenCompose(record -> record.isEmpty() ? CompletableFuture.completedFuture(null)
                : ledger.storage().compactor().last(record.get()).thenApply(last -> last.map(e ->
                        (Entry) EntryImpl.create(ledger.ledgerId(), e.range().start(), e.payload())).orElse(null)));
    }

    @Override
    public CompletableFuture<Position> getLastCompactedPosition() {
        return current.thenApply(record -> record.map(this::lastPosition).orElse(null));
    }

    @Override
    public CompletableFuture<Entry> findEntryByPublishTime(long publishTime) {
        return findFirst(e -> {
            ByteBuf b = Unpooled.wrappedBuffer(e.payload());
            return Commands.parseMessageMetadata(b).getPublishTime() >= publishTime;
        });
    }

    @Override
    public CompletableFuture<Entry> findEntryByEntryIndex(long entryIndex) {
        return findFirst(e -> {
            BrokerEntryMetadata m = Commands.parseBrokerEntryMetadataIfExist(Unpooled.wrappedBuffer(e.payload()));
            return m != null && m.hasIndex() && m.getIndex() >= entryIndex;
        });
    }

    /**
     * The first compacted entry matching {@code predicate}, read in order chunk by chunk (the compacted view holds
     * one entry per key at most, so a scan is bounded by the keys); {@code null} when none does.
     */
    private CompletableFuture<Entry> findFirst(Predicate<StreamEntry> predicate) {
        return findFrom(0, predicate);
    }

    private CompletableFuture<Entry> findFrom(long from, Predicate<StreamEntry> predicate) {
        return read(from, SEARCH_CHUNK, true).thenCompose(entries -> {
            for (StreamEntry e : entries) {
                if (predicate.test(e)) {
                    return CompletableFuture.completedFuture(
                            (Entry) EntryImpl.create(ledger.ledgerId(), e.range().start(), e.payload()));
                }
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
