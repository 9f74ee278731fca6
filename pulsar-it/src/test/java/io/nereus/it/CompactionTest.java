package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Topic compaction through the broker's own triggers ({@code pulsar-admin topics compact}, the compaction status) and
 * read by {@code readCompacted} readers and consumers: the latest value per key, deletes by null payload, keyless
 * messages dropped (topicCompactionRetainNullKey=false), batches compacted message by message, the live tail after
 * the compacted view, {@code getLastMessageId}, trimming and seeks (the horizon across an unload and a restart: {@link CompactionRestartTest}). On
 * Nereus the compacted view is the stream's TOPIC_COMPACTED view; with -Dnereus.it.storage=bookkeeper the same tests
 * run Pulsar's own compactor, without trimming ({@link #segmentsOfTen}).
 */
class CompactionTest {
    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker(conf -> {
        segmentsOfTen(conf);
        // the broker's threshold check (compactionThreshold) every second instead of every minute
        conf.setBrokerServiceCompactionMonitorIntervalInSeconds(1);
    });

    /**
     * On Nereus, trim points fall on multiples of {@code managedLedgerMaxEntriesPerLedger} (its segments), so a
     * small value lets these short topics trim. Stock storage keeps its default: with ledgers rolled every 10
     * entries and trimmed below the horizon, its readers from the earliest position read only the compacted entries
     * of the remaining ledger (seen in stock runs of these tests, not investigated), so the stock runs do not trim.
     */
    static void segmentsOfTen(org.apache.pulsar.broker.ServiceConfiguration conf) {
        if (StorageMode.current() == StorageMode.NEREUS) {
            conf.setManagedLedgerMaxEntriesPerLedger(10);
            conf.setManagedLedgerMinLedgerRolloverTimeMinutes(0);
        }
    }

    private static final Duration COMPACTION_WAIT = Duration.ofSeconds(60);

    /**
     * Compacts {@code topic} through the admin API and waits for the compaction status to leave RUNNING; it must be
     * SUCCESS. On Nereus the compacted view and its horizon are published before the compaction completes. Pulsar's
     * own compactor reports SUCCESS before its broker installs the new compacted ledger (the compactor's
     * acknowledgement does that asynchronously), so on stock storage this also waits until the topic's internal
     * stats name a compacted ledger other than the one before; without that wait the stock runs of these tests read
     * an older (or no) compacted view.
     */
    static void compact(PulsarAdmin admin, String topic) throws Exception {
        long before = compactedLedger(admin, topic);
        admin.topics().triggerCompaction(topic);
        await().atMost(COMPACTION_WAIT).until(() ->
                admin.topics().compactionStatus(topic).status != LongRunningProcessStatus.Status.RUNNING);
        LongRunningProcessStatus status = admin.topics().compactionStatus(topic);
        assertThat(status.status).as("compaction status, error: %s", status.lastError)
                .isEqualTo(LongRunningProcessStatus.Status.SUCCESS);
        if (StorageMode.current() == StorageMode.BOOKKEEPER) {
            await().atMost(COMPACTION_WAIT).until(() -> compactedLedger(admin, topic) != before);
        }
    }

    /**
     * On stock storage, waits until a loaded topic has installed its compacted ledger again (Pulsar's compactor
     * subscription does it asynchronously when the topic loads); on Nereus the horizon is read with the topic.
     */
    static void awaitCompactedViewLoaded(PulsarAdmin admin, String topic) {
        if (StorageMode.current() == StorageMode.BOOKKEEPER) {
            await().atMost(COMPACTION_WAIT).until(() -> compactedLedger(admin, topic) != -1);
        }
    }

    private static long compactedLedger(PulsarAdmin admin, String topic) throws Exception {
        var stats = admin.topics().getInternalStats(topic);
        return stats.compactedLedger == null ? -1 : stats.compactedLedger.ledgerId;
    }

    /**
     * A fresh topic whose messages a durable subscription {@value #HOLD} keeps until the test releases them. A topic
     * without a durable subscription counts every message as consumed: on Nereus (segments of 10 here) its full
     * segments may be trimmed as soon as a cursor is created, also before a compaction reads them (Pulsar's compactor
     * sees only what is kept too; a topic with compaction enabled gets its {@code __compaction} subscription when it
     * loads, which holds them).
     */
    static String heldTopic(PulsarAdmin admin, String prefix) throws Exception {
        String topic = SharedBroker.uniqueTopic(prefix);
        admin.topics().createNonPartitionedTopic(topic);
        admin.topics().createSubscription(topic, HOLD, MessageId.earliest);
        return topic;
    }

    static final String HOLD = "hold";

    static Producer<String> producer(PulsarClient client, String topic, boolean batching) throws Exception {
        return client.newProducer(Schema.STRING).topic(topic).enableBatching(batching)
                .batchingMaxMessages(10).batchingMaxPublishDelay(1, TimeUnit.SECONDS).create();
    }

    /** Every message a reader from the earliest position gets, compacted view or not, until none is left. */
    static List<Message<String>> readAll(PulsarClient client, String topic, boolean compacted) throws Exception {
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic).readCompacted(compacted)
                .startMessageId(MessageId.earliest).create()) {
            List<Message<String>> out = new ArrayList<>();
            while (reader.hasMessageAvailable()) {
                Message<String> m = reader.readNext(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                assertThat(m).as("message after %s", out.size()).isNotNull();
                out.add(m);
            }
            return out;
        }
    }

    /** key to value, in the order read; a repeated key fails (a compacted view holds each key once). */
    static Map<String, String> byKey(List<Message<String>> messages) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Message<String> m : messages) {
            assertThat(out.put(m.getKey(), m.getValue())).as("key %s read twice", m.getKey()).isNull();
        }
        return out;
    }

    static Map<String, String> expected(int keys, String prefix) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int k = 0; k < keys; k++) {
            out.put("k" + k, prefix + k);
        }
        return out;
    }

    /** Sends {@code rounds} values for each of {@code keys} keys, key by key per round: "r&lt;round&gt;-&lt;key&gt;". */
    static void sendRounds(Producer<String> producer, int keys, int firstRound, int rounds) throws Exception {
        List<CompletableFuture<MessageId>> sent = new ArrayList<>();
        for (int r = firstRound; r < firstRound + rounds; r++) {
            for (int k = 0; k < keys; k++) {
                sent.add(producer.newMessage().key("k" + k).value("r" + r + "-" + k).sendAsync());
            }
        }
        producer.flush();
        for (CompletableFuture<MessageId> f : sent) {
            f.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void compaction_keepsTheLatestValuePerKey_dropsDeletedKeysAndKeylessMessages() throws Exception {
        String topic = heldTopic(BROKER.admin(), "compact-latest");
        PulsarClient client = BROKER.client();
        try (Producer<String> p = producer(client, topic, false)) {
            sendRounds(p, 10, 0, 3);
            p.newMessage().value("no key").send();
            p.newMessage().key("k3").value(null).send();
            p.newMessage().key("k7").value("r3-7").send();
        }
        compact(BROKER.admin(), topic);

        Map<String, String> want = expected(10, "r2-");
        want.remove("k3");
        want.put("k7", "r3-7");
        List<Message<String>> compacted = readAll(client, topic, true);
        assertThat(byKey(compacted)).containsExactlyInAnyOrderEntriesOf(want);
        assertThat(compacted).extracting(m -> (MessageIdAdv) m.getMessageId()).isSortedAccordingTo(
                (a, b) -> a.compareTo(b));
    }

    @Test
    void batchedProducer_isCompactedMessageByMessage() throws Exception {
        String topic = heldTopic(BROKER.admin(), "compact-batched");
        PulsarClient client = BROKER.client();
        try (Producer<String> p = producer(client, topic, true)) {
            sendRounds(p, 7, 0, 5);
            p.newMessage().key("k2").value(null).sendAsync();
            p.newMessage().key("k5").value("r5-5").sendAsync();
            p.flush();
        }
        compact(BROKER.admin(), topic);

        Map<String, String> want = expected(7, "r4-");
        want.remove("k2");
        want.put("k5", "r5-5");
        assertThat(byKey(readAll(client, topic, true))).containsExactlyInAnyOrderEntriesOf(want);
    }

    @Test
    void readCompactedConsumers_exclusiveAndFailover_getTheCompactedViewThenTheLiveTail() throws Exception {
        PulsarClient client = BROKER.client();
        for (SubscriptionType type : List.of(SubscriptionType.Exclusive, SubscriptionType.Failover)) {
            String topic = heldTopic(BROKER.admin(), "compact-consumer-" + type);
            try (Producer<String> p = producer(client, topic, false)) {
                sendRounds(p, 5, 0, 4);
                compact(BROKER.admin(), topic);
                try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(topic).readCompacted(true)
                        .subscriptionName("sub").subscriptionType(type)
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe()) {
                    assertThat(byKey(Messages.receive(c, 5))).as("%s: compacted view", type)
                            .containsExactlyInAnyOrderEntriesOf(expected(5, "r3-"));
                    p.newMessage().key("k1").value("tail").send();
                    Message<String> tail = c.receive(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    assertThat(tail).as("%s: live tail", type).isNotNull();
                    assertThat(tail.getValue()).isEqualTo("tail");
                    c.acknowledgeCumulative(tail);
                }
            }
        }
    }

    @Test
    void getLastMessageId_onACompactedTopicEndingWithADelete_isTheLastCompactedMessage() throws Exception {
        String topic = heldTopic(BROKER.admin(), "compact-last-id");
        PulsarClient client = BROKER.client();
        MessageIdAdv kept;
        try (Producer<String> p = producer(client, topic, false)) {
            p.newMessage().key("a").value("1").send();
            kept = (MessageIdAdv) p.newMessage().key("b").value("2").send();
            p.newMessage().key("a").value(null).send();
        }
        compact(BROKER.admin(), topic);
        try (Consumer<String> c = client.newConsumer(Schema.STRING).topic(topic).readCompacted(true)
                .subscriptionName("last").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            MessageIdAdv last = (MessageIdAdv) c.getLastMessageId();
            assertThat(last.getLedgerId()).isEqualTo(kept.getLedgerId());
            assertThat(last.getEntryId()).isEqualTo(kept.getEntryId());
            Message<String> only = c.receive(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            assertThat(only.getKey()).isEqualTo("b");
        }
    }

    @Test
    void compactionThenTrimming_theCompactedViewKeepsEveryKey() throws Exception {
        String topic = heldTopic(BROKER.admin(), "compact-trim");
        PulsarClient client = BROKER.client();
        try (Producer<String> p = producer(client, topic, false)) {
            sendRounds(p, 8, 0, 5);
        }
        compact(BROKER.admin(), topic);
        BROKER.admin().topics().deleteSubscription(topic, HOLD);
        if (StorageMode.current() == StorageMode.NEREUS) {
            await().atMost(COMPACTION_WAIT).until(() -> {
                BROKER.admin().topics().trimTopic(topic);
                return readAll(client, topic, false).size() < 40;
            });
        } else {
            // stock storage keeps the topic's one ledger: nothing to trim; the compacted view holds every key anyway
            BROKER.admin().topics().trimTopic(topic);
        }
        assertThat(byKey(readAll(client, topic, true))).containsExactlyInAnyOrderEntriesOf(expected(8, "r4-"));
    }

    @Test
    void seekByIdAndByPublishTime_onTheCompactedView() throws Exception {
        String topic = heldTopic(BROKER.admin(), "compact-seek");
        PulsarClient client = BROKER.client();
        try (Producer<String> p = producer(client, topic, false)) {
            sendRounds(p, 10, 0, 3);
        }
        compact(BROKER.admin(), topic);
        List<Message<String>> compacted = readAll(client, topic, true);
        assertThat(compacted).hasSize(10);

        Message<String> middle = compacted.get(5);
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic).readCompacted(true)
                .startMessageId(MessageId.earliest).create()) {
            reader.seek(middle.getMessageId());
            List<String> after = new ArrayList<>();
            while (reader.hasMessageAvailable()) {
                after.add(reader.readNext(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS).getValue());
            }
            // a reader's seek to a message id resumes after that message (the reader is not start-inclusive)
            assertThat(after).containsExactlyElementsOf(Messages.values(compacted.subList(6, 10)));
        }

        long t = middle.getPublishTime();
        Message<String> last = compacted.get(compacted.size() - 1);
        Message<String> want = t == last.getPublishTime() ? last
                : compacted.stream().filter(m -> m.getPublishTime() >= t).findFirst().orElseThrow();
        MessageIdAdv found = (MessageIdAdv) BROKER.admin().topics().getMessageIdByTimestamp(topic, t);
        MessageIdAdv wantId = (MessageIdAdv) want.getMessageId();
        assertThat(found.getLedgerId()).isEqualTo(wantId.getLedgerId());
        assertThat(found.getEntryId()).isEqualTo(wantId.getEntryId());
    }

    /**
     * Pulsar's compactor subscribes the topic's {@code __compaction} subscription before it reads (it holds what the
     * next compaction reads), even when there is nothing to compact; once the compaction is done the subscription
     * stands at the last message compacted (what Pulsar's own GetLastMessageIdCompactedTest waits for).
     */
    @Test
    void compactionSubscription_isOpenedByEveryCompaction_andEndsAtTheLastMessage() throws Exception {
        String topic = SharedBroker.uniqueTopic("compact-sub");
        PulsarAdmin admin = BROKER.admin();
        admin.topics().createNonPartitionedTopic(topic);
        admin.topics().triggerCompaction(topic);
        await().atMost(COMPACTION_WAIT).until(() ->
                admin.topics().compactionStatus(topic).status == LongRunningProcessStatus.Status.SUCCESS);
        assertThat(admin.topics().getSubscriptions(topic)).as("after compacting an empty topic")
                .contains("__compaction");

        PulsarClient client = BROKER.client();
        try (Producer<String> p = producer(client, topic, false)) {
            sendRounds(p, 4, 0, 2);
        }
        compact(admin, topic);
        await().atMost(COMPACTION_WAIT).untilAsserted(() -> {
            var stats = admin.topics().getInternalStats(topic);
            assertThat(stats.cursors.get("__compaction").markDeletePosition).isEqualTo(stats.lastConfirmedEntry);
        });
    }

    /**
     * {@code topics stats-internal} names the compacted view in {@code compactedLedger}, a new one after each
     * compaction, with the entries it keeps (on Nereus its generation and payload bytes; on stock the compacted
     * ledger, whose size counts its entries' headers too).
     */
    @Test
    void internalStats_reportTheCompactedView() throws Exception {
        PulsarAdmin admin = BROKER.admin();
        String topic = heldTopic(admin, "compact-stats");
        assertThat(admin.topics().getInternalStats(topic).compactedLedger.ledgerId).as("never compacted")
                .isEqualTo(-1);
        PulsarClient client = BROKER.client();
        try (Producer<String> p = producer(client, topic, false)) {
            sendRounds(p, 6, 0, 3);
        }
        compact(admin, topic);
        var first = admin.topics().getInternalStats(topic).compactedLedger;
        assertThat(first.ledgerId).isNotEqualTo(-1);
        assertThat(first.entries).isEqualTo(6);
        assertThat(first.size).isPositive();
        try (Producer<String> p = producer(client, topic, false)) {
            p.newMessage().key("k0").value(null).send();
        }
        compact(admin, topic);
        var second = admin.topics().getInternalStats(topic).compactedLedger;
        assertThat(second.ledgerId).isNotEqualTo(first.ledgerId).isNotEqualTo(-1);
        assertThat(second.entries).isEqualTo(5);
        assertThat(second.size).isLessThan(first.size);
    }

    /**
     * Deleting the {@code __compaction} subscription disables compaction: Pulsar's compactor subscription deletes the
     * compacted ledger with it, so {@code readCompacted} readers read the whole topic again, also after the topic
     * reloads; the next compaction builds the compacted view afresh.
     */
    @Test
    void deletingTheCompactionSubscription_dropsTheCompactedView_untilTheNextCompaction() throws Exception {
        PulsarClient client = BROKER.client();
        PulsarAdmin admin = BROKER.admin();
        String topic = heldTopic(admin, "compact-disable");
        try (Producer<String> p = producer(client, topic, false)) {
            sendRounds(p, 5, 0, 3);
        }
        compact(admin, topic);
        assertThat(readAll(client, topic, true)).hasSize(5);

        admin.topics().deleteSubscription(topic, "__compaction");
        // Pulsar's compactor subscription drops its compacted ledger just after the deletion is acknowledged
        await().atMost(COMPACTION_WAIT).untilAsserted(() ->
                assertThat(readAll(client, topic, true)).as("compaction disabled: the whole topic").hasSize(15));
        admin.topics().unload(topic);
        assertThat(readAll(client, topic, true)).as("after a reload").hasSize(15);

        admin.topics().triggerCompaction(topic);
        await().atMost(COMPACTION_WAIT).untilAsserted(() ->
                assertThat(byKey(readAll(client, topic, true))).containsExactlyInAnyOrderEntriesOf(expected(5, "r2-")));
    }

    /**
     * The broker's own trigger: with a compaction threshold on the topic, its {@code __compaction} subscription is
     * created at once (it holds the messages) and the broker's compaction monitor compacts the topic once its backlog
     * passes the threshold, without anyone asking.
     */
    @Test
    void compactionThreshold_theBrokerCompactsTheTopicByItself() throws Exception {
        PulsarClient client = BROKER.client();
        PulsarAdmin admin = BROKER.admin();
        String topic = SharedBroker.uniqueTopic("compact-threshold");
        admin.topics().createNonPartitionedTopic(topic);
        admin.topicPolicies().setCompactionThreshold(topic, 1024);
        await().atMost(COMPACTION_WAIT).until(() -> Long.valueOf(1024).equals(
                admin.topicPolicies().getCompactionThreshold(topic)));
        try (Producer<String> p = producer(client, topic, false)) {
            sendRounds(p, 10, 0, 10);
        }
        await().atMost(COMPACTION_WAIT).untilAsserted(() -> assertThat(byKey(readAll(client, topic, true)))
                .containsExactlyInAnyOrderEntriesOf(expected(10, "r9-")));
        assertThat(admin.topics().compactionStatus(topic).status).isEqualTo(LongRunningProcessStatus.Status.SUCCESS);
    }
}
