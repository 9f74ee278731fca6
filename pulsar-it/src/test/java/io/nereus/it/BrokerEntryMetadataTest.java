package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Broker entry metadata (Pulsar's managed-ledger interceptor): the broker stamps each entry with a continuous
 * index and its publish time before the ledger stores it, and after a restart continues the index from the last
 * stored entry, which the ledger hands to the interceptor when it opens.
 */
class BrokerEntryMetadataTest {
    private StandaloneBroker broker;

    @AfterEach
    void tearDown() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void index_isContinuousAndSurvivesARestart() throws Exception {
        broker = StandaloneBroker.start("BrokerEntryMetadataTest", conf -> {
            conf.setBrokerEntryMetadataInterceptors(Set.of(
                    "org.apache.pulsar.common.intercept.AppendIndexMetadataInterceptor",
                    "org.apache.pulsar.common.intercept.AppendBrokerTimestampMetadataInterceptor"));
            conf.setExposingBrokerEntryMetadataToClientEnabled(true);
        });
        String topic = SharedBroker.uniqueTopic("entry-metadata");
        long before = System.currentTimeMillis();
        try (PulsarClient client = broker.newClient(); Consumer<String> consumer = subscribe(client, topic);
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                     .create()) {
            Messages.send(producer, "m", 3);
            List<Message<String>> got = Messages.receive(consumer, 3);
            assertThat(got).extracting(m -> m.getIndex().orElseThrow()).containsExactly(0L, 1L, 2L);
            assertThat(got).allSatisfy(m -> assertThat(m.getBrokerPublishTime().orElseThrow())
                    .isGreaterThanOrEqualTo(before));
            for (Message<String> m : got) {
                consumer.acknowledge(m);
            }
        }

        broker.restart();

        try (PulsarClient client = broker.newClient(); Consumer<String> consumer = subscribe(client, topic);
             Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                     .create()) {
            producer.send("after");
            Message<String> m = consumer.receive(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            assertThat(m).isNotNull();
            assertThat(m.getValue()).isEqualTo("after");
            assertThat(m.getIndex()).contains(3L);
        }
    }

    private static Consumer<String> subscribe(PulsarClient client, String topic) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName("s")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }
}
