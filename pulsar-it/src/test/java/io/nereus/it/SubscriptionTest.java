package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageListener;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Subscription types, acknowledgements and redelivery. */
class SubscriptionTest {

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker();

    @Test
    void exclusive_secondConsumer_isRejectedAndFirstGetsAll() throws Exception {
        String topic = SharedBroker.uniqueTopic("exclusive");
        try (Consumer<String> first = consumer(topic, "s", SubscriptionType.Exclusive).subscribe();
             Producer<String> producer = producer(topic)) {
            assertThatThrownBy(() -> consumer(topic, "s", SubscriptionType.Exclusive).subscribe())
                    .isInstanceOf(PulsarClientException.ConsumerBusyException.class);

            Messages.send(producer, "x", 10);

            assertThat(values(receive(first, 10))).containsExactlyElementsOf(payloads("x", 0, 10));
        }
    }

    @Test
    void failover_activeConsumerCloses_otherConsumerGetsOnlyUnacked() throws Exception {
        String topic = SharedBroker.uniqueTopic("failover");
        // Alone on the subscription, "a" is the active consumer. Which one is active once "b" joins is up to the
        // broker (a hash of names for non-partitioned topics), so "b" joins only after "a" acknowledged.
        Consumer<String> active = consumer(topic, "s", SubscriptionType.Failover).consumerName("a")
                .isAckReceiptEnabled(true).subscribe();
        try (Producer<String> producer = producer(topic)) {
            Messages.send(producer, "f", 10);
            List<Message<String>> first = receive(active, 10);
            assertThat(values(first)).containsExactlyElementsOf(payloads("f", 0, 10));
            for (Message<String> m : first.subList(0, 4)) {
                active.acknowledge(m);
            }
            try (Consumer<String> other = consumer(topic, "s", SubscriptionType.Failover).consumerName("b")
                    .subscribe()) {
                active.close();

                assertThat(values(receive(other, 6))).containsExactlyElementsOf(payloads("f", 4, 10));
                Message<String> extra;
                while ((extra = other.receive(500, TimeUnit.MILLISECONDS)) != null) {
                    assertThat(extra.getValue()).as("acknowledged before the switch")
                            .isNotIn(payloads("f", 0, 4));
                }
            }
        } finally {
            if (active.isConnected()) {
                active.close();
            }
        }
    }

    @Test
    void shared_twoConsumers_eachMessageDeliveredOnce() throws Exception {
        String topic = SharedBroker.uniqueTopic("shared");
        int count = 40;
        CountDownLatch all = new CountDownLatch(count);
        ConcurrentLinkedQueue<String> delivered = new ConcurrentLinkedQueue<>();
        MessageListener<String> listener = (c, m) -> {
            delivered.add(m.getValue());
            c.acknowledgeAsync(m);
            all.countDown();
        };
        try (Consumer<String> c1 = consumer(topic, "s", SubscriptionType.Shared).receiverQueueSize(2)
                     .messageListener(listener).subscribe();
             Consumer<String> c2 = consumer(topic, "s", SubscriptionType.Shared).receiverQueueSize(2)
                     .messageListener(listener).subscribe();
             Producer<String> producer = producer(topic)) {
            assertThat(List.of(c1, c2)).allSatisfy(c -> assertThat(c.isConnected()).isTrue());
            assertThat(connectedConsumers(topic, "s")).isEqualTo(2);
            Messages.send(producer, "sh", count);

            assertThat(all.await(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)).as("all delivered").isTrue();
            assertThat(delivered).hasSize(count).doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(payloads("sh", 0, count));
        }
    }

    @Test
    void keyShared_twoConsumers_eachKeyStaysWithOneConsumer() throws Exception {
        String topic = SharedBroker.uniqueTopic("key-shared");
        int keys = 16;
        int perKey = 5;
        CountDownLatch all = new CountDownLatch(keys * perKey);
        Map<String, Set<String>> consumersByKey = new ConcurrentHashMap<>();
        Map<String, List<String>> valuesByKey = new ConcurrentHashMap<>();
        MessageListener<String> listener = (c, m) -> {
            consumersByKey.computeIfAbsent(m.getKey(), k -> ConcurrentHashMap.newKeySet()).add(c.getConsumerName());
            valuesByKey.computeIfAbsent(m.getKey(), k -> Collections.synchronizedList(new ArrayList<>()))
                    .add(m.getValue());
            c.acknowledgeAsync(m);
            all.countDown();
        };
        try (Consumer<String> c1 = consumer(topic, "s", SubscriptionType.Key_Shared).consumerName("k1")
                     .messageListener(listener).subscribe();
             Consumer<String> c2 = consumer(topic, "s", SubscriptionType.Key_Shared).consumerName("k2")
                     .messageListener(listener).subscribe();
             Producer<String> producer = BROKER.client().newProducer(Schema.STRING).topic(topic)
                     .enableBatching(false).create()) {
            assertThat(List.of(c1, c2)).allSatisfy(c -> assertThat(c.isConnected()).isTrue());
            assertThat(connectedConsumers(topic, "s")).isEqualTo(2);
            for (int round = 0; round < perKey; round++) {
                for (int k = 0; k < keys; k++) {
                    producer.newMessage().key("key-" + k).value("key-" + k + "/" + round).send();
                }
            }

            assertThat(all.await(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS)).as("all delivered").isTrue();
            assertThat(consumersByKey).hasSize(keys);
            consumersByKey.forEach((key, names) -> assertThat(names).as("consumers of %s", key).hasSize(1));
            Set<String> used = new HashSet<>();
            consumersByKey.values().forEach(used::addAll);
            assertThat(used).as("both consumers got keys").containsExactlyInAnyOrder("k1", "k2");
            valuesByKey.forEach((key, values) -> {
                List<String> inOrder = new ArrayList<>();
                for (int round = 0; round < perKey; round++) {
                    inOrder.add(key + "/" + round);
                }
                assertThat(values).as("order of %s", key).containsExactlyElementsOf(inOrder);
            });
        }
    }

    @Test
    void individualAck_reconnect_redeliversOnlyUnacked() throws Exception {
        String topic = SharedBroker.uniqueTopic("individual-ack");
        try (Producer<String> producer = producer(topic)) {
            Consumer<String> consumer = consumer(topic, "s", SubscriptionType.Shared).isAckReceiptEnabled(true)
                    .subscribe();
            Messages.send(producer, "i", 10);
            List<Message<String>> received = receive(consumer, 10);
            List<String> expectedLeft = new ArrayList<>();
            for (int i = 0; i < received.size(); i++) {
                if (i % 2 == 1) {
                    consumer.acknowledge(received.get(i));
                } else {
                    expectedLeft.add(received.get(i).getValue());
                }
            }
            consumer.close();

            try (Consumer<String> again = consumer(topic, "s", SubscriptionType.Shared).subscribe()) {
                assertThat(values(receive(again, 5))).containsExactlyElementsOf(expectedLeft);
                assertThat(again.receive(300, TimeUnit.MILLISECONDS)).as("nothing acked comes back").isNull();
            }
        }
    }

    @Test
    void cumulativeAck_reconnect_resumesAfterAckedMessage() throws Exception {
        String topic = SharedBroker.uniqueTopic("cumulative-ack");
        try (Producer<String> producer = producer(topic)) {
            Consumer<String> consumer = consumer(topic, "s", SubscriptionType.Exclusive).isAckReceiptEnabled(true)
                    .subscribe();
            Messages.send(producer, "c", 10);
            List<Message<String>> received = receive(consumer, 10);
            consumer.acknowledgeCumulative(received.get(5));
            consumer.close();

            try (Consumer<String> again = consumer(topic, "s", SubscriptionType.Exclusive).subscribe()) {
                assertThat(values(receive(again, 4))).containsExactlyElementsOf(payloads("c", 6, 10));
                assertThat(again.receive(300, TimeUnit.MILLISECONDS)).as("nothing acked comes back").isNull();
            }
        }
    }

    @Test
    void negativeAck_afterDelay_sameMessageRedelivered() throws Exception {
        String topic = SharedBroker.uniqueTopic("nack");
        try (Consumer<String> consumer = consumer(topic, "s", SubscriptionType.Shared)
                     .negativeAckRedeliveryDelay(200, TimeUnit.MILLISECONDS).subscribe();
             Producer<String> producer = producer(topic)) {
            Messages.send(producer, "n", 3);
            List<Message<String>> first = receive(consumer, 3);
            consumer.acknowledge(first.get(0));
            consumer.acknowledge(first.get(2));
            consumer.negativeAcknowledge(first.get(1));

            Message<String> again = receive(consumer, 1).get(0);

            assertThat(again.getValue()).isEqualTo("n-1");
            assertThat(again.getMessageId()).isEqualTo(first.get(1).getMessageId());
            assertThat(again.getRedeliveryCount()).isEqualTo(1);
            consumer.acknowledge(again);
            assertThat(consumer.receive(500, TimeUnit.MILLISECONDS)).as("acked messages stay acked").isNull();
        }
    }

    @Test
    void ackTimeout_unackedMessage_redelivered() throws Exception {
        String topic = SharedBroker.uniqueTopic("ack-timeout");
        try (Consumer<String> consumer = consumer(topic, "s", SubscriptionType.Shared)
                     .ackTimeout(1, TimeUnit.SECONDS).ackTimeoutTickTime(100, TimeUnit.MILLISECONDS).subscribe();
             Producer<String> producer = producer(topic)) {
            Messages.send(producer, "t", 2);
            List<Message<String>> first = receive(consumer, 2);
            consumer.acknowledge(first.get(0));

            Message<String> again = receive(consumer, 1).get(0);

            assertThat(again.getValue()).isEqualTo("t-1");
            assertThat(again.getMessageId()).isEqualTo(first.get(1).getMessageId());
            assertThat(again.getRedeliveryCount()).isGreaterThanOrEqualTo(1);
            consumer.acknowledge(again);
        }
    }

    private static ConsumerBuilder<String> consumer(String topic, String subscription, SubscriptionType type) {
        return BROKER.client().newConsumer(Schema.STRING).topic(topic).subscriptionName(subscription)
                .subscriptionType(type).subscriptionInitialPosition(SubscriptionInitialPosition.Earliest);
    }

    private static Producer<String> producer(String topic) throws PulsarClientException {
        return BROKER.client().newProducer(Schema.STRING).topic(topic).enableBatching(false).create();
    }

    private static int connectedConsumers(String topic, String subscription) throws Exception {
        return BROKER.admin().topics().getStats(topic).getSubscriptions().get(subscription).getConsumers().size();
    }
}
