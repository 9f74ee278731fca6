package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.broker.delayed.BucketDelayedDeliveryTrackerFactory;
import org.apache.pulsar.broker.service.persistent.AbstractPersistentDispatcherMultipleConsumers;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.policies.data.stats.TopicMetricBean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The bucket delayed-delivery tracker
 * ({@code delayedDeliveryTrackerFactoryClassName=...BucketDelayedDeliveryTrackerFactory}): messages delayed into the
 * far future stay back while others flow, messages delayed briefly arrive once due, also when the topic was unloaded
 * meanwhile (the tracker is rebuilt).
 *
 * <p>The tracker seals a bucket (writes a snapshot of its delayed-message index to a BookKeeper ledger of its own
 * and records it in a cursor property) when a delayed message of a newer ledger than the bucket's arrives. On stock
 * storage, with ledgers of 10 entries, the test sees such a snapshot. A Nereus topic has one (virtual) ledger, so on
 * Nereus the tracker never seals a bucket: it works, with its whole index in memory as the in-memory tracker keeps
 * it, and the test checks that it reports one bucket (so that conf/README.md's statement stays true).
 */
class BucketDelayedDeliveryTest {
    private static final String SUBSCRIPTION = "delayed";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String BUCKET_TOTAL = "pulsar_delayed_message_index_bucket_total";

    private StandaloneBroker broker;

    @AfterEach
    void tearDown() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void delayedMessages_heldUntilDue_deliveredOnceAlsoAcrossAnUnload() throws Exception {
        broker = StandaloneBroker.start("BucketDelayedDeliveryTest", conf -> {
            conf.setDelayedDeliveryTrackerFactoryClassName(BucketDelayedDeliveryTrackerFactory.class.getName());
            conf.setDelayedDeliveryMinIndexCountPerBucket(5);
            conf.setManagedLedgerMaxEntriesPerLedger(10);
            conf.setManagedLedgerMinLedgerRolloverTimeMinutes(0);
        });
        String topic = SharedBroker.uniqueTopic("bucket-delayed");
        PulsarClient client = broker.newClient();
        PulsarAdmin admin = broker.newAdmin();
        try (Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic)
                .subscriptionName(SUBSCRIPTION).subscriptionType(SubscriptionType.Shared).isAckReceiptEnabled(true)
                .subscribe();
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                     .create()) {
            for (int i = 0; i < 30; i++) {
                producer.newMessage().value("later-" + i).deliverAfter(1, TimeUnit.HOURS).send();
            }
            Messages.send(producer, "now", 10);
            assertThat(values(receiveAndAck(consumer, 10))).as("messages due now pass the ones held for an hour")
                    .containsExactlyElementsOf(payloads("now", 0, 10));
            if (broker.storage() == StorageMode.BOOKKEEPER) {
                await().atMost(WAIT).untilAsserted(() -> assertThat(buckets(topic))
                        .as("buckets sealed at ledger rollovers").isGreaterThan(1));
            }

            for (int i = 0; i < 20; i++) {
                producer.newMessage().value("soon-" + i).deliverAfter(2, TimeUnit.SECONDS).send();
            }
            admin.topics().unload(topic);

            Set<String> soon = new HashSet<>();
            while (soon.size() < 20) {
                Message<String> m = receiveAndAck(consumer, 1).get(0);
                assertThat(m.getValue()).as("only the briefly delayed messages are due").startsWith("soon-");
                soon.add(m.getValue());
            }
            assertThat(soon).as("every briefly delayed message, after the unload (one the unload caught unacknowledged"
                    + " may come twice)").containsExactlyInAnyOrderElementsOf(payloads("soon", 0, 20));
            Messages.send(producer, "after", 5);
            assertThat(values(receiveAndAck(consumer, 5))).as("nothing held for an hour slipped through")
                    .containsExactlyElementsOf(payloads("after", 0, 5));
            await().atMost(WAIT).untilAsserted(() -> assertThat(admin.topics().getStats(topic).getSubscriptions()
                    .get(SUBSCRIPTION).getMsgDelayed()).as("messages still held").isEqualTo(30));
            if (broker.storage() == StorageMode.NEREUS) {
                assertThat(buckets(topic)).as("one ledger: no bucket is ever sealed").isEqualTo(1);
            }
        }
    }

    private static List<Message<String>> receiveAndAck(Consumer<String> consumer, int count) throws Exception {
        List<Message<String>> got = receive(consumer, count);
        for (Message<String> m : got) {
            consumer.acknowledge(m);
        }
        return got;
    }

    /**
     * The subscription tracker's bucket count (the mutable bucket and every sealed one), from the figures only the
     * bucket tracker reports (read in the broker: the admin API's subscription stats leave them out).
     */
    private long buckets(String topic) {
        PersistentTopic persistent = (PersistentTopic) broker.pulsarService().getBrokerService()
                .getTopicReference(topic).orElseThrow();
        Map<String, TopicMetricBean> figures = ((AbstractPersistentDispatcherMultipleConsumers) persistent
                .getSubscription(SUBSCRIPTION).getDispatcher()).getBucketDelayedIndexStats();
        assertThat(figures).as("figures of the bucket tracker").containsKey(BUCKET_TOTAL);
        return (long) figures.get(BUCKET_TOTAL).value;
    }
}
