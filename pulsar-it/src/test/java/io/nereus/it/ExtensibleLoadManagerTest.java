package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl;
import org.apache.pulsar.broker.loadbalance.extensions.channel.ServiceUnitStateTableViewImpl;
import org.apache.pulsar.broker.loadbalance.extensions.scheduler.TransferShedder;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Extensible Load Manager ({@code loadManagerClassName=...ExtensibleLoadManagerImpl}): its service-unit state
 * channel is a compacted persistent system topic ({@code pulsar/system/loadbalancer-service-unit-state}) stored by
 * the broker's storage, compacted by Pulsar's strategic compactor into a BookKeeper ledger, and read back through
 * a table view. Topics are assigned, unloaded and split through that channel; after a restart the broker rebuilds
 * the channel's state from the compacted ledger plus the topic's tail.
 */
class ExtensibleLoadManagerTest {
    static final long FIRST_VIRTUAL_LEDGER_ID = 1L << 62;
    private static final Duration BROKER_WAIT = Duration.ofSeconds(60);

    private StandaloneBroker broker;

    @AfterEach
    void tearDown() {
        if (broker != null) {
            broker.close();
        }
    }

    /** The settings Pulsar's own ELM tests use for one broker (shedding off: one broker has nowhere to shed to). */
    static void extensibleLoadManager(ServiceConfiguration conf) {
        conf.setLoadManagerClassName(ExtensibleLoadManagerImpl.class.getName());
        conf.setLoadBalancerLoadSheddingStrategy(TransferShedder.class.getName());
        conf.setLoadBalancerSheddingEnabled(false);
        conf.setSystemTopicEnabled(true);
        conf.setTopicLevelPoliciesEnabled(true);
    }

    @Test
    void topicsAreServed_unloadedAndSplit_andTheCompactedChannelSurvivesARestart() throws Exception {
        broker = StandaloneBroker.start("ExtensibleLoadManagerTest", ExtensibleLoadManagerTest::extensibleLoadManager);
        assertThat(broker.pulsarService().getLoadManager().get().getClass().getSimpleName())
                .isEqualTo("ExtensibleLoadManagerWrapper");
        String topic = SharedBroker.uniqueTopic("elm");
        PulsarClient client = broker.newClient();
        PulsarAdmin admin = broker.newAdmin();
        try (Consumer<String> consumer = subscribe(client, topic);
             Producer<String> producer = producer(client, topic)) {
            Messages.send(producer, "a", 10);
            assertThat(values(receiveAndAck(consumer, 10))).containsExactlyElementsOf(payloads("a", 0, 10));

            admin.topics().unload(topic);
            Messages.send(producer, "b", 10);
            assertThat(values(receiveAndAck(consumer, 10))).as("served again after the unload")
                    .containsExactlyElementsOf(payloads("b", 0, 10));

            String bundle = admin.lookups().getBundleRange(topic);
            admin.namespaces().splitNamespaceBundle("public/default", bundle, true, null);
            await().atMost(BROKER_WAIT).untilAsserted(() ->
                    assertThat(admin.lookups().getBundleRange(topic)).isNotEqualTo(bundle));
            Messages.send(producer, "c", 10);
            assertThat(values(receiveAndAck(consumer, 10))).as("served again after the split")
                    .containsExactlyElementsOf(payloads("c", 0, 10));
        }

        String channel = ServiceUnitStateTableViewImpl.TOPIC;
        PersistentTopicInternalStats channelStats = admin.topics().getInternalStats(channel);
        if (broker.storage() == StorageMode.NEREUS) {
            assertThat(channelStats.ledgers).as("the channel topic is stored by Nereus").singleElement()
                    .satisfies(l -> assertThat(l.ledgerId).isGreaterThanOrEqualTo(FIRST_VIRTUAL_LEDGER_ID));
        }
        admin.topics().triggerCompaction(channel);
        await().atMost(BROKER_WAIT).untilAsserted(() -> assertThat(admin.topics().compactionStatus(channel).status)
                .isEqualTo(LongRunningProcessStatus.Status.SUCCESS));
        assertThat(admin.topics().getInternalStats(channel).compactedLedger.ledgerId)
                .as("the channel's compacted ledger").isGreaterThanOrEqualTo(0);

        broker.restart();

        PulsarClient after = broker.newClient();
        try (Consumer<String> consumer = subscribe(after, topic);
             Producer<String> producer = producer(after, topic)) {
            Messages.send(producer, "d", 10);
            assertThat(values(receiveAndAck(consumer, 10))).as("served after a restart")
                    .containsExactlyElementsOf(payloads("d", 0, 10));
        }
        List<String> owned = broker.newAdmin().brokers().getActiveBrokers();
        assertThat(owned).hasSize(1);
    }

    private static List<org.apache.pulsar.client.api.Message<String>> receiveAndAck(Consumer<String> consumer,
            int count) throws Exception {
        List<org.apache.pulsar.client.api.Message<String>> got = receive(consumer, count);
        for (var m : got) {
            consumer.acknowledge(m);
        }
        return got;
    }

    private static Consumer<String> subscribe(PulsarClient client, String topic) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName("elm-sub")
                .subscriptionType(SubscriptionType.Exclusive).isAckReceiptEnabled(true)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }

    private static Producer<String> producer(PulsarClient client, String topic) throws Exception {
        return client.newProducer(Schema.STRING).topic(topic).enableBatching(false).create();
    }
}
