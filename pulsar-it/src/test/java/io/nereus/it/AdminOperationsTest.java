package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.stats.AnalyzeSubscriptionBacklogResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What an operator does to a topic through the admin API beyond {@link TopicsTest}: expire, reset, peek, get a
 * message by id, analyze backlog, truncate, and Pulsar's own compaction (which writes its compacted
 * ledger with the BookKeeper client the storage shares).
 */
class AdminOperationsTest {

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker();

    private static final Duration BROKER_WAIT = Duration.ofSeconds(20);

    private static Producer<String> producer(String topic) throws PulsarClientException {
        return BROKER.client().newProducer(Schema.STRING).topic(topic).enableBatching(false).create();
    }

    private static Consumer<String> consumer(String topic, String subscription) throws PulsarClientException {
        return BROKER.client().newConsumer(Schema.STRING).topic(topic).subscriptionName(subscription)
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }

    private static long backlog(String topic, String subscription) throws Exception {
        return BROKER.admin().topics().getStats(topic).getSubscriptions().get(subscription).getMsgBacklog();
    }

    @Test
    void expireMessages_olderThanOneSecond_emptiesTheBacklog() throws Exception {
        String topic = SharedBroker.uniqueTopic("expire");
        BROKER.admin().topics().createNonPartitionedTopic(topic);
        BROKER.admin().topics().createSubscription(topic, "s", MessageId.earliest);
        try (Producer<String> producer = producer(topic)) {
            Messages.send(producer, "e", 3);
            assertThat(backlog(topic, "s")).isEqualTo(3);
            // a TTL of 0 means "never" to Pulsar; messages expire once older than the 1 s given
            await().atMost(BROKER_WAIT).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                BROKER.admin().topics().expireMessages(topic, "s", 1);
                assertThat(backlog(topic, "s")).isZero();
            });
            Messages.send(producer, "f", 1);
            try (Consumer<String> consumer = consumer(topic, "s")) {
                assertThat(values(receive(consumer, 1))).containsExactly("f-0");
            }
        }
    }

    @Test
    void resetCursor_toAMessageId_redeliversFromThere() throws Exception {
        String topic = SharedBroker.uniqueTopic("reset");
        List<MessageId> ids;
        try (Consumer<String> consumer = consumer(topic, "s"); Producer<String> producer = producer(topic)) {
            ids = Messages.send(producer, "r", 5);
            for (Message<String> m : receive(consumer, 5)) {
                consumer.acknowledge(m);
            }
            await().atMost(BROKER_WAIT).until(() -> backlog(topic, "s") == 0);
        }
        BROKER.admin().topics().resetCursor(topic, "s", ids.get(1));
        assertThat(backlog(topic, "s")).isEqualTo(4);
        try (Consumer<String> consumer = consumer(topic, "s")) {
            assertThat(values(receive(consumer, 4))).containsExactlyElementsOf(payloads("r", 1, 5));
        }
    }

    @Test
    void peekAndGetMessageById_returnTheStoredMessages() throws Exception {
        String topic = SharedBroker.uniqueTopic("peek");
        BROKER.admin().topics().createNonPartitionedTopic(topic);
        BROKER.admin().topics().createSubscription(topic, "s", MessageId.earliest);
        try (Producer<String> producer = producer(topic)) {
            List<MessageId> ids = Messages.send(producer, "p", 3);
            List<Message<byte[]>> peeked = BROKER.admin().topics().peekMessages(topic, "s", 2);
            assertThat(peeked).extracting(m -> new String(m.getData())).containsExactly("p-0", "p-1");
            org.apache.pulsar.client.impl.MessageIdImpl third = (org.apache.pulsar.client.impl.MessageIdImpl) ids.get(2);
            Message<byte[]> byId = BROKER.admin().topics().getMessageById(topic, third.getLedgerId(),
                    third.getEntryId());
            assertThat(new String(byId.getData())).isEqualTo("p-2");
        }
    }

    @Test
    void analyzeSubscriptionBacklog_countsTheUnackedEntries() throws Exception {
        String topic = SharedBroker.uniqueTopic("analyze");
        BROKER.admin().topics().createNonPartitionedTopic(topic);
        BROKER.admin().topics().createSubscription(topic, "s", MessageId.earliest);
        try (Producer<String> producer = producer(topic)) {
            Messages.send(producer, "n", 6);
            AnalyzeSubscriptionBacklogResult result = BROKER.admin().topics()
                    .analyzeSubscriptionBacklog(topic, "s", Optional.empty());
            assertThat(result.getEntries()).isEqualTo(6);
            assertThat(result.getMessages()).isEqualTo(6);
            assertThat(result.isAborted()).isFalse();
        }
    }

    @Test
    void truncate_removesTheBacklogOfEverySubscription() throws Exception {
        String topic = SharedBroker.uniqueTopic("truncate");
        BROKER.admin().topics().createNonPartitionedTopic(topic);
        BROKER.admin().topics().createSubscription(topic, "s1", MessageId.earliest);
        BROKER.admin().topics().createSubscription(topic, "s2", MessageId.earliest);
        try (Producer<String> producer = producer(topic)) {
            Messages.send(producer, "u", 4);
            BROKER.admin().topics().truncate(topic);
            assertThat(backlog(topic, "s1")).isZero();
            assertThat(backlog(topic, "s2")).isZero();
            Messages.send(producer, "v", 1);
            try (Consumer<String> consumer = consumer(topic, "s1")) {
                assertThat(values(receive(consumer, 1))).containsExactly("v-0");
            }
        }
    }

    @Test
    void compaction_triggeredByAdmin_compactedReaderSeesTheLatestValuePerKey() throws Exception {
        String topic = SharedBroker.uniqueTopic("compacted");
        try (Producer<String> producer = producer(topic)) {
            producer.newMessage().key("k1").value("v1").send();
            producer.newMessage().key("k2").value("v2").send();
            producer.newMessage().key("k1").value("v3").send();
        }
        BROKER.admin().topics().triggerCompaction(topic);
        await().atMost(BROKER_WAIT).until(() ->
                BROKER.admin().topics().compactionStatus(topic).status == LongRunningProcessStatus.Status.SUCCESS);
        Map<String, String> latest = new LinkedHashMap<>();
        List<String> seen = new ArrayList<>();
        try (Reader<String> reader = BROKER.client().newReader(Schema.STRING).topic(topic)
                .startMessageId(MessageId.earliest).readCompacted(true).create()) {
            while (reader.hasMessageAvailable()) {
                Message<String> m = reader.readNext(10, TimeUnit.SECONDS);
                seen.add(m.getKey() + "=" + m.getValue());
                latest.put(m.getKey(), m.getValue());
            }
        }
        assertThat(seen).containsExactly("k2=v2", "k1=v3");
        assertThat(latest).containsEntry("k1", "v3").containsEntry("k2", "v2");
    }
}
