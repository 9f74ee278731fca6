package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.policies.data.TopicStats;
import org.junit.jupiter.api.Test;

/**
 * A broker restart on the same data: messages, subscriptions and acknowledgements survive. Each test owns its
 * broker.
 */
class BrokerRestartTest {

    private static final Duration BROKER_WAIT = Duration.ofSeconds(20);
    private static final String TOPIC = "persistent://public/default/restart";

    @Test
    void restart_afterProduceAndAcks_keepsMessagesAndResumesSubscriptionsAtAckedPositions() throws Exception {
        try (StandaloneBroker broker = StandaloneBroker.start("BrokerRestartTest-acks")) {
            PulsarClient client = broker.newClient();
            PulsarAdmin admin = broker.newAdmin();
            Consumer<String> individual = subscribe(client, "individual", SubscriptionType.Shared);
            Consumer<String> cumulative = subscribe(client, "cumulative", SubscriptionType.Exclusive);
            List<MessageId> sent = new ArrayList<>();
            try (Producer<String> plain = client.newProducer(Schema.STRING).topic(TOPIC).enableBatching(false)
                    .create()) {
                sent.addAll(Messages.send(plain, "m", 20));
            }
            sent.addAll(sendBatched(client, 20, 30));
            List<String> all = payloads("m", 0, 30);

            List<Message<String>> first = receive(individual, 30);
            assertThat(values(first)).containsExactlyElementsOf(all);
            List<String> unacked = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                if (i < 8 || i == 10 || i == 12) {
                    individual.acknowledge(first.get(i));
                } else {
                    unacked.add(all.get(i));
                }
            }
            // msgBacklog counts entries: messages 20..29 went as two batches of five, neither acknowledged.
            int unackedEntriesIndividual = unacked.size() - 10 + 2;
            int unackedEntriesCumulative = 5 + 2;
            List<Message<String>> second = receive(cumulative, 30);
            cumulative.acknowledgeCumulative(second.get(14));
            await().atMost(BROKER_WAIT).untilAsserted(() -> {
                TopicStats stats = admin.topics().getStats(TOPIC);
                assertThat(stats.getSubscriptions().get("individual").getMsgBacklog())
                        .isEqualTo(unackedEntriesIndividual);
                assertThat(stats.getSubscriptions().get("cumulative").getMsgBacklog())
                        .isEqualTo(unackedEntriesCumulative);
            });

            broker.restart();

            PulsarClient after = broker.newClient();
            try (Reader<String> reader = after.newReader(Schema.STRING).topic(TOPIC)
                    .startMessageId(MessageId.earliest).create()) {
                List<Message<String>> everything = Messages.read(reader, 30);
                assertThat(values(everything)).containsExactlyElementsOf(all);
                assertThat(Messages.ids(everything)).containsExactlyElementsOf(sent);
                assertThat(reader.hasMessageAvailable()).isFalse();
            }
            try (Consumer<String> resumed = subscribe(after, "individual", SubscriptionType.Shared)) {
                assertThat(values(receive(resumed, unacked.size()))).containsExactlyElementsOf(unacked);
                assertThat(resumed.receive(300, TimeUnit.MILLISECONDS)).as("no acked message again").isNull();
            }
            try (Consumer<String> resumed = subscribe(after, "cumulative", SubscriptionType.Exclusive)) {
                assertThat(values(receive(resumed, 15))).containsExactlyElementsOf(payloads("m", 15, 30));
                assertThat(resumed.receive(300, TimeUnit.MILLISECONDS)).as("no acked message again").isNull();
            }
            try (Producer<String> producer = after.newProducer(Schema.STRING).topic(TOPIC).enableBatching(false)
                    .create()) {
                MessageId next = producer.send("after-restart");
                sent.forEach(old -> assertThat(next.compareTo(old)).as("%s after %s", next, old).isPositive());
            }
            TopicStats stats = broker.newAdmin().topics().getStats(TOPIC);
            assertThat(stats.getSubscriptions().get("individual").getMsgBacklog())
                    .isEqualTo(unackedEntriesIndividual + 1);
            assertThat(stats.getSubscriptions().get("cumulative").getMsgBacklog())
                    .isEqualTo(unackedEntriesCumulative + 1);
        }
    }

    @Test
    void restart_subscriptionOnEmptyTopic_survivesAndReceivesLaterMessages() throws Exception {
        try (StandaloneBroker broker = StandaloneBroker.start("BrokerRestartTest-empty")) {
            broker.newClient().newConsumer(Schema.STRING).topic(TOPIC).subscriptionName("waiting")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Latest).subscribe().close();

            broker.restart();

            PulsarClient after = broker.newClient();
            assertThat(broker.newAdmin().topics().getSubscriptions(TOPIC)).containsExactly("waiting");
            try (Consumer<String> consumer = subscribe(after, "waiting", SubscriptionType.Exclusive);
                 Producer<String> producer = after.newProducer(Schema.STRING).topic(TOPIC).create()) {
                Messages.send(producer, "w", 3);
                assertThat(values(receive(consumer, 3))).containsExactlyElementsOf(payloads("w", 0, 3));
            }
        }
    }

    private static List<MessageId> sendBatched(PulsarClient client, int from, int to) throws Exception {
        try (Producer<String> batched = client.newProducer(Schema.STRING).topic(TOPIC).enableBatching(true)
                .batchingMaxMessages(5).batchingMaxPublishDelay(1, TimeUnit.SECONDS).create()) {
            List<CompletableFuture<MessageId>> sends = new ArrayList<>();
            for (int i = from; i < to; i++) {
                sends.add(batched.sendAsync("m-" + i));
            }
            batched.flush();
            List<MessageId> ids = new ArrayList<>();
            for (CompletableFuture<MessageId> send : sends) {
                ids.add(send.get(30, TimeUnit.SECONDS));
            }
            return ids;
        }
    }

    private static Consumer<String> subscribe(PulsarClient client, String name, SubscriptionType type)
            throws PulsarClientException {
        return client.newConsumer(Schema.STRING).topic(TOPIC).subscriptionName(name).subscriptionType(type)
                .isAckReceiptEnabled(true).subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe();
    }
}
