package io.nereus.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Space given back through a real broker: a deleted topic's data leaves BookKeeper (and, on Nereus, the object
 * store), while the name is reused at once and another topic's data stays readable. Runs on either storage
 * ({@code -Dnereus.it.storage=bookkeeper} checks the test on stock).
 */
@Timeout(300)
class SpaceReclaimTest {
    private static final Duration WAIT = Duration.ofSeconds(90);

    private static void produce(PulsarClient client, String topic, String prefix, int count) throws Exception {
        // raw bytes: a schema would be kept in a ledger of its own, which outlives the topic on purpose
        try (Producer<byte[]> p = client.newProducer(Schema.BYTES).topic(topic).enableBatching(false).create()) {
            for (int i = 0; i < count; i++) {
                p.sendAsync((prefix + i + "-" + "z".repeat(200)).getBytes(StandardCharsets.UTF_8));
            }
            p.flush();
        }
    }

    private static List<String> readAll(PulsarClient client, String topic, int count) throws Exception {
        try (Consumer<byte[]> c = client.newConsumer(Schema.BYTES).topic(topic).subscriptionName("check")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).subscribe()) {
            List<String> out = new java.util.ArrayList<>();
            for (int i = 0; i < count; i++) {
                Message<byte[]> m = c.receive(30, TimeUnit.SECONDS);
                assertThat(m).as("message %s of %s", i, topic).isNotNull();
                out.add(new String(m.getValue(), StandardCharsets.UTF_8));
                c.acknowledge(m);
            }
            return out;
        }
    }

    /** The stream-id directories of the object store that hold at least one object. */
    private static Set<String> objectStreams(Path objects) {
        Path streams = objects.resolve("streams");
        Set<String> out = new TreeSet<>();
        if (!Files.isDirectory(streams)) {
            return out;
        }
        try (Stream<Path> all = Files.walk(streams)) {
            all.filter(Files::isRegularFile).filter(f -> !f.getFileName().toString().startsWith("."))
                    .forEach(f -> out.add(streams.relativize(f).getName(0).toString()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    @Test
    void deletedAndRecreatedTopic_oldDataIsGoneFromBookKeeperAndTheObjectStore() throws Exception {
        boolean nereus = StorageMode.current() == StorageMode.NEREUS;
        String gone = "persistent://public/default/reclaim-gone";
        String kept = "persistent://public/default/reclaim-kept";
        try (StandaloneBroker broker = StandaloneBroker.start("SpaceReclaimTest", conf -> {
            conf.getProperties().setProperty("nereusWalSliceMaxAgeSeconds", "2");
            conf.getProperties().setProperty("nereusWalWriterLeaseSeconds", "3");
            conf.getProperties().setProperty("nereusMaterializerIntervalSeconds", "1");
            conf.getProperties().setProperty("nereusCollectorIntervalSeconds", "1");
            conf.getProperties().setProperty("nereusWalDeleteGraceSeconds", "0");
            conf.getProperties().setProperty("nereusObjectDeleteGraceSeconds", "10");
        })) {
            PulsarClient client = broker.newClient();
            PulsarAdmin admin = broker.newAdmin();
            // the namespace's first topic brings its system topic and that topic's schema, with ledgers of their own
            produce(client, kept, "kept-", 1);
            Thread.sleep(3000);
            Set<String> keptStream = new TreeSet<>();
            if (nereus) {
                await().atMost(WAIT).until(() -> !objectStreams(broker.objectStoreDir()).isEmpty());
                keptStream.addAll(objectStreams(broker.objectStoreDir()));
            }
            Set<Long> before = broker.ledgers();
            produce(client, gone, "old-", 3000);
            Set<Long> written = broker.ledgers();
            written.removeAll(before);
            assertThat(written).as("ledgers holding the topic's data").isNotEmpty();
            Set<String> goneStream = new TreeSet<>();
            if (nereus) {
                // the topic is materialized into objects by the thresholds alone
                await().atMost(WAIT).until(() -> objectStreams(broker.objectStoreDir()).size() > keptStream.size());
                goneStream.addAll(objectStreams(broker.objectStoreDir()));
                goneStream.removeAll(keptStream);
            }
            produce(client, kept, "more-", 2000);

            admin.topics().delete(gone, true);
            produce(client, gone, "new-", 10);

            await().atMost(WAIT).untilAsserted(() -> {
                Set<Long> now = broker.ledgers();
                assertThat(now).as("the deleted topic's ledgers").doesNotContainAnyElementsOf(written);
            });
            if (nereus) {
                await().atMost(WAIT).untilAsserted(() -> assertThat(objectStreams(broker.objectStoreDir()))
                        .as("objects of the deleted topic's stream").doesNotContainAnyElementsOf(goneStream)
                        .containsAll(keptStream));
            }
            List<String> keptRead = readAll(client, kept, 2001);
            assertThat(keptRead).first().isEqualTo("kept-0-" + "z".repeat(200));
            assertThat(keptRead).last().isEqualTo("more-1999-" + "z".repeat(200));
            List<String> recreated = readAll(client, gone, 10);
            assertThat(recreated).first().asString().startsWith("new-0-");
            assertThat(recreated).last().asString().startsWith("new-9-");
        }
    }

    /** The compacted objects (TOPIC_COMPACTED view, code 2) in the object store: stream id and object name. */
    private static Set<String> compactedObjects(Path objects) {
        Path streams = objects.resolve("streams");
        Set<String> out = new TreeSet<>();
        if (!Files.isDirectory(streams)) {
            return out;
        }
        try (Stream<Path> all = Files.walk(streams)) {
            all.filter(Files::isRegularFile).filter(f -> !f.getFileName().toString().startsWith("."))
                    .map(streams::relativize).filter(r -> r.getNameCount() == 3 && r.getName(1).toString().equals("2"))
                    .forEach(r -> out.add(r.toString()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * Deleting a compacted topic gives back its compacted view's space too: on Nereus the TOPIC_COMPACTED objects
     * leave the object store, on stock the compacted ledger leaves BookKeeper (the topic's deletion unsubscribes
     * {@code __compaction}, which deletes it).
     */
    @Test
    void deletedCompactedTopic_itsCompactedViewIsCollected() throws Exception {
        boolean nereus = StorageMode.current() == StorageMode.NEREUS;
        String topic = "persistent://public/default/reclaim-compacted";
        try (StandaloneBroker broker = StandaloneBroker.start("SpaceReclaimTest-compacted", conf -> {
            conf.getProperties().setProperty("nereusCollectorIntervalSeconds", "1");
            conf.getProperties().setProperty("nereusObjectDeleteGraceSeconds", "2");
        })) {
            PulsarClient client = broker.newClient();
            PulsarAdmin admin = broker.newAdmin();
            admin.topics().createNonPartitionedTopic(topic);
            admin.topics().createSubscription(topic, "hold", org.apache.pulsar.client.api.MessageId.earliest);
            try (Producer<byte[]> p = client.newProducer(Schema.BYTES).topic(topic).enableBatching(false).create()) {
                for (int i = 0; i < 200; i++) {
                    p.newMessage().key("k" + (i % 50)).value(("v" + i).getBytes(StandardCharsets.UTF_8)).sendAsync();
                }
                p.flush();
            }
            admin.topics().triggerCompaction(topic);
            await().atMost(WAIT).until(() -> admin.topics().compactionStatus(topic).status
                    == org.apache.pulsar.client.admin.LongRunningProcessStatus.Status.SUCCESS);
            long compactedLedger;
            Set<String> compacted = new TreeSet<>();
            if (nereus) {
                compactedLedger = -1;
                compacted.addAll(compactedObjects(broker.objectStoreDir()));
                assertThat(compacted).as("the compacted view's object").hasSize(1);
            } else {
                await().atMost(WAIT).until(() -> admin.topics().getInternalStats(topic).compactedLedger.ledgerId != -1);
                compactedLedger = admin.topics().getInternalStats(topic).compactedLedger.ledgerId;
                assertThat(broker.ledgers()).contains(compactedLedger);
            }

            admin.topics().delete(topic, true);

            if (nereus) {
                await().atMost(WAIT).untilAsserted(() -> assertThat(compactedObjects(broker.objectStoreDir()))
                        .as("compacted objects after the topic's deletion").doesNotContainAnyElementsOf(compacted));
            } else {
                await().atMost(WAIT).untilAsserted(() -> assertThat(broker.ledgers())
                        .as("ledgers after the topic's deletion").doesNotContain(compactedLedger));
            }
        }
    }
}
