package io.nereus.it;

import static io.nereus.it.Messages.receive;
import static io.nereus.it.Messages.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.impl.ManagedLedgerImpl;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.transaction.pendingack.impl.MLPendingAckStore;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.policies.data.ManagedLedgerInternalStats;
import org.apache.pulsar.common.policies.data.TransactionCoordinatorInternalStats;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pulsar transactions on a broker with {@code transactionCoordinatorEnabled=true}: what a transaction produced is
 * visible once committed and never once aborted, acknowledgements in a transaction count once it commits, and the
 * coordinator's log lives on the stock storage while user topics stay on the broker's storage.
 */
class TransactionTest {
    static final long FIRST_VIRTUAL_LEDGER_ID = 1L << 62;
    static final Duration BROKER_WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    static final SharedBroker BROKER = new SharedBroker(TransactionTest::transactionsOn);

    private static PulsarClient client;

    /** The broker settings transactions need (the rest are the 4.0.8 defaults: system topics, topic policies). */
    static void transactionsOn(ServiceConfiguration conf) {
        conf.setTransactionCoordinatorEnabled(true);
        conf.setSystemTopicEnabled(true);
        conf.setTopicLevelPoliciesEnabled(true);
    }

    @BeforeAll
    static void transactionClient() {
        client = BROKER.broker().newClient(b -> b.enableTransaction(true));
    }

    static Transaction newTransaction(PulsarClient client, Duration timeout) throws Exception {
        return client.newTransaction().withTransactionTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).build()
                .get(30, TimeUnit.SECONDS);
    }

    static Producer<String> producer(PulsarClient client, String topic) throws Exception {
        return client.newProducer(Schema.STRING).topic(topic).enableBatching(false).sendTimeout(0, TimeUnit.SECONDS)
                .create();
    }

    static Consumer<String> subscribe(PulsarClient client, String topic, String subscription) throws Exception {
        return client.newConsumer(Schema.STRING).topic(topic).subscriptionName(subscription)
                .subscriptionType(SubscriptionType.Shared).isAckReceiptEnabled(true)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
    }

    static void send(Producer<String> producer, Transaction txn, String... values) throws Exception {
        for (String v : values) {
            producer.newMessage(txn).value(v).sendAsync().get(30, TimeUnit.SECONDS);
        }
    }

    /** Every message from the earliest one, read by a new reader until the broker says nothing more is available. */
    static List<String> readAll(PulsarClient client, String topic, int expected) throws Exception {
        try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic).startMessageId(MessageId.earliest)
                .create()) {
            List<String> read = values(Messages.read(reader, expected));
            assertThat(reader.hasMessageAvailable()).as("nothing after %s", read).isFalse();
            return read;
        }
    }

    @Test
    void commitAndAbort_consumerAndReaderSeeOnlyCommittedAndPlainMessages() throws Exception {
        String topic = SharedBroker.uniqueTopic("txn-visibility");
        try (Consumer<String> consumer = subscribe(client, topic, "sub");
             Producer<String> producer = producer(client, topic)) {
            producer.send("plain-0");
            Transaction committed = newTransaction(client, Duration.ofMinutes(5));
            Transaction aborted = newTransaction(client, Duration.ofMinutes(5));
            send(producer, committed, "committed-0", "committed-1");
            send(producer, aborted, "aborted-0", "aborted-1");
            send(producer, committed, "committed-2");

            assertThat(values(receive(consumer, 1))).containsExactly("plain-0");
            assertThat(consumer.receive(500, TimeUnit.MILLISECONDS)).as("nothing of an open transaction").isNull();

            committed.commit().get(30, TimeUnit.SECONDS);
            aborted.abort().get(30, TimeUnit.SECONDS);
            producer.send("plain-1");

            List<String> expected = List.of("committed-0", "committed-1", "committed-2", "plain-1");
            assertThat(values(receive(consumer, 4))).containsExactlyElementsOf(expected);
            assertThat(readAll(client, topic, 5)).containsExactly("plain-0", "committed-0", "committed-1",
                    "committed-2", "plain-1");
        }
    }

    @Test
    void messagesOfACommittedTransaction_reachAConsumerWaitingForThem() throws Exception {
        String topic = SharedBroker.uniqueTopic("txn-waiting");
        try (Consumer<String> consumer = subscribe(client, topic, "sub");
             Producer<String> producer = producer(client, topic)) {
            Transaction txn = newTransaction(client, Duration.ofMinutes(5));
            send(producer, txn, "t-0", "t-1");
            assertThat(consumer.receive(500, TimeUnit.MILLISECONDS)).as("nothing before the commit").isNull();

            txn.commit().get(30, TimeUnit.SECONDS);

            assertThat(values(receive(consumer, 2))).as("visible without any later message")
                    .containsExactly("t-0", "t-1");
        }
    }

    @Test
    void acknowledgementsInTransactions_committedCountAbortedAreRedelivered() throws Exception {
        String topic = SharedBroker.uniqueTopic("txn-acks");
        try (Consumer<String> consumer = subscribe(client, topic, "sub");
             Producer<String> producer = producer(client, topic)) {
            Messages.send(producer, "m", 4);
            List<Message<String>> got = receive(consumer, 4);
            Transaction abortAcks = newTransaction(client, Duration.ofMinutes(5));
            Transaction commitAcks = newTransaction(client, Duration.ofMinutes(5));
            consumer.acknowledgeAsync(got.get(0).getMessageId(), abortAcks).get(30, TimeUnit.SECONDS);
            consumer.acknowledgeAsync(got.get(1).getMessageId(), abortAcks).get(30, TimeUnit.SECONDS);
            consumer.acknowledgeAsync(got.get(2).getMessageId(), commitAcks).get(30, TimeUnit.SECONDS);
            consumer.acknowledgeAsync(got.get(3).getMessageId(), commitAcks).get(30, TimeUnit.SECONDS);

            commitAcks.commit().get(30, TimeUnit.SECONDS);
            abortAcks.abort().get(30, TimeUnit.SECONDS);

            await().atMost(BROKER_WAIT).untilAsserted(() -> assertThat(BROKER.admin().topics().getStats(topic)
                    .getSubscriptions().get("sub").getMsgBacklog()).as("m-0, m-1 unacknowledged").isEqualTo(2));
            consumer.redeliverUnacknowledgedMessages();
            List<Message<String>> again = receive(consumer, 2);
            assertThat(values(again)).containsExactlyInAnyOrder("m-0", "m-1");
            assertThat(consumer.receive(500, TimeUnit.MILLISECONDS)).as("committed acks are not redelivered").isNull();
            for (Message<String> m : again) {
                consumer.acknowledge(m);
            }
            await().atMost(BROKER_WAIT).untilAsserted(() -> assertThat(BROKER.admin().topics().getStats(topic)
                    .getSubscriptions().get("sub").getMsgBacklog()).isZero());
        }
    }

    @Test
    void transactionLog_isAStockLedger_userTopicAndPendingAckStoreAreTheBrokersStorage() throws Exception {
        String topic = SharedBroker.uniqueTopic("txn-ledgers");
        try (Consumer<String> consumer = subscribe(client, topic, "sub");
             Producer<String> producer = producer(client, topic)) {
            Transaction txn = newTransaction(client, Duration.ofMinutes(5));
            send(producer, txn, "t-0");
            txn.commit().get(30, TimeUnit.SECONDS);
            Message<String> m = receive(consumer, 1).get(0);
            Transaction ack = newTransaction(client, Duration.ofMinutes(5));
            consumer.acknowledgeAsync(m.getMessageId(), ack).get(30, TimeUnit.SECONDS);
            ack.commit().get(30, TimeUnit.SECONDS);
        }

        TransactionCoordinatorInternalStats coordinator = BROKER.admin().transactions()
                .getCoordinatorInternalStats(0, false);
        assertThat(coordinator.transactionLogStats.managedLedgerName)
                .isEqualTo("pulsar/system/persistent/__transaction_log_0");
        assertThat(coordinator.transactionLogStats.managedLedgerInternalStats.ledgers).isNotEmpty()
                .allSatisfy(l -> assertThat(l.ledgerId).as("a BookKeeper ledger").isLessThan(FIRST_VIRTUAL_LEDGER_ID));
        Map<String, ManagedLedger> open = BROKER.broker().pulsarService().getDefaultManagedLedgerFactory()
                .getManagedLedgers();
        assertThat(open.get("pulsar/system/persistent/__transaction_log_0")).isInstanceOf(ManagedLedgerImpl.class);

        ManagedLedgerInternalStats user = BROKER.admin().topics().getInternalStats(topic);
        String pendingAckLedger = TopicName.get(MLPendingAckStore.getTransactionPendingAckStoreSuffix(topic, "sub"))
                .getPersistenceNamingEncoding();
        assertThat(open).containsKey(pendingAckLedger);
        if (BROKER.broker().storage() == StorageMode.NEREUS) {
            assertThat(user.ledgers).singleElement().satisfies(l -> assertThat(l.ledgerId)
                    .isGreaterThanOrEqualTo(FIRST_VIRTUAL_LEDGER_ID));
            assertThat(open.get(pendingAckLedger)).isNotInstanceOf(ManagedLedgerImpl.class);
            assertThat(open.get(pendingAckLedger).getLastConfirmedEntry().getLedgerId())
                    .isGreaterThanOrEqualTo(FIRST_VIRTUAL_LEDGER_ID);
        } else {
            assertThat(user.ledgers).allSatisfy(l -> assertThat(l.ledgerId).isLessThan(FIRST_VIRTUAL_LEDGER_ID));
            assertThat(open.get(pendingAckLedger)).isInstanceOf(ManagedLedgerImpl.class);
        }

        // Prometheus: the broker casts the stats of the pending-ack store and the transaction log to its MBean class
        HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create(BROKER.broker().webServiceUrl() + "/metrics/")).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.statusCode()).isEqualTo(200);
        List<String> storageLines = metrics.body().lines().filter(l -> l.startsWith("pulsar_storage_size{")).toList();
        assertThat(storageLines).as("the pending-ack store's storage").anyMatch(l -> l.contains("topic=\"" + topic
                + "\"") && l.contains("subscription=\"sub\""));
        assertThat(storageLines).as("the transaction log's storage").anyMatch(l -> l.contains(
                "topic=\"__transaction_log_0\""));
    }
}
