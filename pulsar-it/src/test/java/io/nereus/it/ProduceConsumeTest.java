package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Producing and consuming on one topic, with and without batching. */
class ProduceConsumeTest {

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker();

    @Test
    void produceConsume_batchingOff_allMessagesInOrderWithDistinctIds() throws Exception {
        String topic = SharedBroker.uniqueTopic("no-batch");
        try (Consumer<String> consumer = subscribe(topic);
             Producer<String> producer = BROKER.client().newProducer(Schema.STRING).topic(topic)
                     .enableBatching(false).create()) {
            List<MessageId> sent = Messages.send(producer, "m", 50);

            List<Message<String>> received = receive(consumer, 50);

            assertThat(values(received)).containsExactlyElementsOf(payloads("m", 0, 50));
            assertThat(Messages.ids(received)).containsExactlyElementsOf(sent).doesNotHaveDuplicates();
            assertThat(consumer.receive(200, TimeUnit.MILLISECONDS)).as("no extra message").isNull();
        }
    }

    @Test
    void produceConsume_batchingOn_allMessagesInOrderAcrossBatches() throws Exception {
        String topic = SharedBroker.uniqueTopic("batch");
        try (Consumer<String> consumer = subscribe(topic);
             Producer<String> producer = BROKER.client().newProducer(Schema.STRING).topic(topic)
                     .enableBatching(true)
                     .batchingMaxMessages(10)
                     .batchingMaxPublishDelay(1, TimeUnit.SECONDS)
                     .create()) {
            List<CompletableFuture<MessageId>> sends = new java.util.ArrayList<>();
            for (int i = 0; i < 100; i++) {
                sends.add(producer.sendAsync("b-" + i));
            }
            producer.flush();
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

            List<Message<String>> received = receive(consumer, 100);

            assertThat(values(received)).containsExactlyElementsOf(payloads("b", 0, 100));
            assertThat(Messages.ids(received)).doesNotHaveDuplicates();
            assertThat(received.stream().map(m -> (org.apache.pulsar.client.api.MessageIdAdv) m.getMessageId())
                    .filter(id -> id.getBatchSize() > 1))
                    .as("messages that arrived inside a batch of several")
                    .isNotEmpty();
        }
    }

    private static Consumer<String> subscribe(String topic) throws Exception {
        return BROKER.client().newConsumer(Schema.STRING).topic(topic).subscriptionName("s")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }
}
