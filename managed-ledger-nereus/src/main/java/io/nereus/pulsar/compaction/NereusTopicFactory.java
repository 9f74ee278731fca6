package io.nereus.pulsar.compaction;

import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.pulsar.broker.service.BrokerService;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.service.TopicFactory;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.LedgerInfo;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;

/**
 * Optional ({@code topicFactoryClassName=io.nereus.pulsar.compaction.NereusTopicFactory}, set by conf/nereus.conf):
 * persistent topics whose internal stats ({@code pulsar-admin topics stats-internal}) report a Nereus topic's
 * compacted view in {@code compactedLedger}, as Pulsar's own topics report their compacted ledger: {@code ledgerId}
 * is the compacted generation's number (it changes with every compaction; it is no BookKeeper ledger),
 * {@code entries} the entries it keeps and {@code size} their bytes; {@code -1} each when the topic has no compacted
 * view. Pulsar fills that field only from its own compaction service, whose compacted ledger is a BookKeeper ledger.
 * Every other behaviour is {@link PersistentTopic}'s; non-persistent topics are Pulsar's. Instantiated by the broker
 * by reflection; Pulsar calls this API experimental.
 */
public class NereusTopicFactory implements TopicFactory {
    /** Instantiated by the broker by reflection. */
    public NereusTopicFactory() {
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T extends Topic> T create(String topic, ManagedLedger ledger, BrokerService brokerService,
            Class<T> topicClazz) {
        if (topicClazz != PersistentTopic.class) {
            return null; // the broker makes its own
        }
        return (T) new CompactionStatsTopic(topic, ledger, brokerService);
    }

    /** A {@link PersistentTopic} whose internal stats name its Nereus compacted view. */
    static final class CompactionStatsTopic extends PersistentTopic {
        CompactionStatsTopic(String topic, ManagedLedger ledger, BrokerService brokerService) {
            super(topic, ledger, brokerService);
        }

        @Override
        public CompletableFuture<PersistentTopicInternalStats> getInternalStats(boolean includeLedgerMetadata) {
            CompletableFuture<PersistentTopicInternalStats> stats = super.getInternalStats(includeLedgerMetadata);
            if (!(getTopicCompactionService() instanceof NereusTopicCompactionService nereus)) {
                return stats;
            }
            return stats.thenCombine(nereus.compactedRecord(), (s, record) -> {
                LedgerInfo info = new LedgerInfo();
                info.ledgerId = record.map(r -> r.generation().value()).orElse(-1L);
                info.entries = record.map(r -> r.entryCount()).orElse(-1L);
                info.size = record.map(r -> r.bytes()).orElse(-1L);
                s.compactedLedger = info;
                return s;
            });
        }
    }
}
