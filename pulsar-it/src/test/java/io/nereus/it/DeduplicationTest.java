package io.nereus.it;

import static io.nereus.it.Messages.payloads;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

/**
 * Broker-side message deduplication (brokerDeduplicationEnabled) across a topic unload and a broker restart: the
 * broker rebuilds each producer's last sequence id from the stored topic when it loads it again, so a producer that
 * reconnects under the same name learns where it stopped, and messages it sends again are dropped, never stored
 * twice. Each test owns its broker.
 */
class DeduplicationTest {

    private static final String PRODUCER = "dedup-producer";

    private static StandaloneBroker start(String name) {
        return StandaloneBroker.start(name, conf -> conf.setBrokerDeduplicationEnabled(true));
    }

    @Test
    void topicUnload_producerResumesAtItsLastSequenceId_andResentMessagesAreDropped() throws Exception {
        String topic = "persistent://public/default/dedup-unload";
        try (StandaloneBroker broker = start("DeduplicationTest-unload")) {
            PulsarClient client = broker.newClient();
            try (Producer<String> producer = producer(client, topic)) {
                send(producer, 0, 10);
            }

            broker.newAdmin().topics().unload(topic);

            try (Producer<String> producer = producer(client, topic)) {
                assertThat(producer.getLastSequenceId()).as("sequence id the broker recovered").isEqualTo(9);
                send(producer, 5, 15);
                assertThat(producer.getLastSequenceId()).isEqualTo(14);
            }
            assertStoredOnce(client, topic, 15);
        }
    }

    @Test
    void brokerRestart_producerResumesAtItsLastSequenceId_andResentMessagesAreDropped() throws Exception {
        String topic = "persistent://public/default/dedup-restart";
        try (StandaloneBroker broker = start("DeduplicationTest-restart")) {
            try (Producer<String> producer = producer(broker.newClient(), topic)) {
                send(producer, 0, 10);
            }

            broker.restart();

            PulsarClient after = broker.newClient();
            try (Producer<String> producer = producer(after, topic)) {
                assertThat(producer.getLastSequenceId()).as("sequence id the broker recovered").isEqualTo(9);
                send(producer, 5, 15);
                assertThat(producer.getLastSequenceId()).isEqualTo(14);
            }

            broker.restart();

            PulsarClient again = broker.newClient();
            try (Producer<String> producer = producer(again, topic)) {
                assertThat(producer.getLastSequenceId()).isEqualTo(14);
                send(producer, 0, 20);
            }
            assertStoredOnce(again, topic, 20);
        }
    }

    private static Producer<String> producer(PulsarClient client, String topic) throws PulsarClientException {
        return client.newProducer(Schema.STRING).topic(topic).producerName(PRODUCER).enableBatching(false)
                .sendTimeout(30, TimeUnit.SECONDS).create();
    }

    /** Sends {@code m-from .. m-(to-1)} with sequence ids {@code from .. to-1}, each acknowledged before the next. */
    private static void send(Producer<String> producer, int from, int to) throws PulsarClientException {
        for (int i = from; i < to; i++) {
            producer.newMessage().sequenceId(i).value("m-" + i).send();
        }
    }

    /** The topic holds {@code m-0 .. m-(count-1)}, each once, in order, and nothing else. */
    private static void assertStoredOnce(PulsarClient client, String topic, int count) throws Exception {
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic).startMessageId(MessageId.earliest)
                .create()) {
            assertThat(values(Messages.read(reader, count))).containsExactlyElementsOf(payloads("m", 0, count));
            assertThat(reader.hasMessageAvailable()).as("no message stored twice").isFalse();
        }
    }
}
