package io.nereus.pulsar.compaction;

import io.nereus.pulsar.NereusManagedLedgerStorage;
import io.nereus.pulsar.ledger.OpenLedger;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.Position;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.loadbalance.extensions.channel.ServiceUnitStateTableViewImpl;
import org.apache.pulsar.broker.service.persistent.PersistentSubscription;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.common.api.proto.CommandAck.AckType;
import org.apache.pulsar.common.api.proto.CommandSubscribe.InitialPosition;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.compaction.Compactor;
import org.apache.pulsar.compaction.PulsarCompactionServiceFactory;
import org.apache.pulsar.compaction.TopicCompactionService;

/**
 * Topic compaction for a broker storing topics in Nereus (PIP-278): set
 * {@code compactionServiceFactoryClassName=io.nereus.pulsar.compaction.NereusCompactionServiceFactory} in broker.conf
 * (conf/nereus.conf does). A topic whose managed ledger Nereus stores gets a {@link NereusTopicCompactionService}: its
 * compacted view is the stream's TOPIC_COMPACTED view, published with its horizon in one metadata transaction. Every
 * other topic (a namespace on the {@code bookkeeper} storage class, a ledger routed to the stock factory, a broker
 * whose storage is not Nereus, a topic Pulsar compacts strategically) gets Pulsar's own compaction service from the
 * superclass, unchanged.
 *
 * <p>The broker's triggers work as for Pulsar's compactor: {@code compactionThreshold}, {@code pulsar-admin topics
 * compact} and the compaction status go through {@code PersistentTopic}, which calls {@link TopicCompactionService}.
 * Safe for any thread.
 */
public class NereusCompactionServiceFactory extends PulsarCompactionServiceFactory {
    /**
     * Topics Pulsar compacts with its strategic compactor, not through the topic's compaction service
     * ({@code PersistentTopic.triggerCompaction}): the Extensible Load Manager's service-unit state channel. Their
     * compacted ledger is written by Pulsar, so they keep Pulsar's compaction service, which reads it.
     */
    private static final Set<String> STRATEGIC_TOPICS = Set.of(ServiceUnitStateTableViewImpl.TOPIC);

    /** Instantiated by the broker by reflection. */
    public NereusCompactionServiceFactory() {
    }

    @Override
    public CompletableFuture<TopicCompactionService> newTopicCompactionService(String topic) {
        Objects.requireNonNull(topic, "topic");
        PulsarService pulsar = getPulsarService();
        if (STRATEGIC_TOPICS.contains(topic)) {
            return super.newTopicCompactionService(topic);
        }
        Optional<OpenLedger> ledger = pulsar.getManagedLedgerStorage() instanceof NereusManagedLedgerStorage nereus
                ? nereus.openNereusLedger(TopicName.get(topic).getPersistenceNamingEncoding()) : Optional.empty();
        if (ledger.isEmpty()) {
            return super.newTopicCompactionService(topic);
        }
        boolean retainNullKey = pulsar.getConfiguration().isTopicCompactionRetainNullKey();
        return CompletableFuture.completedFuture(new NereusTopicCompactionService(topic, ledger.get(), retainNullKey,
                new NereusTopicCompactionService.CompactionCursor() {
                    @Override
                    public CompletableFuture<Void> open() {
                        return compactionSubscription(pulsar, topic).thenAccept(s -> { });
                    }

                    @Override
                    public CompletableFuture<Void> moveTo(Position position) {
                        return moveCompactionCursor(pulsar, topic, position);
                    }
                }));
    }

    /**
     * The topic's {@code __compaction} subscription, created from the earliest position if it does not exist, as
     * Pulsar's compactor does by subscribing; empty when the topic is not loaded here.
     */
    private static CompletableFuture<Optional<PersistentSubscription>> compactionSubscription(PulsarService pulsar,
            String topic) {
        return pulsar.getBrokerService().getTopicIfExists(topic).thenCompose(t -> {
            if (t.isEmpty() || !(t.get() instanceof PersistentTopic pt)) {
                return CompletableFuture.completedFuture(Optional.empty());
            }
            PersistentSubscription existing = pt.getSubscription(Compactor.COMPACTION_SUBSCRIPTION);
            CompletableFuture<?> sub = existing != null ? CompletableFuture.completedFuture(existing)
                    : pt.createSubscription(Compactor.COMPACTION_SUBSCRIPTION, InitialPosition.Earliest, false, null);
            return sub.thenApply(ignored -> Optional.ofNullable(pt.getSubscription(Compactor.COMPACTION_SUBSCRIPTION)));
        });
    }

    /**
     * Acknowledges the topic's {@code __compaction} subscription up to {@code position} (the last compacted one),
     * creating it from the earliest position first if it does not exist.
     */
    private static CompletableFuture<Void> moveCompactionCursor(PulsarService pulsar, String topic, Position position) {
        return compactionSubscription(pulsar, topic).thenAccept(s -> {
            if (s.isPresent() && s.get().getCursor().getMarkDeletedPosition().compareTo(position) < 0) {
                s.get().acknowledgeMessage(List.of(position), AckType.Cumulative, Map.of());
            }
        });
    }
}
