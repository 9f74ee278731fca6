package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nereus.testing.RecordingLeakDetector;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The facade's reads through a real broker under Netty's leak detector at PARANOID ({@link RecordingLeakDetector},
 * installed by this module's pom): Pulsar's entries wrap the storage's buffers (retained slices of the tail cache's,
 * the WAL reader's and the object blocks' buffers), and every one must be released by the time the broker is closed.
 * The broker's tail cache is small, so most reads go to the WAL; an offload moves the topic into objects, which are
 * read back; compaction reads and serves the compacted view. Fails on any leak report naming Nereus code.
 */
class ReadLeakTest {
    private static final AtomicLong CANARIES = new AtomicLong();
    /** A stack frame of the plugin's code: io.nereus, not this test package. */
    private static final Pattern PLUGIN_FRAME = Pattern.compile("io\\.nereus\\.(?!it\\.)");
    private static ResourceLeakDetector.Level previous;

    @BeforeAll
    static void detector() {
        PooledByteBufAllocator.DEFAULT.directBuffer(1).release(); // Netty's buffer classes, and their detector, load
        assertThat(RecordingLeakDetector.installed()).as("run with -Dio.netty.customResourceLeakDetector="
                + RecordingLeakDetector.class.getName()).isTrue();
        previous = ResourceLeakDetector.getLevel();
    }

    @AfterAll
    static void restore() {
        ResourceLeakDetector.setLevel(previous);
    }

    private static String payload(int i) {
        return String.format("m-%06d-", i) + "p".repeat(i % 300);
    }

    @Test
    void deliveredReplayedPeekedOffloadedAndCompactedReads_leakNoBuffer() throws Exception {
        assumeTrue(StorageMode.current() == StorageMode.NEREUS, "the reads checked are the plugin's");
        String topic = "persistent://public/default/read-leaks";
        int count = 3_000;
        try (StandaloneBroker broker = StandaloneBroker.start("ReadLeakTest", conf ->
                conf.getProperties().setProperty("nereusTailCacheBytes", "65536"))) {
            // after the broker's BookKeeper clients and bookie were built: each sets the level to its own policy
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
            leaks(); // what the start left as garbage is not this test's
            RecordingLeakDetector.reports().clear();

            PulsarClient client = broker.newClient();
            PulsarAdmin admin = broker.newAdmin();
            client.newConsumer(Schema.STRING).topic(topic).subscriptionName("replay")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe().close();
            try (Consumer<String> tail = client.newConsumer(Schema.STRING).topic(topic).subscriptionName("tail")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe()) {
                List<MessageId> ids = produce(client, topic, count);
                receiveAll(tail, count);
                try (Consumer<String> replay = client.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName("replay").receiverQueueSize(50).subscribe()) {
                    receiveAll(replay, count); // the tail cache holds 64 KiB: this is read from the WAL
                }
                assertThat(admin.topics().peekMessages(topic, "replay", 5)).hasSize(0);
                assertThat(admin.topics().examineMessage(topic, "earliest", 1).getData()).isNotEmpty();

                admin.topics().triggerOffload(topic, ids.get(count - 1));
                await().atMost(Duration.ofSeconds(90)).until(() -> admin.topics().offloadStatus(topic).getStatus()
                        != LongRunningProcessStatus.Status.RUNNING);
                assertThat(admin.topics().offloadStatus(topic).getStatus())
                        .isEqualTo(LongRunningProcessStatus.Status.SUCCESS);
                try (Reader<String> fromObjects = client.newReader(Schema.STRING).topic(topic)
                        .startMessageId(MessageId.earliest).receiverQueueSize(100).create()) {
                    for (int i = 0; i < count - 1; i++) {
                        Message<String> m = fromObjects.readNext(30, TimeUnit.SECONDS);
                        assertThat(m).as("message %d", i).isNotNull();
                        assertThat(m.getValue()).isEqualTo(payload(i));
                    }
                }

                admin.topics().triggerCompaction(topic);
                await().atMost(Duration.ofSeconds(90)).until(() -> admin.topics().compactionStatus(topic).status
                        != LongRunningProcessStatus.Status.RUNNING);
                assertThat(admin.topics().compactionStatus(topic).status)
                        .isEqualTo(LongRunningProcessStatus.Status.SUCCESS);
                try (Consumer<String> compacted = client.newConsumer(Schema.STRING).topic(topic)
                        .subscriptionName("compacted").readCompacted(true)
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe()) {
                    Set<String> keys = new HashSet<>();
                    for (int i = 0; i < 10; i++) {
                        Message<String> m = compacted.receive(30, TimeUnit.SECONDS);
                        assertThat(m).isNotNull();
                        keys.add(m.getKey());
                        compacted.acknowledge(m);
                    }
                    assertThat(keys).hasSize(10);
                }
            }
            client.close();
            admin.close();
        }
        List<String> leaks = leaks();
        assertThat(leaks).as("leaks of Nereus code reported by Netty's detector").isEmpty();
    }

    /** Keyed messages (ten keys) in batches of at most ten. */
    private static List<MessageId> produce(PulsarClient client, String topic, int count) throws Exception {
        List<MessageId> ids = new ArrayList<>(count);
        try (Producer<String> producer = client.newProducer(Schema.STRING).topic(topic).enableBatching(true)
                .batchingMaxMessages(10).batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS).create()) {
            List<CompletableFuture<MessageId>> sent = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                sent.add(producer.newMessage().key("k" + (i % 10)).value(payload(i)).sendAsync());
            }
            producer.flush();
            for (CompletableFuture<MessageId> f : sent) {
                ids.add(f.get(60, TimeUnit.SECONDS));
            }
        }
        return ids;
    }

    private static void receiveAll(Consumer<String> consumer, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            Message<String> m = consumer.receive(30, TimeUnit.SECONDS);
            assertThat(m).as("message %d", i).isNotNull();
            assertThat(m.getValue()).isEqualTo(payload(i));
            consumer.acknowledge(m);
        }
    }

    /**
     * Collects garbage until a canary buffer leaked here is reported, then returns the reports naming Nereus code
     * outside this test package (Pulsar's, BookKeeper's and the client's own are not the plugin's, even when a
     * client buffer was made on a test thread).
     */
    private static List<String> leaks() {
        assertThat(ResourceLeakDetector.getLevel()).as("Netty's leak detection level")
                .isEqualTo(ResourceLeakDetector.Level.PARANOID);
        String canary = "nereus-leak-canary-" + CANARIES.incrementAndGet();
        leakCanary(canary);
        List<String> reports = RecordingLeakDetector.reports();
        await("the leak detector to report a canary buffer").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100)).until(() -> {
                    System.gc();
                    PooledByteBufAllocator.DEFAULT.directBuffer(1).release(); // a tracked allocation polls the reports
                    return reports.stream().anyMatch(r -> r.contains(canary));
                });
        return reports.stream().filter(r -> !r.contains("nereus-leak-canary-") && PLUGIN_FRAME.matcher(r).find())
                .toList();
    }

    private static void leakCanary(String hint) {
        ByteBuf canary = PooledByteBufAllocator.DEFAULT.directBuffer(8);
        canary.touch(hint);
    }
}
