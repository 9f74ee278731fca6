package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Consumed data leaves storage the way it does on stock Pulsar: whole "ledgers" of
 * {@code managedLedgerMaxEntriesPerLedger} entries that every subscription has acknowledged go when the topic is
 * trimmed, the one being written stays, and a retention policy keeps consumed data. (Trimming follows the
 * acknowledgements that are stored, so each test unloads the topic first, which stores them.)
 */
class RetentionTest {
    private static final int ENTRIES_PER_LEDGER = 5;

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker(conf -> {
        conf.setManagedLedgerMaxEntriesPerLedger(ENTRIES_PER_LEDGER);
        conf.setManagedLedgerMinLedgerRolloverTimeMinutes(0);
    });

    @Test
    void trimTopic_afterEverythingWasAcked_removesConsumedSegmentsOnly() throws Exception {
        String topic = SharedBroker.uniqueTopic("trim");
        produceAndConsumeAll(topic, 23);

        BROKER.admin().topics().trimTopic(topic);

        PersistentTopicInternalStats stats = BROKER.admin().topics().getInternalStats(topic);
        // stock closes its ledger on unload and starts an empty one on reload, so all 23 go there; Nereus has one
        // stream and keeps the unfinished segment of 3
        assertThat(stats.numberOfEntries).as("23 consumed: at most the unfinished segment of 5 stays")
                .isLessThanOrEqualTo(3);
        if (BROKER.broker().storage() == StorageMode.NEREUS) {
            assertThat(stats.numberOfEntries).isEqualTo(3);
            assertThat(stats.lastConfirmedEntry).endsWith(":22");
            try (Reader<String> reader = BROKER.client().newReader(Schema.STRING).topic(topic)
                    .startMessageId(MessageId.earliest).create()) {
                Message<String> first = reader.readNext(10, TimeUnit.SECONDS);
                assertThat(first).isNotNull();
                assertThat(first.getValue()).as("the oldest message still stored").isEqualTo("r-20");
            }
        }
    }

    @Test
    void trimTopic_withInfiniteRetention_keepsConsumedData() throws Exception {
        String topic = SharedBroker.uniqueTopic("retained");
        BROKER.admin().topics().createNonPartitionedTopic(topic);
        BROKER.admin().topicPolicies().setRetention(topic, new RetentionPolicies(-1, -1));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() ->
                BROKER.admin().topicPolicies().getRetention(topic) != null);
        produceAndConsumeAll(topic, 12);

        BROKER.admin().topics().trimTopic(topic);

        assertThat(BROKER.admin().topics().getInternalStats(topic).numberOfEntries).isEqualTo(12);
    }

    private static void produceAndConsumeAll(String topic, int n) throws Exception {
        try (Consumer<String> consumer = BROKER.client().newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("s").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
             Producer<String> producer = BROKER.client().newProducer(Schema.STRING).topic(topic)
                     .enableBatching(false).create()) {
            Messages.send(producer, "r", n);
            for (Message<String> m : Messages.receive(consumer, n)) {
                consumer.acknowledge(m);
            }
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() ->
                    BROKER.admin().topics().getStats(topic).getSubscriptions().get("s").getMsgBacklog() == 0);
        }
        // Acknowledgements reach storage at the broker's mark-delete rate (1/s by default) and only stored ones
        // let data go; unloading closes the cursor, which stores its last state, and the next call reloads it.
        BROKER.admin().topics().unload(topic);
    }
}
