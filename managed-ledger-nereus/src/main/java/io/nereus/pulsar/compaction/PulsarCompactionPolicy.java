package io.nereus.pulsar.compaction;

import io.nereus.generation.CompactionPolicy;
import io.nereus.generation.KeyTable;
import io.nereus.metadata.StreamEntry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.apache.commons.lang3.tuple.ImmutableTriple;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.RawMessage;
import org.apache.pulsar.client.impl.BatchMessageIdImpl;
import org.apache.pulsar.client.impl.RawBatchConverter;
import org.apache.pulsar.client.impl.RawMessageImpl;
import org.apache.pulsar.common.api.proto.MessageIdData;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.protocol.Commands;
import org.apache.pulsar.common.protocol.Markers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pulsar 4.0.8's compaction semantics ({@code PublishingOrderCompactor} over {@code AbstractTwoPhaseCompactor}) for
 * the entries of a managed ledger, applied by the stream's {@link io.nereus.generation.TopicCompactor}:
 * <ul>
 *   <li>server-only markers (transaction markers, replication markers) are dropped;</li>
 *   <li>a readable batch (batched, not encrypted; compressed batches are decompressed) is compacted message by
 *       message with Pulsar's own {@link RawBatchConverter}: each message with a key and a payload becomes the
 *       latest value of its key, one with an empty payload deletes it; phase two rewrites the batch with every
 *       message that is not the latest of its key marked compacted-out, and drops the entry when none remains; a
 *       batch that cannot be decoded is kept whole;</li>
 *   <li>any other entry (a single message, or an encrypted batch, whose keys Pulsar cannot see) is one message
 *       keyed by its metadata's partition key; an empty payload (uncompressed size 0) deletes the key;</li>
 *   <li>messages without a key are kept only with {@code topicCompactionRetainNullKey=true}, as in Pulsar.</li>
 * </ul>
 * Positions stay as they were: the kept entries are stored at their original offsets. Stateless apart from the
 * broker setting; safe for any thread.
 */
final class PulsarCompactionPolicy implements CompactionPolicy {
    private static final Logger LOG = LoggerFactory.getLogger(PulsarCompactionPolicy.class);
    /** The slot of a message that is not in a batch. */
    static final int SINGLE = -1;

    private final long ledgerId;
    private final boolean retainNullKey;

    PulsarCompactionPolicy(long ledgerId, boolean retainNullKey) {
        this.ledgerId = ledgerId;
        this.retainNullKey = retainNullKey;
    }

    @Override
    public void scan(StreamEntry entry, KeyTable keys) {
        ByteBuf buf = entry.payload().slice(); // indices of its own; the entry's reference stays the caller's
        MessageMetadata metadata = Commands.parseMessageMetadata(buf);
        if (Markers.isServerOnlyMarker(metadata)) {
            return;
        }
        long offset = entry.range().start();
        if (RawBatchConverter.isReadableBatch(metadata)) {
            RawMessage raw = raw(entry);
            try {
                List<ImmutableTriple<MessageId, String, Integer>> messages =
                        RawBatchConverter.extractIdsAndKeysAndSize(raw, metadata);
                for (ImmutableTriple<MessageId, String, Integer> m : messages) {
                    if (m == null || m.getMiddle() == null) {
                        continue;
                    }
                    if (m.getRight() > 0) {
                        keys.put(m.getMiddle(), offset, ((BatchMessageIdImpl) m.getLeft()).getBatchIndex());
                    } else {
                        keys.remove(m.getMiddle());
                    }
                }
            } catch (IOException e) {
                LOG.info("batch cannot be decoded, it is kept whole: ledger={} entry={}", ledgerId, offset, e);
            } finally {
                raw.close();
            }
            return;
        }
        if (!metadata.hasPartitionKey()) {
            return;
        }
        int size = metadata.hasUncompressedSize() ? metadata.getUncompressedSize() : buf.readableBytes();
        if (size > 0) {
            keys.put(metadata.getPartitionKey(), offset, SINGLE);
        } else {
            keys.remove(metadata.getPartitionKey());
        }
    }

    @Override
    public Optional<byte[]> retain(StreamEntry entry, KeyTable keys) {
        ByteBuf buf = entry.payload().slice(); // indices of its own; the entry's reference stays the caller's
        MessageMetadata metadata = Commands.parseMessageMetadata(buf);
        if (Markers.isServerOnlyMarker(metadata)) {
            return Optional.empty();
        }
        long offset = entry.range().start();
        if (RawBatchConverter.isReadableBatch(metadata)) {
            RawMessage raw = raw(entry);
            try {
                Optional<RawMessage> kept = RawBatchConverter.rebatchMessage(raw, metadata,
                        (key, id) -> keys.isLatest(key, offset, ((BatchMessageIdImpl) id).getBatchIndex()),
                        retainNullKey);
                if (kept.isEmpty()) {
                    return Optional.empty();
                }
                try {
                    return Optional.of(ByteBufUtil.getBytes(kept.get().getHeadersAndPayload()));
                } finally {
                    kept.get().close();
                }
            } catch (IOException e) {
                LOG.info("batch cannot be decoded, it is kept whole: ledger={} entry={}", ledgerId, offset, e);
                return Optional.of(entry.bytes());
            } finally {
                raw.close();
            }
        }
        if (!metadata.hasPartitionKey()) {
            return retainNullKey ? Optional.of(entry.bytes()) : Optional.empty();
        }
        return keys.isLatest(metadata.getPartitionKey(), offset, SINGLE) ? Optional.of(entry.bytes())
                : Optional.empty();
    }

    /**
     * The entry as the raw message Pulsar's batch converter reads: id (ledger, offset), the stored bytes. The raw
     * message takes a retained slice of its own of the view it is given and closing it releases that; the view
     * (a fresh slice, reader index 0) takes no reference, and the entry's own stays the caller's.
     */
    private RawMessage raw(StreamEntry entry) {
        MessageIdData id = new MessageIdData().setLedgerId(ledgerId).setEntryId(entry.range().start());
        return new RawMessageImpl(id, entry.payload().slice());
    }
}
