package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.apache.pulsar.common.policies.data.TopicStats;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Consumed data leaves storage the way it does on stock Pulsar: whole "ledgers" of
 * {@code managedLedgerMaxEntriesPerLedger} entries that every subscription has acknowledged go when the topic is
 * trimmed, the one being written stays, and a retention policy keeps consumed data, each of its limits on its own
 * ({@code -1} on one limit leaves the other to decide; both {@code -1} keep everything). (Trimming follows the
 * acknowledgements that are stored, so each test unloads the topic first, which stores them.) Pulsar's shortest
 * retention time is one minute, so the time-retention test takes a minute.
 */
class RetentionTest {
    private static final int ENTRIES_PER_LEDGER = 5;
    /** Payload bytes of the messages of the size-retention test: 5 of them are a little under 1 MiB. */
    private static final int LARGE = 200_000;
    /** How much younger the data that must not expire is than the data that must: the time to see the one go. */
    private static final Duration AGE_GAP = Duration.ofSeconds(20);

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker(conf -> {
        conf.setManagedLedgerMaxEntriesPerLedger(ENTRIES_PER_LEDGER);
        conf.setManagedLedgerMinLedgerRolloverTimeMinutes(0);
    });

    @Test
    void trimTopic_afterEverythingWasAcked_removesConsumedSegmentsOnly() throws Exception {
        String topic = SharedBroker.uniqueTopic("trim");
        produceAndConsumeAll(topic, "r", 23, 0);

        BROKER.admin().topics().trimTopic(topic);

        PersistentTopicInternalStats stats = BROKER.admin().topics().getInternalStats(topic);
        // stock closes its ledger on unload and starts an empty one on reload, so all 23 go there; Nereus has one
        // stream and keeps the unfinished segment of 3
        assertThat(stats.numberOfEntries).as("23 consumed: at most the unfinished segment of 5 stays")
                .isLessThanOrEqualTo(3);
        if (BROKER.broker().storage() == StorageMode.NEREUS) {
            assertThat(stats.numberOfEntries).isEqualTo(3);
            assertThat(stats.lastConfirmedEntry).endsWith(":22");
            assertThat(oldestStored(topic)).as("the oldest message still stored").isEqualTo("r-20");
        }
    }

    @Test
    void trimTopic_withInfiniteRetention_keepsConsumedData() throws Exception {
        String topic = SharedBroker.uniqueTopic("retained");
        createWithRetention(topic, new RetentionPolicies(-1, -1));
        produceAndConsumeAll(topic, "k", 12, 0);

        BROKER.admin().topics().trimTopic(topic);

        assertThat(BROKER.admin().topics().getInternalStats(topic).numberOfEntries).isEqualTo(12);
    }

    @Test
    void trimTopic_withOnlyASizeLimit_trimsConsumedLedgersWhileTheRestHoldsTheSize() throws Exception {
        String topic = SharedBroker.uniqueTopic("by-size");
        createWithRetention(topic, new RetentionPolicies(-1, 1));
        // 4 ledgers of a little under 1 MiB each, all consumed
        produceAndConsumeAll(topic, "s", 4 * ENTRIES_PER_LEDGER, LARGE);

        BROKER.admin().topics().trimTopic(topic);

        // the first two go (what follows them still holds the 1 MiB), the third stays (the fourth alone holds less)
        PersistentTopicInternalStats internal = BROKER.admin().topics().getInternalStats(topic);
        assertThat(internal.numberOfEntries).isEqualTo(2 * ENTRIES_PER_LEDGER);
        assertThat(oldestStored(topic)).startsWith("s-10-");
        TopicStats stats = BROKER.admin().topics().getStats(topic);
        assertThat(stats.getStorageSize()).as("the bytes of the 10 entries stored")
                .isBetween(10L * LARGE, 10L * (LARGE + 1_000));
        assertThat(stats.getBacklogSize()).isZero();
    }

    @Test
    void trimTopic_withOnlyATimeLimit_trimsConsumedDataOlderThanTheTime() throws Exception {
        String topic = SharedBroker.uniqueTopic("by-time");
        createWithRetention(topic, new RetentionPolicies(1, -1));
        produceAndConsumeAll(topic, "old", 2 * ENTRIES_PER_LEDGER, 0);
        long oldWritten = System.currentTimeMillis();
        // the young data must stay younger than a minute a while after the old data is older
        Awaitility.await().atMost(AGE_GAP.plusSeconds(5)).until(() ->
                System.currentTimeMillis() >= oldWritten + AGE_GAP.toMillis());
        produceAndConsumeAll(topic, "young", 2 * ENTRIES_PER_LEDGER, 0);
        BROKER.admin().topics().trimTopic(topic);
        assertThat(BROKER.admin().topics().getInternalStats(topic).numberOfEntries).as("all younger than a minute")
                .isEqualTo(4 * ENTRIES_PER_LEDGER);

        Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
            BROKER.admin().topics().trimTopic(topic);
            return BROKER.admin().topics().getInternalStats(topic).numberOfEntries <= 2 * ENTRIES_PER_LEDGER;
        });

        assertThat(BROKER.admin().topics().getInternalStats(topic).numberOfEntries)
                .as("the young data, consumed too, is still younger than a minute").isEqualTo(2 * ENTRIES_PER_LEDGER);
        assertThat(oldestStored(topic)).isEqualTo("young-0");
    }

    private static void createWithRetention(String topic, RetentionPolicies retention) throws Exception {
        BROKER.admin().topics().createNonPartitionedTopic(topic);
        BROKER.admin().topicPolicies().setRetention(topic, retention);
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() ->
                retention.equals(BROKER.admin().topicPolicies().getRetention(topic)));
    }

    /** The value of the oldest message a reader from the earliest position gets. */
    private static String oldestStored(String topic) throws Exception {
        try (Reader<String> reader = BROKER.client().newReader(Schema.STRING).topic(topic)
                .startMessageId(MessageId.earliest).create()) {
            Message<String> first = reader.readNext(10, TimeUnit.SECONDS);
            assertThat(first).isNotNull();
            return first.getValue();
        }
    }

    /**
     * Sends {@code n} messages {@code prefix-i} (padded to {@code padding} more characters) and acknowledges them on
     * subscription {@code s}, then unloads the topic so that the acknowledgements are stored.
     */
    private static void produceAndConsumeAll(String topic, String prefix, int n, int padding) throws Exception {
        String pad = "x".repeat(padding);
        try (Consumer<String> consumer = BROKER.client().newConsumer(Schema.STRING).topic(topic)
                .subscriptionName("s").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
             Producer<String> producer = BROKER.client().newProducer(Schema.STRING).topic(topic)
                     .enableBatching(false).create()) {
            for (int i = 0; i < n; i++) {
                producer.send(prefix + "-" + i + (padding > 0 ? "-" + pad : ""));
            }
            for (Message<String> m : Messages.receive(consumer, n)) {
                consumer.acknowledge(m);
            }
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() ->
                    BROKER.admin().topics().getStats(topic).getSubscriptions().get("s").getMsgBacklog() == 0);
        }
        // Acknowledgements reach storage at the broker's mark-delete rate (1/s by default) and only stored ones
        // let data go; unloading closes the cursor, which stores its last state, and the next call reloads it.
        BROKER.admin().topics().unload(topic);
    }
}
