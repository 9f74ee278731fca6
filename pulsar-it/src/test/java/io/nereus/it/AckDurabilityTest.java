package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.policies.data.TopicStats;
import org.junit.jupiter.api.Test;

/**
 * Acknowledgements are never dropped: several consumers of a Shared subscription acknowledge thousands of
 * messages individually (the client groups them into commands of many positions), with negative
 * acknowledgements causing redeliveries and small receiver queues keeping the dispatcher reading while the acks
 * and the cursor's throttled persistence run; an Exclusive subscription acknowledges cumulatively beside it. The
 * backlog is then exact (only the messages the consumers chose not to acknowledge), and after a clean restart it
 * is still exact and exactly those messages are redelivered.
 *
 * <p>The broker uses the distribution's mark-delete rate (standalone.conf: 0.1 saves/s), so most saves are
 * throttled and flushed later, as on a real standalone. {@code -Dnereus.it.ackRounds=N} runs N topics per broker
 * (default 2); the report in docs/ comes from many rounds.
 */
class AckDurabilityTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int MESSAGES = 3000;
    /** Messages whose index is a multiple of this are never acknowledged by the Shared consumers. */
    private static final int KEEP_EVERY = 97;
    private static final int ROUNDS = Integer.getInteger("nereus.it.ackRounds", 2);

    @Test
    void groupedAcksFromSeveralConsumers_withRedeliveries_exactBacklogAndRedeliveryAfterRestart() throws Exception {
        try (StandaloneBroker broker = StandaloneBroker.start("AckDurabilityTest",
                conf -> conf.setManagedLedgerDefaultMarkDeleteRateLimit(0.1))) {
            List<String> topics = new ArrayList<>();
            PulsarClient client = broker.newClient();
            PulsarAdmin admin = broker.newAdmin();
            for (int round = 0; round < ROUNDS; round++) {
                String topic = SharedBroker.uniqueTopic("ack-durability");
                topics.add(topic);
                admin.topics().createNonPartitionedTopic(topic);
                admin.topics().createSubscription(topic, "shared", MessageId.earliest);
                admin.topics().createSubscription(topic, "cumulative", MessageId.earliest);
                admin.topics().createSubscription(topic, "idle", MessageId.earliest);
                produce(client, topic);
                consumeShared(client, topic);
                consumeCumulative(client, topic);
                await().atMost(WAIT).untilAsserted(() -> assertBacklogs(admin, topic));
            }

            broker.restart();

            PulsarAdmin after = broker.newAdmin();
            PulsarClient again = broker.newClient();
            for (String topic : topics) {
                assertBacklogs(after, topic);
                try (Consumer<String> c = again.newConsumer(Schema.STRING).topic(topic).subscriptionName("shared")
                        .subscriptionType(SubscriptionType.Shared).subscribe()) {
                    Set<String> redelivered = new HashSet<>();
                    for (Message<String> m; (m = c.receive(2, TimeUnit.SECONDS)) != null; ) {
                        assertThat(redelivered.add(m.getValue())).as("%s redelivered twice", m.getValue()).isTrue();
                    }
                    assertThat(redelivered).as("redelivered after restart on %s", topic)
                            .containsExactlyInAnyOrderElementsOf(kept());
                }
                try (Consumer<String> c = again.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName("cumulative").subscriptionType(SubscriptionType.Exclusive).subscribe()) {
                    assertThat(c.receive(1, TimeUnit.SECONDS)).as("cumulative subscription redelivers nothing")
                            .isNull();
                }
            }
        }
    }

    private static void produce(PulsarClient client, String topic) throws Exception {
        try (Producer<String> p = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .maxPendingMessages(500).blockIfQueueFull(true).create()) {
            List<CompletableFuture<MessageId>> sends = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                sends.add(p.sendAsync("m-" + i));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Three consumers on one Shared subscription, small receiver queues; each negatively acknowledges the first
     * delivery of every 13th message (redelivered later), and acknowledges everything else except the kept ones.
     */
    private static void consumeShared(PulsarClient client, String topic) throws Exception {
        Set<String> acked = ConcurrentHashMap.newKeySet();
        Set<String> nacked = ConcurrentHashMap.newKeySet();
        List<Consumer<String>> consumers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            consumers.add(client.newConsumer(Schema.STRING).topic(topic).subscriptionName("shared")
                    .subscriptionType(SubscriptionType.Shared).receiverQueueSize(20 + 30 * i)
                    .negativeAckRedeliveryDelay(100, TimeUnit.MILLISECONDS)
                    .messageListener((Consumer<String> c, Message<String> m) -> {
                        int index = Integer.parseInt(m.getValue().substring(2));
                        if (index % KEEP_EVERY == 0) {
                            return;
                        }
                        if (index % 13 == 0 && nacked.add(m.getValue())) {
                            c.negativeAcknowledge(m);
                            return;
                        }
                        c.acknowledgeAsync(m);
                        acked.add(m.getValue());
                    }).subscribe());
        }
        int toAck = MESSAGES - kept().size();
        await().atMost(WAIT).until(() -> acked.size() == toAck);
        for (Consumer<String> c : consumers) {
            c.close(); // flushes the grouped acknowledgements; kept messages go back to the subscription
        }
    }

    /** One consumer acknowledging cumulatively every 50th message, then the last. */
    private static void consumeCumulative(PulsarClient client, String topic) throws Exception {
        try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("cumulative")
                .subscriptionType(SubscriptionType.Exclusive).receiverQueueSize(100).subscribe()) {
            for (int i = 0; i < MESSAGES; i++) {
                Message<String> m = c.receive(10, TimeUnit.SECONDS);
                assertThat(m).as("cumulative message %d of %s", i, topic).isNotNull();
                if (i % 50 == 49 || i == MESSAGES - 1) {
                    c.acknowledgeCumulative(m);
                }
            }
        }
    }

    private static Set<String> kept() {
        Set<String> kept = new HashSet<>();
        for (int i = 0; i < MESSAGES; i += KEEP_EVERY) {
            kept.add("m-" + i);
        }
        return kept;
    }

    private static void assertBacklogs(PulsarAdmin admin, String topic) throws Exception {
        TopicStats stats = admin.topics().getStats(topic);
        Map<String, ? extends org.apache.pulsar.common.policies.data.SubscriptionStats> subs = stats.getSubscriptions();
        assertThat(subs.get("shared").getMsgBacklog()).as("shared backlog of %s", topic).isEqualTo(kept().size());
        assertThat(subs.get("cumulative").getMsgBacklog()).as("cumulative backlog of %s", topic).isZero();
        assertThat(subs.get("idle").getMsgBacklog()).as("idle backlog of %s", topic).isEqualTo(MESSAGES);
    }
}
