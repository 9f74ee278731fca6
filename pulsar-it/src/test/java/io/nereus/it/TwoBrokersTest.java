package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.bookkeeper.mledger.AsyncCallbacks;
import org.apache.bookkeeper.mledger.ManagedLedger;
import org.apache.bookkeeper.mledger.ManagedLedgerConfig;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.Position;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.service.persistent.PersistentTopic;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.common.api.proto.MessageMetadata;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.protocol.Commands;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two brokers in one JVM sharing one metadata store, one bookie and (on Nereus) one embedded metadata engine: a topic
 * moves between them by bundle unload and by bundle split while a producer sends and a consumer acknowledges; a
 * broker that still holds the topic's ledger after the other one opened it for writing is fenced (its late append
 * fails and never becomes visible); at the end every message the producer saw acknowledged is stored once, in order,
 * was consumed, and the subscription's backlog is empty. (Acknowledgement receipts are off: with them on, on stock
 * storage as on Nereus, acknowledgements sent to the last owner went unanswered and the consumer stalled.)
 */
class TwoBrokersTest {
    private static final String NAMESPACE = "public/default";
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int PER_STEP = 50;

    /**
     * Deduplication: a producer resending after an ownership change must not store a message twice. Bundles are
     * placed and moved by the Extensible Load Manager, whose transfers go to the broker the unload names (Pulsar
     * 4.0.8's modular load manager keeps such a destination only on its leader).
     */
    private static void settings(ServiceConfiguration conf) {
        conf.setBrokerDeduplicationEnabled(true);
        ExtensibleLoadManagerTest.extensibleLoadManager(conf);
        // Topic policies live in a __change_events topic per namespace bundle, read by the broker that loads a topic
        // from whichever broker owns that bundle; they are not what this test is about.
        conf.setTopicLevelPoliciesEnabled(false);
        // Two brokers, a bookie and ZooKeeper on two cores: a ZooKeeper session must survive a stall of several seconds.
        conf.setMetadataStoreSessionTimeoutMillis(120_000);
        if (StorageMode.current() == StorageMode.NEREUS) {
            // Each broker's filesystem object store is its own, so objects one broker materialized would be missing
            // on the other; with objects in a shared store (S3) the materializer stays on.
            conf.getProperties().setProperty("nereusMaterializerEnabled", "false");
        }
    }

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void topicMovesByUnloadAndSplit_oldOwnerIsFenced_everyAcknowledgedMessageConsumedOnce() throws Exception {
        try (StandaloneBroker first = StandaloneBroker.startWithZooKeeper("TwoBrokersTest", TwoBrokersTest::settings);
             SecondBroker second = SecondBroker.start(first, "second", TwoBrokersTest::settings)) {
            PulsarAdmin admin = first.newAdmin();
            await().atMost(WAIT).untilAsserted(() ->
                    assertThat(admin.brokers().getActiveBrokers()).containsExactlyInAnyOrder(
                            first.pulsarService().getBrokerId(), second.brokerId()));
            List<PulsarService> brokers = List.of(first.pulsarService(), second.pulsarService());
            String topic = "persistent://" + NAMESPACE + "/two-brokers";
            PulsarClient client = first.newClient();

            try (Traffic traffic = new Traffic(client, topic)) {
                traffic.awaitAcknowledged(PER_STEP);

                PulsarService owner = owner(admin, topic, brokers);
                moveTo(admin, topic, other(owner, brokers), brokers);
                traffic.awaitAcknowledged(traffic.acknowledged() + PER_STEP);

                String bundle = admin.lookups().getBundleRange(topic);
                admin.namespaces().splitNamespaceBundle(NAMESPACE, bundle, true, null);
                await().atMost(WAIT).untilAsserted(() ->
                        assertThat(admin.lookups().getBundleRange(topic)).isNotEqualTo(bundle));
                traffic.awaitAcknowledged(traffic.acknowledged() + PER_STEP);
                moveTo(admin, topic, other(owner(admin, topic, brokers), brokers), brokers);
                traffic.awaitAcknowledged(traffic.acknowledged() + PER_STEP);

                traffic.pause();
                lateAppendOfAnOldOwner_failsAndStaysInvisible(topic, owner(admin, topic, brokers),
                        other(owner(admin, topic, brokers), brokers));
                traffic.resume();
                traffic.awaitAcknowledged(traffic.acknowledged() + PER_STEP);

                moveTo(admin, topic, other(owner(admin, topic, brokers), brokers), brokers);
                traffic.awaitAcknowledged(traffic.acknowledged() + PER_STEP);
                traffic.stopProducing();
                traffic.awaitConsumedEverythingAcknowledged();
                await().atMost(WAIT).untilAsserted(() -> assertThat(admin.topics().getStats(topic).getSubscriptions()
                        .get("two-brokers").getMsgBacklog()).as("every message acknowledged, durably").isZero());

                try (Reader<String> reader = client.newReader(Schema.STRING).topic(topic)
                        .startMessageId(MessageId.earliest).create()) {
                    List<String> stored = new ArrayList<>();
                    while (reader.hasMessageAvailable()) {
                        Message<String> m = reader.readNext(Messages.RECEIVE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                        assertThat(m).as("message after %s", stored.size()).isNotNull();
                        stored.add(m.getValue());
                    }
                    assertThat(stored).as("the topic holds every acknowledged message once, in order, and nothing"
                            + " else").containsExactlyElementsOf(traffic.acknowledgedValues());
                }
            }
        }
    }

    /**
     * {@code oldOwner} keeps the topic's ledger as a broker would that has not yet noticed it lost the topic, while
     * {@code newOwner}'s storage opens the same ledger for writing. The old ledger's next append must fail, and the
     * new owner must not see it.
     */
    private static void lateAppendOfAnOldOwner_failsAndStaysInvisible(String topic, PulsarService oldOwner,
            PulsarService newOwner) throws Exception {
        PersistentTopic served = (PersistentTopic) oldOwner.getBrokerService().getTopicReference(topic).orElseThrow();
        ManagedLedger old = served.getManagedLedger();
        ManagedLedgerConfig config = new ManagedLedgerConfig().setEnsembleSize(1).setWriteQuorumSize(1)
                .setAckQuorumSize(1);
        ManagedLedger taken = newOwner.getDefaultManagedLedgerFactory()
                .open(TopicName.get(topic).getPersistenceNamingEncoding(), config);
        try {
            Position lastBefore = taken.getLastConfirmedEntry();
            CompletableFuture<Position> late = new CompletableFuture<>();
            old.asyncAddEntry(lateMessage(), new AsyncCallbacks.AddEntryCallback() {
                @Override
                public void addComplete(Position position, ByteBuf entryData, Object ctx) {
                    late.complete(position);
                }

                @Override
                public void addFailed(ManagedLedgerException exception, Object ctx) {
                    late.completeExceptionally(exception);
                }
            }, null);
            Throwable failure = null;
            try {
                late.get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                failure = e.getCause();
            }
            assertThat(failure).as("the old owner's late append fails")
                    .isInstanceOf(ManagedLedgerException.ManagedLedgerFencedException.class);
            assertThat(taken.getLastConfirmedEntry()).as("nothing of it reached the new owner's ledger")
                    .isEqualTo(lastBefore);
        } finally {
            taken.close();
        }
    }

    private static ByteBuf lateMessage() {
        MessageMetadata metadata = new MessageMetadata().setProducerName("old-owner").setSequenceId(0)
                .setPublishTime(System.currentTimeMillis());
        return Commands.serializeMetadataAndPayload(Commands.ChecksumType.Crc32c, metadata,
                Unpooled.wrappedBuffer("late-from-old-owner".getBytes(StandardCharsets.UTF_8)));
    }

    private static void moveTo(PulsarAdmin admin, String topic, PulsarService target, List<PulsarService> brokers)
            throws Exception {
        admin.namespaces().unloadNamespaceBundle(NAMESPACE, admin.lookups().getBundleRange(topic),
                target.getBrokerId());
        await().atMost(WAIT).untilAsserted(() -> assertThat(owner(admin, topic, brokers)).isSameAs(target));
    }

    private static PulsarService owner(PulsarAdmin admin, String topic, List<PulsarService> brokers)
            throws Exception {
        String url = admin.lookups().lookupTopic(topic);
        return brokers.stream().filter(b -> url.equals(b.getBrokerServiceUrl())).findFirst()
                .orElseThrow(() -> new AssertionError("no broker serves " + url));
    }

    private static PulsarService other(PulsarService broker, List<PulsarService> brokers) {
        return brokers.get(0) == broker ? brokers.get(1) : brokers.get(0);
    }

    /**
     * A producer sending {@code m-0, m-1, ...} one at a time (each resent by the client until the broker acknowledges
     * it) and a consumer acknowledging each message, on threads of their own.
     */
    private static final class Traffic implements AutoCloseable {
        private final Producer<String> producer;
        private final Consumer<String> consumer;
        private final ExecutorService threads = Executors.newFixedThreadPool(2);
        private final List<String> acknowledged = new CopyOnWriteArrayList<>();
        private final Set<String> consumedAndAcked = ConcurrentHashMap.newKeySet();
        private final Semaphore sending = new Semaphore(1);
        private final AtomicBoolean producing = new AtomicBoolean(true);
        private final AtomicBoolean consuming = new AtomicBoolean(true);
        private final Future<?> producerLoop;
        private final Future<?> consumerLoop;

        Traffic(PulsarClient client, String topic) throws Exception {
            consumer = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("two-brokers")
                    .subscriptionType(SubscriptionType.Exclusive)
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe();
            producer = client.newProducer(Schema.STRING).topic(topic).producerName("two-brokers")
                    .enableBatching(false).sendTimeout(0, TimeUnit.SECONDS).create();
            producerLoop = threads.submit(this::produce);
            consumerLoop = threads.submit(this::consume);
        }

        private Void produce() throws Exception {
            for (int i = 0; producing.get(); i++) {
                sending.acquire();
                try {
                    producer.newMessage().sequenceId(i).value("m-" + i).send();
                    acknowledged.add("m-" + i);
                } finally {
                    sending.release();
                }
            }
            return null;
        }

        private Void consume() throws Exception {
            while (consuming.get()) {
                Message<String> m = consumer.receive(200, TimeUnit.MILLISECONDS);
                if (m == null) {
                    continue;
                }
                consumer.acknowledge(m);
                consumedAndAcked.add(m.getValue());
            }
            return null;
        }

        int acknowledged() {
            return acknowledged.size();
        }

        List<String> acknowledgedValues() {
            return Collections.unmodifiableList(new ArrayList<>(acknowledged));
        }

        void awaitAcknowledged(int count) {
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(producerLoop).as("the producer loop is running").isNotDone();
                assertThat(acknowledged.size()).isGreaterThanOrEqualTo(count);
            });
        }

        /** Waits for the message being sent to be acknowledged and keeps the producer from sending another. */
        void pause() throws InterruptedException {
            assertThat(sending.tryAcquire(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the send in flight completed")
                    .isTrue();
        }

        void resume() {
            sending.release();
        }

        void stopProducing() throws Exception {
            producing.set(false);
            producerLoop.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }

        void awaitConsumedEverythingAcknowledged() throws Exception {
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(consumerLoop).as("the consumer loop is running").isNotDone();
                assertThat(new HashSet<>(consumedAndAcked)).containsAll(acknowledged);
            });
            consuming.set(false);
            consumerLoop.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(consumedAndAcked).as("consumed only what the producer saw acknowledged")
                    .containsExactlyInAnyOrderElementsOf(acknowledged);
        }

        @Override
        public void close() throws Exception {
            producing.set(false);
            consuming.set(false);
            threads.shutdownNow();
            threads.awaitTermination(30, TimeUnit.SECONDS);
            producer.closeAsync();
            consumer.closeAsync();
        }
    }
}
