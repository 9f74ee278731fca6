package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.read;
import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionMode;
import org.apache.pulsar.client.api.TopicMessageId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Seeking, the Reader API, last message ids and non-durable cursors. */
class SeekAndReaderTest {

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker();

    @Test
    void seekByMessageId_afterConsumingAll_redeliversEverythingAfterThatMessage() throws Exception {
        String topic = SharedBroker.uniqueTopic("seek-id");
        try (Consumer<String> consumer = subscribe(topic); Producer<String> producer = producer(topic)) {
            List<MessageId> ids = Messages.send(producer, "s", 10);
            receive(consumer, 10).forEach(consumer::acknowledgeAsync);

            // Consumer.seek(id) marks everything up to and including the id as acknowledged.
            consumer.seek(ids.get(3));

            List<Message<String>> again = receive(consumer, 6);
            assertThat(values(again)).containsExactlyElementsOf(payloads("s", 4, 10));
            assertThat(Messages.ids(again)).containsExactlyElementsOf(ids.subList(4, 10));
            assertThat(consumer.receive(300, TimeUnit.MILLISECONDS)).as("nothing up to the seek id").isNull();
        }
    }

    @Test
    void seekByPublishTime_redeliversFirstMessagePublishedAtOrAfterIt() throws Exception {
        String topic = SharedBroker.uniqueTopic("seek-time");
        try (Consumer<String> consumer = subscribe(topic); Producer<String> producer = producer(topic)) {
            Messages.send(producer, "t", 10);
            List<Message<String>> all = receive(consumer, 10);
            all.forEach(consumer::acknowledgeAsync);
            long seekTime = all.get(6).getPublishTime();
            int expectedFirst = 0;
            while (all.get(expectedFirst).getPublishTime() < seekTime) {
                expectedFirst++;
            }

            consumer.seek(seekTime);

            List<Message<String>> again = receive(consumer, 10 - expectedFirst);
            assertThat(values(again)).containsExactlyElementsOf(payloads("t", expectedFirst, 10));
            assertThat(consumer.receive(300, TimeUnit.MILLISECONDS)).as("nothing before the seek time").isNull();
        }
    }

    @Test
    void reader_emptyTopic_noMessageAvailableAndLastIdHasNoEntry() throws Exception {
        String topic = SharedBroker.uniqueTopic("reader-empty");
        BROKER.admin().topics().createNonPartitionedTopic(topic);
        try (Reader<String> reader = reader(topic, MessageId.earliest)) {
            assertThat(reader.hasMessageAvailable()).isFalse();
            MessageIdAdv lastOfEmpty = single(reader.getLastMessageIds());
            assertThat(lastOfEmpty.getEntryId()).as("entry of the last id on an empty topic").isEqualTo(-1);
            assertThat(reader.readNext(300, TimeUnit.MILLISECONDS)).isNull();

            try (Producer<String> producer = producer(topic)) {
                MessageId first = producer.send("first");
                assertThat(first.compareTo(adminLastMessageId(topic))).isZero();
                assertThat(first.compareTo(lastOfEmpty)).as("first message sorts after the empty last id")
                        .isPositive();
            }
        }
    }

    @Test
    void reader_fromEarliest_readsAllThenHasNoMoreAndLastIdIsLastSent() throws Exception {
        String topic = SharedBroker.uniqueTopic("reader");
        try (Producer<String> producer = producer(topic)) {
            List<MessageId> ids = Messages.send(producer, "r", 5);
            try (Reader<String> reader = reader(topic, MessageId.earliest)) {
                assertThat(reader.hasMessageAvailable()).isTrue();
                MessageIdAdv last = single(reader.getLastMessageIds());
                assertThat(ids.get(4).compareTo(last)).isZero();
                assertThat(ids.get(4).compareTo(adminLastMessageId(topic))).isZero();

                List<Message<String>> read = read(reader, 5);

                assertThat(values(read)).containsExactlyElementsOf(payloads("r", 0, 5));
                assertThat(Messages.ids(read)).containsExactlyElementsOf(ids);
                assertThat(reader.hasMessageAvailable()).isFalse();
            }
        }
    }

    @Test
    void reader_fromMessageId_startsAfterItUnlessInclusive() throws Exception {
        String topic = SharedBroker.uniqueTopic("reader-from-id");
        try (Producer<String> producer = producer(topic)) {
            List<MessageId> ids = Messages.send(producer, "p", 6);
            try (Reader<String> exclusive = reader(topic, ids.get(2));
                 Reader<String> inclusive = BROKER.client().newReader(Schema.STRING).topic(topic)
                         .startMessageId(ids.get(2)).startMessageIdInclusive().create()) {
                assertThat(values(read(exclusive, 3))).containsExactlyElementsOf(payloads("p", 3, 6));
                assertThat(values(read(inclusive, 4))).containsExactlyElementsOf(payloads("p", 2, 6));
            }
        }
    }

    @Test
    void nonDurableReaders_earliestAndLatest_seeOldAndOnlyNewMessages() throws Exception {
        String topic = SharedBroker.uniqueTopic("non-durable");
        try (Producer<String> producer = producer(topic)) {
            Messages.send(producer, "old", 3);
            try (Reader<String> earliest = reader(topic, MessageId.earliest);
                 Reader<String> latest = reader(topic, MessageId.latest)) {
                Messages.send(producer, "new", 2);

                assertThat(values(read(earliest, 5)))
                        .containsExactly("old-0", "old-1", "old-2", "new-0", "new-1");
                assertThat(values(read(latest, 2))).containsExactly("new-0", "new-1");
                assertThat(latest.readNext(300, TimeUnit.MILLISECONDS)).isNull();
            }
            // the broker removes a reader's non-durable subscription on another executor after the reader left
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(BROKER.admin().topics().getSubscriptions(topic)).as("readers leave no subscription")
                            .isEmpty());
        }
    }

    @Test
    void nonDurableSubscription_closedAndReopened_startsAgainFromInitialPosition() throws Exception {
        String topic = SharedBroker.uniqueTopic("non-durable-sub");
        try (Producer<String> producer = producer(topic)) {
            Messages.send(producer, "d", 4);
            try (Consumer<String> first = nonDurable(topic)) {
                receive(first, 4).forEach(first::acknowledgeAsync);
            }
            // the broker removes a non-durable subscription on another executor after the last consumer left
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(BROKER.admin().topics().getSubscriptions(topic)).doesNotContain("nd"));

            try (Consumer<String> second = nonDurable(topic)) {
                assertThat(values(receive(second, 4))).containsExactlyElementsOf(payloads("d", 0, 4));
            }
        }
    }

    private static Consumer<String> nonDurable(String topic) throws PulsarClientException {
        return BROKER.client().newConsumer(Schema.STRING).topic(topic).subscriptionName("nd")
                .subscriptionMode(SubscriptionMode.NonDurable)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }

    private static MessageId adminLastMessageId(String topic) throws PulsarAdminException {
        return BROKER.admin().topics().getLastMessageId(topic);
    }

    private static MessageIdAdv single(List<TopicMessageId> ids) {
        assertThat(ids).hasSize(1);
        return (MessageIdAdv) ids.get(0);
    }

    private static Consumer<String> subscribe(String topic) throws PulsarClientException {
        return BROKER.client().newConsumer(Schema.STRING).topic(topic).subscriptionName("s")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }

    private static Reader<String> reader(String topic, MessageId start) throws PulsarClientException {
        return BROKER.client().newReader(Schema.STRING).topic(topic).startMessageId(start).create();
    }

    private static Producer<String> producer(String topic) throws PulsarClientException {
        return BROKER.client().newProducer(Schema.STRING).topic(topic).enableBatching(false).create();
    }
}
