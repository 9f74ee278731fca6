package io.nereus.it.bench;

import io.nereus.it.SharedBroker;
import io.nereus.it.StandaloneBroker;
import io.nereus.it.StorageMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Catch-up read of a backlog, Nereus beside stock in one run, alternating which goes first each round. Each round
 * and storage: a fresh broker; {@code bench.topics} topics written together (round robin, batching on, 1,000 sends
 * pending at most), {@code bench.messages} messages each; on Nereus the first topic is then offloaded through the
 * admin trigger (materialized into objects) and waits for the offload to succeed; the broker is restarted (cold
 * caches for both) and a new subscription reads the first topic from earliest. Nereus runs with its background
 * materializer off, so the read competes with nothing. Tagged {@code benchmark}, run on demand:
 * <pre>
 * mvn -B -pl pulsar-it -am verify -Dnereus.it.excludedGroups= -Dgroups=benchmark -Dtest=CatchUpBenchmark \
 *     -Dbench.rounds=3 -Dbench.messages=200000 -Dbench.topics=1
 * </pre>
 * {@code -Dbench.offload=false} skips the offload, so Nereus reads the backlog from its WAL (generation 0): the
 * baseline the objects are measured against. Nothing is asserted on time; the run prints a table.
 */
@Tag("benchmark")
class CatchUpBenchmark {
    private record Result(StorageMode mode, double produceSeconds, double offloadSeconds, double catchUpPerSec) {
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.MINUTES)
    void catchUp_nereusFromObjects_besideStock() throws Exception {
        int rounds = Integer.getInteger("bench.rounds", 3);
        int messages = Integer.getInteger("bench.messages", 200_000);
        int topics = Integer.getInteger("bench.topics", 1);
        int size = Integer.getInteger("bench.size", 1024);
        List<Result> results = BenchRounds.alternate(rounds, false,
                (mode, round) -> runOnce(mode, messages, topics, size, round));
        print(results, rounds, messages, topics, size);
    }

    private static Result runOnce(StorageMode mode, int messages, int topics, int size, int round) throws Exception {
        byte[] payload = new byte[size];
        Arrays.fill(payload, (byte) 'x');
        try (StandaloneBroker broker = StandaloneBroker.start("catchup-" + mode.name().toLowerCase(Locale.ROOT) + "-"
                + round, conf -> conf.getProperties().setProperty("nereusMaterializerEnabled", "false"))) {
            List<String> names = new ArrayList<>();
            for (int t = 0; t < topics; t++) {
                names.add(SharedBroker.uniqueTopic("catchup-" + t));
            }
            String measured = names.get(0);
            PulsarClient client = broker.newClient();
            long start = System.nanoTime();
            MessageId last = produce(client, names, payload, messages);
            double produceSeconds = seconds(start);
            client.close();

            double offloadSeconds = 0;
            if (mode == StorageMode.NEREUS && Boolean.parseBoolean(System.getProperty("bench.offload", "true"))) {
                PulsarAdmin admin = broker.newAdmin();
                long offloadStart = System.nanoTime();
                admin.topics().triggerOffload(measured, last);
                long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
                LongRunningProcessStatus.Status status;
                while ((status = admin.topics().offloadStatus(measured).getStatus())
                        == LongRunningProcessStatus.Status.RUNNING && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                if (status != LongRunningProcessStatus.Status.SUCCESS) {
                    throw new IllegalStateException("offload of " + measured + " ended " + status + ": "
                            + admin.topics().offloadStatus(measured).getLastError());
                }
                offloadSeconds = seconds(offloadStart);
            }

            broker.restart();

            try (PulsarClient after = broker.newClient();
                 Consumer<byte[]> consumer = after.newConsumer(Schema.BYTES).topic(measured)
                         .subscriptionName("catch-up").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                         .receiverQueueSize(5000).subscribe()) {
                long readStart = System.nanoTime();
                for (int i = 0; i < messages; i++) {
                    Message<byte[]> m = consumer.receive(30, TimeUnit.SECONDS);
                    if (m == null) {
                        throw new IllegalStateException(mode + ": message " + i + " of " + messages + " not received");
                    }
                    consumer.acknowledgeAsync(m);
                }
                return new Result(mode, produceSeconds, offloadSeconds, messages / seconds(readStart));
            }
        }
    }

    /** Sends {@code messages} to each topic, round robin; returns the id of the first topic's last message. */
    private static MessageId produce(PulsarClient client, List<String> topics, byte[] payload, int messages)
            throws Exception {
        List<Producer<byte[]>> producers = new ArrayList<>();
        for (String t : topics) {
            producers.add(client.newProducer(Schema.BYTES).topic(t).maxPendingMessages(1000).blockIfQueueFull(true)
                    .create());
        }
        Semaphore window = new Semaphore(1000);
        List<CompletableFuture<MessageId>> firstTopic = new ArrayList<>(messages);
        List<CompletableFuture<?>> all = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            for (int t = 0; t < producers.size(); t++) {
                window.acquire();
                CompletableFuture<MessageId> f = producers.get(t).sendAsync(payload);
                f.whenComplete((id, error) -> window.release());
                if (t == 0) {
                    firstTopic.add(f);
                } else {
                    all.add(f);
                }
            }
        }
        all.addAll(firstTopic);
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.MINUTES);
        for (Producer<byte[]> p : producers) {
            p.close();
        }
        return firstTopic.get(firstTopic.size() - 1).get();
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private static void print(List<Result> results, int rounds, int messages, int topics, int size) {
        System.out.printf(Locale.ROOT, "%nCatchUpBenchmark: %d rounds, %d topics written together, %d messages of %d"
                + " bytes each; one topic read from earliest after a restart; Nereus offloaded first: %s%n", rounds,
                topics, messages, size, System.getProperty("bench.offload", "true"));
        System.out.println("| round | storage | produce s | offload s | catch-up msg/s |");
        System.out.println("|---|---|---|---|---|");
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            System.out.printf(Locale.ROOT, "| %d | %s | %.1f | %.1f | %.0f |%n", i / 2,
                    r.mode().name().toLowerCase(Locale.ROOT), r.produceSeconds(), r.offloadSeconds(),
                    r.catchUpPerSec());
        }
        System.out.println("| round | nereus/stock catch-up |");
        System.out.println("|---|---|");
        for (int i = 0; i + 1 < results.size(); i += 2) {
            Result a = results.get(i);
            Result b = results.get(i + 1);
            Result nereus = a.mode() == StorageMode.NEREUS ? a : b;
            Result stock = a.mode() == StorageMode.NEREUS ? b : a;
            System.out.printf(Locale.ROOT, "| %d | %.2f |%n", i / 2, nereus.catchUpPerSec() / stock.catchUpPerSec());
        }
    }
}
