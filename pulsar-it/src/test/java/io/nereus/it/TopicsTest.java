package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.MessageRoutingMode;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats.CursorStats;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.apache.pulsar.common.policies.data.TopicStats;
import org.apache.pulsar.common.schema.SchemaInfo;
import org.apache.pulsar.common.schema.SchemaType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Partitioned topics, schemas, delete and recreate, unload, and the stats the broker reports. */
class TopicsTest {

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker();

    /** Nereus virtual ledger ids start here, above any real BookKeeper ledger id. */
    private static final long FIRST_VIRTUAL_LEDGER_ID = 1L << 62;

    private static final Duration BROKER_WAIT = Duration.ofSeconds(20);

    @Test
    void partitionedTopic_produceToAllPartitions_consumerGetsEveryMessage() throws Exception {
        String topic = SharedBroker.uniqueTopic("partitioned");
        int partitions = 3;
        BROKER.admin().topics().createPartitionedTopic(topic, partitions);
        try (Consumer<String> consumer = subscribe(topic);
             Producer<String> producer = BROKER.client().newProducer(Schema.STRING).topic(topic)
                     .enableBatching(false).messageRoutingMode(MessageRoutingMode.RoundRobinPartition).create()) {
            Messages.send(producer, "p", 30);

            List<Message<String>> received = receive(consumer, 30);

            assertThat(values(received)).containsExactlyInAnyOrderElementsOf(payloads("p", 0, 30));
            Map<String, List<Integer>> orderByPartition = new LinkedHashMap<>();
            for (Message<String> m : received) {
                orderByPartition.computeIfAbsent(m.getTopicName(), t -> new ArrayList<>())
                        .add(Integer.parseInt(m.getValue().substring(2)));
            }
            assertThat(orderByPartition).as("partitions that delivered").hasSize(partitions);
            orderByPartition.forEach((partition, order) ->
                    assertThat(order).as("order within %s", partition).isSorted());
            await().atMost(BROKER_WAIT).untilAsserted(() -> {
                var stats = BROKER.admin().topics().getPartitionedStats(topic, true);
                assertThat(stats.getMsgInCounter()).isEqualTo(30);
                assertThat(stats.getPartitions()).hasSize(partitions);
                stats.getPartitions().values().forEach(p -> assertThat(p.getMsgInCounter()).isEqualTo(10));
            });
        }
    }

    @Test
    void jsonSchema_producerAndConsumer_roundTripsObjectsAndRegistersSchema() throws Exception {
        String topic = SharedBroker.uniqueTopic("schema");
        try (Consumer<Order> consumer = BROKER.client().newConsumer(Schema.JSON(Order.class)).topic(topic)
                     .subscriptionName("s").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                     .subscribe();
             Producer<Order> producer = BROKER.client().newProducer(Schema.JSON(Order.class)).topic(topic)
                     .create()) {
            List<Order> sent = List.of(new Order("a", 1), new Order("b", 2), new Order("c", 3));
            for (Order order : sent) {
                producer.send(order);
            }

            List<Order> received = new ArrayList<>();
            for (int i = 0; i < sent.size(); i++) {
                Message<Order> m = consumer.receive(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                assertThat(m).isNotNull();
                received.add(m.getValue());
            }

            assertThat(received).containsExactlyElementsOf(sent);
            SchemaInfo info = BROKER.admin().schemas().getSchemaInfo(topic);
            assertThat(info.getType()).isEqualTo(SchemaType.JSON);
            assertThat(info.getSchemaDefinition()).contains("quantity");
        }
    }

    @Test
    void deleteAndRecreate_oldMessageIds_neverReturnNewMessagesAsOld() throws Exception {
        String topic = SharedBroker.uniqueTopic("recreate");
        List<MessageId> oldIds;
        try (Producer<String> producer = producer(topic)) {
            oldIds = Messages.send(producer, "old", 5);
        }
        BROKER.admin().topics().delete(topic, true);

        try (Producer<String> producer = producer(topic)) {
            List<MessageId> newIds = Messages.send(producer, "new", 3);
            for (MessageId newId : newIds) {
                assertThat(oldIds).as("new id %s aliases an old id", newId).doesNotContain(newId);
                oldIds.forEach(old -> assertThat(newId.compareTo(old)).as("%s after %s", newId, old).isPositive());
            }
        }

        try (Reader<String> reader = BROKER.client().newReader(Schema.STRING).topic(topic)
                .startMessageId(oldIds.get(2)).create()) {
            assertNoAliasing(drain(reader), oldIds);
        }
        try (Consumer<String> consumer = subscribe(topic)) {
            consumer.seek(oldIds.get(1));
            List<Message<String>> afterSeek = new ArrayList<>();
            Message<String> m;
            while (afterSeek.size() < 10 && (m = consumer.receive(1, TimeUnit.SECONDS)) != null) {
                afterSeek.add(m);
            }
            assertNoAliasing(afterSeek, oldIds);
        }
        try (Reader<String> fromStart = BROKER.client().newReader(Schema.STRING).topic(topic)
                .startMessageId(MessageId.earliest).create()) {
            assertThat(values(Messages.read(fromStart, 3))).containsExactly("new-0", "new-1", "new-2");
            assertThat(fromStart.hasMessageAvailable()).as("the old messages are gone").isFalse();
        }
    }

    @Test
    void unload_whileProducing_topicReloadsAndNothingIsLost() throws Exception {
        String topic = SharedBroker.uniqueTopic("unload");
        try (Consumer<String> consumer = subscribe(topic); Producer<String> producer = producer(topic)) {
            Messages.send(producer, "u", 5);

            BROKER.admin().topics().unload(topic);
            for (int i = 5; i < 10; i++) {
                producer.send("u-" + i);
            }

            assertThat(values(receive(consumer, 10))).containsExactlyElementsOf(payloads("u", 0, 10));
            await().atMost(BROKER_WAIT).untilAsserted(() -> {
                PersistentTopicInternalStats internal = BROKER.admin().topics().getInternalStats(topic);
                assertThat(internal.numberOfEntries).isEqualTo(10);
            });
        }
        try (Reader<String> reader = BROKER.client().newReader(Schema.STRING).topic(topic)
                .startMessageId(MessageId.earliest).create()) {
            assertThat(values(Messages.read(reader, 10))).containsExactlyElementsOf(payloads("u", 0, 10));
        }
    }

    @Test
    void stats_afterProduceAndPartialAck_reportTruthfulCountersAndCursor() throws Exception {
        String topic = SharedBroker.uniqueTopic("stats");
        try (Consumer<String> consumer = BROKER.client().newConsumer(Schema.STRING).topic(topic)
                     .subscriptionName("s").isAckReceiptEnabled(true)
                     .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
             Producer<String> producer = producer(topic)) {
            List<MessageId> ids = Messages.send(producer, "st", 10);
            List<Message<String>> received = receive(consumer, 10);
            consumer.acknowledgeCumulative(received.get(3));
            consumer.acknowledge(received.get(7));
            MessageIdAdv markDelete = (MessageIdAdv) ids.get(3);

            await().atMost(BROKER_WAIT).untilAsserted(() -> {
                TopicStats stats = BROKER.admin().topics().getStats(topic);
                assertThat(stats.getMsgInCounter()).isEqualTo(10);
                assertThat(stats.getBytesInCounter()).isGreaterThan(0);
                assertThat(stats.getStorageSize()).isGreaterThan(0);
                assertThat(stats.getSubscriptions()).containsOnlyKeys("s");
                assertThat(stats.getSubscriptions().get("s").getMsgBacklog()).as("unacked").isEqualTo(5);
                assertThat(stats.getSubscriptions().get("s").getMsgOutCounter()).isEqualTo(10);
            });
            PersistentTopicInternalStats internal = BROKER.admin().topics().getInternalStats(topic);
            assertThat(internal.entriesAddedCounter).isEqualTo(10);
            assertThat(internal.numberOfEntries).isEqualTo(10);
            assertThat(internal.totalSize).isGreaterThan(0);
            assertThat(internal.ledgers).extracting(l -> l.ledgerId).contains(markDelete.getLedgerId());
            assertThat(internal.cursors).containsKey("s");
            CursorStats cursor = internal.cursors.get("s");
            assertThat(cursor.markDeletePosition)
                    .isEqualTo(markDelete.getLedgerId() + ":" + markDelete.getEntryId());
            assertThat(cursor.individuallyDeletedMessages).as("the single ack above the mark-delete")
                    .isNotEqualTo("[]");
        }
    }

    @Test
    void internalStats_nereusStorage_ledgerIdIsVirtual() throws Exception {
        String topic = SharedBroker.uniqueTopic("virtual-ledger");
        MessageIdAdv id;
        try (Producer<String> producer = producer(topic)) {
            id = (MessageIdAdv) producer.send("v");
        }
        PersistentTopicInternalStats internal = BROKER.admin().topics().getInternalStats(topic);
        assertThat(internal.ledgers).extracting(l -> l.ledgerId).contains(id.getLedgerId());

        if (BROKER.broker().storage() == StorageMode.NEREUS) {
            assertThat(id.getLedgerId()).as("message ledger id").isGreaterThanOrEqualTo(FIRST_VIRTUAL_LEDGER_ID);
            assertThat(internal.ledgers).allSatisfy(l -> assertThat(l.ledgerId).as("internal-stats ledger id")
                    .isGreaterThanOrEqualTo(FIRST_VIRTUAL_LEDGER_ID));
        } else {
            assertThat(id.getLedgerId()).as("a BookKeeper ledger id").isLessThan(FIRST_VIRTUAL_LEDGER_ID);
        }
    }

    @Test
    void clearBacklog_subscription_backlogZeroAndOldMessagesNotDelivered() throws Exception {
        String topic = SharedBroker.uniqueTopic("clear-backlog");
        subscribe(topic).close();
        try (Producer<String> producer = producer(topic)) {
            Messages.send(producer, "cb", 5);

            BROKER.admin().topics().skipAllMessages(topic, "s");

            assertThat(backlog(topic, "s")).isZero();
            try (Consumer<String> consumer = subscribe(topic)) {
                assertThat(consumer.receive(300, TimeUnit.MILLISECONDS)).as("cleared messages").isNull();
                producer.send("after");
                assertThat(values(receive(consumer, 1))).containsExactly("after");
            }
        }
    }

    @Test
    void skipMessages_subscription_skipsOldestAndDeliversTheRest() throws Exception {
        String topic = SharedBroker.uniqueTopic("skip");
        subscribe(topic).close();
        try (Producer<String> producer = producer(topic)) {
            Messages.send(producer, "sk", 5);

            BROKER.admin().topics().skipMessages(topic, "s", 3);

            assertThat(backlog(topic, "s")).isEqualTo(2);
            try (Consumer<String> consumer = subscribe(topic)) {
                assertThat(values(receive(consumer, 2))).containsExactly("sk-3", "sk-4");
            }
        }
    }

    @Test
    void terminate_topic_rejectsProducersAndConsumersReachEnd() throws Exception {
        String topic = SharedBroker.uniqueTopic("terminate");
        try (Consumer<String> consumer = subscribe(topic); Producer<String> producer = producer(topic)) {
            List<MessageId> ids = Messages.send(producer, "te", 3);

            MessageId last = BROKER.admin().topics().terminateTopic(topic);

            assertThat(last).isEqualTo(ids.get(2));
            assertThatThrownBy(() -> producer.send("too late"))
                    .isInstanceOf(PulsarClientException.TopicTerminatedException.class);
            List<Message<String>> received = receive(consumer, 3);
            assertThat(values(received)).containsExactly("te-0", "te-1", "te-2");
            // The broker reports the end of a terminated topic to a subscription whose backlog is empty.
            consumer.acknowledgeCumulative(received.get(2));

            await().atMost(BROKER_WAIT).until(consumer::hasReachedEndOfTopic);
            assertThat(BROKER.admin().topics().getInternalStats(topic).state).isEqualTo("Terminated");
        }
    }

    private static long backlog(String topic, String subscription) throws Exception {
        return BROKER.admin().topics().getStats(topic).getSubscriptions().get(subscription).getMsgBacklog();
    }

    private static void assertNoAliasing(List<Message<String>> received, List<MessageId> oldIds) {
        Set<MessageId> old = new HashSet<>(oldIds);
        for (Message<String> m : received) {
            assertThat(old).as("id of %s", m.getValue()).doesNotContain(m.getMessageId());
            assertThat(m.getValue()).as("payload at %s", m.getMessageId()).startsWith("new-");
        }
    }

    private static List<Message<String>> drain(Reader<String> reader) throws PulsarClientException {
        List<Message<String>> read = new ArrayList<>();
        Message<String> m;
        while (read.size() < 10 && (m = reader.readNext(1, TimeUnit.SECONDS)) != null) {
            read.add(m);
        }
        return read;
    }

    private static Consumer<String> subscribe(String topic) throws PulsarClientException {
        return BROKER.client().newConsumer(Schema.STRING).topic(topic).subscriptionName("s")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }

    private static Producer<String> producer(String topic) throws PulsarClientException {
        return BROKER.client().newProducer(Schema.STRING).topic(topic).enableBatching(false).create();
    }

    /** A JSON-schema value: a public no-argument constructor and bean accessors, as the JSON schema needs. */
    public static final class Order {
        private String id;
        private int quantity;

        public Order() {
        }

        Order(String id, int quantity) {
            this.id = id;
            this.quantity = quantity;
        }

        public String getId() {
            return id;
        }

        public void setId(String id) {
            this.id = id;
        }

        public int getQuantity() {
            return quantity;
        }

        public void setQuantity(int quantity) {
            this.quantity = quantity;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Order other && Objects.equals(id, other.id) && quantity == other.quantity;
        }

        @Override
        public int hashCode() {
            return Objects.hash(id, quantity);
        }

        @Override
        public String toString() {
            return "Order[" + id + ", " + quantity + "]";
        }
    }
}
