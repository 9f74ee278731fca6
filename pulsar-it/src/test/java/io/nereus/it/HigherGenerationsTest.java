package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.OffloadProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.junit.jupiter.api.Test;

/**
 * Higher generations through the broker: a topic's messages materialized into objects, by the admin API's
 * offload trigger and by the background materializer's own thresholds, then read back byte-exact after a restart,
 * with seeks landing on materialized data. Each test owns its broker.
 */
class HigherGenerationsTest {
    private static final Duration WAIT = Duration.ofSeconds(90);

    private static String payload(int i) {
        return String.format("m-%06d-", i) + "p".repeat(i % 97);
    }

    /** Sends {@code count} messages in batches of at most ten; returns their ids in order. */
    private static List<MessageId> produce(PulsarClient client, String topic, int count) throws Exception {
        List<MessageId> ids = new ArrayList<>(count);
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(true)
                .batchingMaxMessages(10).batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS)
                .maxPendingMessages(5_000).blockIfQueueFull(true).create()) {
            List<CompletableFuture<MessageId>> window = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                window.add(producer.sendAsync(payload(i)));
                if (window.size() == 5_000 || i == count - 1) {
                    producer.flush();
                    for (CompletableFuture<MessageId> f : window) {
                        ids.add(f.get(60, TimeUnit.SECONDS));
                    }
                    window.clear();
                }
            }
        }
        return ids;
    }

    private static void readAllFromEarliest(PulsarClient client, String topic, int count) throws Exception {
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic).startMessageId(MessageId.earliest)
                .receiverQueueSize(2_000).create()) {
            for (int i = 0; i < count; i++) {
                Message<String> m = reader.readNext(30, TimeUnit.SECONDS);
                assertThat(m).as("message %d", i).isNotNull();
                assertThat(m.getValue()).isEqualTo(payload(i));
            }
            assertThat(reader.hasMessageAvailable()).isFalse();
        }
    }

    private static String ledgerMetadata(PulsarAdmin admin, String topic) throws Exception {
        PersistentTopicInternalStats stats = admin.topics().getInternalStats(topic, true);
        assertThat(stats.ledgers).hasSize(1);
        return stats.ledgers.get(0).metadata;
    }

    @Test
    void offloadTrigger_materializesTheTopic_everyMessageReadsBackAfterRestart_andSeeksLandOnObjects()
            throws Exception {
        assumeTrue(StorageMode.current() == StorageMode.NEREUS, "materialization is the plugin's");
        String topic = "persistent://public/default/materialized";
        int count = 100_000;
        try (StandaloneBroker broker = StandaloneBroker.start("HigherGenerationsTest-offload")) {
            PulsarClient client = broker.newClient();
            PulsarAdmin admin = broker.newAdmin();
            client.newConsumer(Schema.STRING).topic(topic).subscriptionName("later")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe().close();
            List<MessageId> ids = produce(client, topic, count);
            assertThat(admin.topics().offloadStatus(topic).getStatus())
                    .isEqualTo(LongRunningProcessStatus.Status.NOT_RUN);

            MessageId last = ids.get(count - 1);
            admin.topics().triggerOffload(topic, last);
            await().atMost(WAIT).until(() -> admin.topics().offloadStatus(topic).getStatus()
                    != LongRunningProcessStatus.Status.RUNNING);
            OffloadProcessStatus status = admin.topics().offloadStatus(topic);
            assertThat(status.getStatus()).as(status.getLastError()).isEqualTo(LongRunningProcessStatus.Status.SUCCESS);
            // everything before the last message's entry is in objects
            assertThat(status.getFirstUnoffloadedMessage()).isNotNull();
            assertThat(admin.topics().getStats(topic).getOffloadedStorageSize()).isPositive();
            assertThat(ledgerMetadata(admin, topic)).contains("objects holding").contains("of offsets [0, ");

            broker.restart();

            PulsarClient after = broker.newClient();
            readAllFromEarliest(after, topic, count);
            try (Consumer<String> consumer = after.newConsumer(Schema.STRING).topic(topic).subscriptionName("later")
                    .receiverQueueSize(100).subscribe()) {
                int k = 54_321;
                consumer.seek(ids.get(k));
                Message<String> atId = consumer.receive(30, TimeUnit.SECONDS);
                assertThat(atId).isNotNull();
                // a consumer's seek is exclusive: the broker rewinds to the message's entry, the client skips up to it
                assertThat(atId.getValue()).isEqualTo(payload(k + 1));

                Message<String> probe = readOne(after, topic, ids.get(77_777));
                consumer.seek(probe.getPublishTime());
                Message<String> atTime = consumer.receive(30, TimeUnit.SECONDS);
                assertThat(atTime).isNotNull();
                assertThat(atTime.getPublishTime()).isGreaterThanOrEqualTo(probe.getPublishTime());
                assertThat(Integer.parseInt(atTime.getValue().substring(2, 8))).isLessThanOrEqualTo(77_777);
            }
            PulsarAdmin adminAfter = broker.newAdmin();
            await().atMost(WAIT).untilAsserted(() ->
                    assertThat(adminAfter.topics().getStats(topic).getOffloadedStorageSize()).isPositive());
        }
    }

    private static Message<String> readOne(PulsarClient client, String topic, MessageId id) throws Exception {
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic).startMessageId(id)
                .startMessageIdInclusive().create()) {
            Message<String> m = reader.readNext(30, TimeUnit.SECONDS);
            assertThat(m).isNotNull();
            return m;
        }
    }

    @Test
    void backgroundMaterializer_sealsAndMaterializesAnIdleTopic_byItsThresholds() throws Exception {
        assumeTrue(StorageMode.current() == StorageMode.NEREUS, "materialization is the plugin's");
        String topic = "persistent://public/default/thresholds";
        int count = 20_000;
        try (StandaloneBroker broker = StandaloneBroker.start("HigherGenerationsTest-thresholds", conf -> {
            conf.getProperties().setProperty("nereusWalSliceMaxAgeSeconds", "2");
            conf.getProperties().setProperty("nereusWalWriterLeaseSeconds", "3");
            conf.getProperties().setProperty("nereusMaterializerIntervalSeconds", "1");
        })) {
            PulsarClient client = broker.newClient();
            PulsarAdmin admin = broker.newAdmin();
            produce(client, topic, count);
            // nobody writes any more: the idle slice is rolled over by age, sealed and materialized
            await().atMost(WAIT).untilAsserted(() -> {
                PersistentTopicInternalStats stats = admin.topics().getInternalStats(topic, true);
                assertThat(stats.ledgers.get(0).offloaded).as(stats.ledgers.get(0).metadata).isTrue();
            });
            assertThat(admin.topics().getStats(topic).getOffloadedStorageSize()).isPositive();

            broker.restart();
            readAllFromEarliest(broker.newClient(), topic, count);
        }
    }
}
