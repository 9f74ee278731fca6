package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Cursor features a broker uses beyond plain acks: batch-index acknowledgements (the cursor keeps which messages
 * of a batch are acknowledged, durably, and hands them back with the entry) and delayed delivery (the dispatcher
 * replays entries by position once their time has come).
 */
class DeliveryFeaturesTest {
    private StandaloneBroker broker;

    @AfterEach
    void tearDown() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void batchIndexAck_partOfABatchAcked_onlyTheRestIsRedelivered_alsoAfterARestart() throws Exception {
        broker = StandaloneBroker.start("DeliveryFeaturesTest-batch",
                conf -> conf.setAcknowledgmentAtBatchIndexLevelEnabled(true));
        String topic = SharedBroker.uniqueTopic("batch-index");
        try (PulsarClient client = broker.newClient(); Consumer<String> consumer = subscribe(client, topic);
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(true)
                     .batchingMaxMessages(10).batchingMaxPublishDelay(10, TimeUnit.SECONDS).create()) {
            List<CompletableFuture<?>> sends = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                sends.add(producer.sendAsync("b-" + i));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            List<Message<String>> got = Messages.receive(consumer, 10);
            assertThat(Messages.values(got)).containsExactlyElementsOf(Messages.payloads("b", 0, 10));
            for (int i = 0; i < 10; i += 2) {
                consumer.acknowledge(got.get(i));
            }
        }

        try (PulsarClient client = broker.newClient(); Consumer<String> consumer = subscribe(client, topic)) {
            assertThat(Messages.values(Messages.receive(consumer, 5)))
                    .as("a new consumer gets the batch with its acknowledged indexes masked")
                    .containsExactly("b-1", "b-3", "b-5", "b-7", "b-9");
            assertThat(consumer.receive(500, TimeUnit.MILLISECONDS)).isNull();
        }

        // Stock 4.0.8 does not keep a partly acknowledged batch's ack set across a broker restart (it redelivers
        // the whole batch); Nereus stores it with the cursor, so nothing acknowledged comes back.
        assumeTrue(broker.storage() == StorageMode.NEREUS, "stock storage forgets batch-index acks on restart");
        broker.restart();

        try (PulsarClient client = broker.newClient(); Consumer<String> consumer = subscribe(client, topic)) {
            List<Message<String>> again = Messages.receive(consumer, 5);
            assertThat(Messages.values(again)).containsExactly("b-1", "b-3", "b-5", "b-7", "b-9");
            assertThat(consumer.receive(500, TimeUnit.MILLISECONDS)).as("acknowledged messages stay acknowledged")
                    .isNull();
        }
    }

    @Test
    void delayedDelivery_sharedSubscription_deliversTheDelayedMessageAfterItsTime() throws Exception {
        broker = StandaloneBroker.start("DeliveryFeaturesTest-delayed");
        String topic = SharedBroker.uniqueTopic("delayed");
        try (PulsarClient client = broker.newClient();
             Consumer<String> consumer = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("s")
                     .subscriptionType(SubscriptionType.Shared).subscribe();
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                     .create()) {
            long sentAt = System.currentTimeMillis();
            producer.newMessage().value("late").deliverAfter(2, TimeUnit.SECONDS).send();
            producer.send("now");
            Message<String> first = consumer.receive(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            assertThat(first).isNotNull();
            assertThat(first.getValue()).isEqualTo("now");
            consumer.acknowledge(first);
            Message<String> second = consumer.receive(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            assertThat(second).isNotNull();
            assertThat(second.getValue()).isEqualTo("late");
            assertThat(System.currentTimeMillis() - sentAt).as("not before its delivery time")
                    .isGreaterThanOrEqualTo(1_900);
            consumer.acknowledge(second);
        }
    }

    private static Consumer<String> subscribe(PulsarClient client, String topic) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName("s")
                .subscriptionType(SubscriptionType.Shared).enableBatchIndexAcknowledgment(true)
                .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }
}
