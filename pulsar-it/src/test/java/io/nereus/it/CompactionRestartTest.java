package io.nereus.it;

import static io.nereus.it.CompactionTest.awaitCompactedViewLoaded;
import static io.nereus.it.CompactionTest.byKey;
import static io.nereus.it.CompactionTest.compact;
import static io.nereus.it.CompactionTest.expected;
import static io.nereus.it.CompactionTest.producer;
import static io.nereus.it.CompactionTest.readAll;
import static io.nereus.it.CompactionTest.sendRounds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.Test;

/**
 * The compaction horizon across a topic unload and a broker restart: the compacted view a restarted or reloaded
 * topic serves is the one published before, also (on Nereus) with the compacted offsets trimmed from the topic, and the next
 * compaction moves on from it. Owns its broker (restarts it).
 */
class CompactionRestartTest {
    private static final Duration COMPACTION_WAIT = Duration.ofSeconds(60);

    @Test
    void unloadAndRestart_betweenCompactions_theHorizonNeverGoesBack() throws Exception {
        String topic = "persistent://public/default/compact-restart";
        try (StandaloneBroker broker = StandaloneBroker.start("CompactionTest-restart",
                CompactionTest::segmentsOfTen)) {
            PulsarClient client = broker.newClient();
            broker.newAdmin().topics().createNonPartitionedTopic(topic);
            broker.newAdmin().topics().createSubscription(topic, CompactionTest.HOLD, MessageId.earliest);
            try (Producer<String> p = producer(client, topic, false)) {
                sendRounds(p, 6, 0, 4);
            }
            compact(broker.newAdmin(), topic);
            broker.newAdmin().topics().deleteSubscription(topic, CompactionTest.HOLD);
            if (StorageMode.current() == StorageMode.NEREUS) {
                // the compacted offsets leave the topic: from now on only the compacted view holds them
                PulsarClient trimmer = client;
                await().atMost(COMPACTION_WAIT).until(() -> {
                    broker.newAdmin().topics().trimTopic(topic);
                    return readAll(trimmer, topic, false).size() < 24;
                });
            }
            broker.newAdmin().topics().unload(topic);
            awaitCompactedViewLoaded(broker.newAdmin(), topic);
            assertThat(byKey(readAll(client, topic, true))).as("after an unload")
                    .containsExactlyInAnyOrderEntriesOf(expected(6, "r3-"));

            broker.restart();
            PulsarClient after = broker.newClient();
            awaitCompactedViewLoaded(broker.newAdmin(), topic);
            assertThat(byKey(readAll(after, topic, true))).as("after a restart")
                    .containsExactlyInAnyOrderEntriesOf(expected(6, "r3-"));
            try (Producer<String> p = producer(after, topic, false)) {
                p.newMessage().key("k0").value("new-0").send();
                p.newMessage().key("k9").value("new-9").send();
            }
            compact(broker.newAdmin(), topic);
            broker.newAdmin().topics().unload(topic);
            awaitCompactedViewLoaded(broker.newAdmin(), topic);
            Map<String, String> want = expected(6, "r3-");
            want.put("k0", "new-0");
            want.put("k9", "new-9");
            assertThat(byKey(readAll(after, topic, true))).as("second compaction, after an unload")
                    .containsExactlyInAnyOrderEntriesOf(want);
        }
    }
}
