package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The classic Key_Shared dispatcher ({@code subscriptionKeySharedUseClassicPersistentImplementation=true}): a
 * consumer that joins while earlier messages are unacknowledged gets messages of its keys published after it joined
 * only once every earlier message is acknowledged (the dispatcher then moves it out of its "recently joined" set).
 *
 * <p>On stock storage that works. Pulsar 4.0.8's classic dispatcher casts the subscription's managed ledger to the
 * stock {@code ManagedLedgerImpl} on that path, so on Nereus the subscription would stop dispatching (this test,
 * run without the refusal, saw no late message reach either consumer and a {@code ClassCastException} per dispatch);
 * a Nereus broker therefore refuses the setting at start, naming it.
 */
class KeySharedClassicTest {
    private static final int KEYS = 50;
    private static final Duration WAIT = Duration.ofSeconds(30);

    private StandaloneBroker broker;

    @AfterEach
    void tearDown() {
        if (broker != null) {
            broker.close();
        }
    }

    private static StandaloneBroker start() {
        return StandaloneBroker.start("KeySharedClassicTest",
                conf -> conf.setSubscriptionKeySharedUseClassicPersistentImplementation(true));
    }

    @Test
    void nereus_refusesTheSettingAtStart_namingIt() {
        assumeTrue(StorageMode.current() == StorageMode.NEREUS, "the refusal is Nereus's");

        Throwable t = catchThrowable(KeySharedClassicTest::start);

        assertThat(t).isInstanceOf(IllegalStateException.class).hasMessageContaining("failed to start");
        assertThat(t).hasStackTraceContaining(
                "subscriptionKeySharedUseClassicPersistentImplementation=true is not supported with Nereus storage")
                .hasStackTraceContaining("PersistentStickyKeyDispatcherMultipleConsumersClassic");
    }

    @Test
    void recentlyJoinedConsumer_getsItsKeysOnceEarlierMessagesAreAcked() throws Exception {
        assumeTrue(StorageMode.current() != StorageMode.NEREUS, "Nereus refuses the setting");
        broker = start();
        String topic = SharedBroker.uniqueTopic("key-shared-classic");
        PulsarClient client = broker.newClient();
        List<Message<String>> gotByFirst = new CopyOnWriteArrayList<>();
        List<Message<String>> gotBySecond = new CopyOnWriteArrayList<>();
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(false)
                .create();
             Consumer<String> first = subscribe(client, topic, "first", gotByFirst)) {
            send(producer, "early");
            await().atMost(WAIT).until(() -> gotByFirst.size() == KEYS);

            try (Consumer<String> second = subscribe(client, topic, "second", gotBySecond)) {
                send(producer, "late");
                List<Message<String>> early = new ArrayList<>(gotByFirst.subList(0, KEYS));
                for (Message<String> m : early) {
                    first.acknowledge(m);
                }
                await().atMost(WAIT).untilAsserted(() -> {
                    List<String> late = new ArrayList<>();
                    gotByFirst.stream().map(Message::getValue).filter(v -> v.startsWith("late")).forEach(late::add);
                    gotBySecond.stream().map(Message::getValue).forEach(late::add);
                    assertThat(late).as("every late message, each once, to one of the consumers")
                            .containsExactlyInAnyOrderElementsOf(Messages.payloads("late", 0, KEYS));
                });
                assertThat(gotBySecond).as("the consumer that joined late got its keys").isNotEmpty();
            }
        }
    }

    private static void send(Producer<String> producer, String prefix) throws Exception {
        for (int i = 0; i < KEYS; i++) {
            producer.newMessage().key("key-" + i).value(prefix + "-" + i).send();
        }
    }

    private static Consumer<String> subscribe(PulsarClient client, String topic, String name,
            List<Message<String>> received) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName("classic").consumerName(name)
                .subscriptionType(SubscriptionType.Key_Shared).isAckReceiptEnabled(true)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .messageListener((c, m) -> received.add(m))
                .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS).subscribe();
    }
}
