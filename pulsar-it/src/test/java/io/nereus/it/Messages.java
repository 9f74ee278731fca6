package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;

/** Small helpers for sending and receiving string messages with timeouts. */
final class Messages {

    /** How long a receive waits for a message that is expected to arrive. */
    static final int RECEIVE_TIMEOUT_SECONDS = 10;

    private Messages() {
    }

    /** Sends {@code prefix-0 .. prefix-(count-1)}, each acknowledged by the broker before the next; returns the ids. */
    static List<MessageId> send(Producer<String> producer, String prefix, int count) throws PulsarClientException {
        List<MessageId> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ids.add(producer.send(prefix + "-" + i));
        }
        return ids;
    }

    /** Expected payloads {@code prefix-from .. prefix-(to-1)}. */
    static List<String> payloads(String prefix, int from, int to) {
        List<String> values = new ArrayList<>();
        for (int i = from; i < to; i++) {
            values.add(prefix + "-" + i);
        }
        return values;
    }

    /** Receives exactly {@code count} messages, failing if any does not arrive within the receive timeout. */
    static List<Message<String>> receive(Consumer<String> consumer, int count) throws PulsarClientException {
        List<Message<String>> received = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Message<String> message = consumer.receive(RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            assertThat(message).as("message %d of %d on %s", i, count, consumer.getTopic()).isNotNull();
            received.add(message);
        }
        return received;
    }

    /** Reads exactly {@code count} messages from a reader, failing on a timeout. */
    static List<Message<String>> read(Reader<String> reader, int count) throws PulsarClientException {
        List<Message<String>> received = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Message<String> message = reader.readNext(RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            assertThat(message).as("message %d of %d on %s", i, count, reader.getTopic()).isNotNull();
            received.add(message);
        }
        return received;
    }

    /** The payloads of the messages, in order. */
    static List<String> values(List<Message<String>> messages) {
        return messages.stream().map(Message::getValue).toList();
    }

    /** The ids of the messages, in order. */
    static List<MessageId> ids(List<Message<String>> messages) {
        return messages.stream().map(Message::getMessageId).toList();
    }
}
