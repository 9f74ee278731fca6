package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Messages as large as the broker's maxMessageSize (5 MiB by default) are stored and read back whole, as on stock
 * storage; a larger one is refused to its producer by the broker, and the topic goes on.
 */
class LargeMessageTest {
    private static StandaloneBroker broker;

    @BeforeAll
    static void start() {
        broker = StandaloneBroker.start("LargeMessageTest");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void messagesUpToMaxMessageSize_areStoredAndReadWhole_aLargerOneIsRefused_andTheTopicGoesOn() throws Exception {
        String topic = "persistent://public/default/large-messages";
        int maxMessageSize = broker.pulsarService().getConfiguration().getMaxMessageSize();
        PulsarClient client = broker.newClient();
        try (Consumer<byte[]> consumer = client.newConsumer().topic(topic).subscriptionName("s")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
                Producer<byte[]> producer = client.newProducer().topic(topic).enableBatching(false)
                        .sendTimeout(60, TimeUnit.SECONDS).create()) {
            byte[] small = filled(1000, 1);
            byte[] fourAndAHalf = filled(4 * 1024 * 1024 + 512 * 1024, 2);
            byte[] nearlyMax = filled(maxMessageSize - 4096, 3);
            producer.send(small);
            producer.send(fourAndAHalf);
            producer.send(nearlyMax);
            Throwable tooLarge = catchThrowable(() -> producer.send(filled(maxMessageSize + 1024, 4)));
            assertThat(tooLarge).isInstanceOf(PulsarClientException.class);
            producer.send(small);

            for (byte[] expected : new byte[][] {small, fourAndAHalf, nearlyMax, small}) {
                Message<byte[]> m = consumer.receive(60, TimeUnit.SECONDS);
                assertThat(m).isNotNull();
                assertThat(m.getData().length).isEqualTo(expected.length);
                assertThat(Arrays.equals(m.getData(), expected)).isTrue();
                consumer.acknowledge(m);
            }
        }
    }

    private static byte[] filled(int size, int value) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) value);
        return b;
    }
}
