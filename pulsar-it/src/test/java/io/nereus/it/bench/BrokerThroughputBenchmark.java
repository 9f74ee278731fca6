package io.nereus.it.bench;

import io.nereus.it.SharedBroker;
import io.nereus.it.StandaloneBroker;
import io.nereus.it.StorageMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Produce and consume throughput of a real in-process standalone broker on Nereus beside the same broker on stock
 * BookKeeper storage, in one run, alternating which goes first each round (the machines are shared and noisy, so
 * the figures that matter are the ratios within a round). Not part of the test command: it is tagged
 * {@code benchmark}, which surefire excludes unless asked:
 * <pre>
 * mvn -B -pl pulsar-it -am verify -Dnereus.it.excludedGroups= -Dgroups=benchmark
 * </pre>
 * System properties: {@code bench.rounds} (default 3), {@code bench.messages} (default 50,000),
 * {@code bench.size} (payload bytes, default 1,024), {@code bench.nereusOnly} (profiling aid: runs Nereus only). Each round and storage: a fresh broker; one producer sends
 * the messages async with at most 1,000 pending, with batching (the client default) and then, on another topic,
 * without (one entry per message, 1/5 of the messages); then a consumer that subscribed before the first send reads
 * the batched topic back. Nothing is asserted on time; the run prints a table.
 */
@Tag("benchmark")
class BrokerThroughputBenchmark {
    private record Result(StorageMode mode, double batchedSendPerSec, double p99Millis, double unbatchedSendPerSec,
            double unbatchedP99Millis, double consumePerSec) {
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.MINUTES)
    void produceAndConsume_nereusBesideStock() throws Exception {
        int rounds = Integer.getInteger("bench.rounds", 3);
        int messages = Integer.getInteger("bench.messages", 50_000);
        int size = Integer.getInteger("bench.size", 1024);
        List<Result> results = BenchRounds.alternate(rounds, Boolean.getBoolean("bench.nereusOnly"),
                (mode, round) -> runOnce(mode, messages, size, round));
        print(results, rounds, messages, size);
    }

    private static Result runOnce(StorageMode mode, int messages, int size, int round) throws Exception {
        byte[] payload = new byte[size];
        Arrays.fill(payload, (byte) 'x');
        try (StandaloneBroker broker = StandaloneBroker.start("bench-" + mode.name().toLowerCase(Locale.ROOT) + "-"
                + round); PulsarClient client = broker.newClient()) {
            String batched = SharedBroker.uniqueTopic("bench-batched");
            String unbatched = SharedBroker.uniqueTopic("bench-unbatched");
            try (Consumer<byte[]> consumer = client.newConsumer(Schema.BYTES).topic(batched).subscriptionName("s")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest).receiverQueueSize(5000)
                    .subscribe()) {
                double[] b;
                double[] u;
                try (Producer<byte[]> p = client.newProducer(Schema.BYTES).topic(batched).maxPendingMessages(1000)
                        .blockIfQueueFull(true).create()) {
                    send(p, payload, Math.min(2000, messages)); // warm-up
                    b = send(p, payload, messages);
                }
                try (Producer<byte[]> p = client.newProducer(Schema.BYTES).topic(unbatched).enableBatching(false)
                        .maxPendingMessages(1000).blockIfQueueFull(true).create()) {
                    u = send(p, payload, Math.max(1, messages / 5));
                }
                int total = Math.min(2000, messages) + messages;
                long start = System.nanoTime();
                for (int i = 0; i < total; i++) {
                    Message<byte[]> m = consumer.receive(30, TimeUnit.SECONDS);
                    if (m == null) {
                        throw new IllegalStateException(mode + ": message " + i + " of " + total + " not received");
                    }
                    consumer.acknowledgeAsync(m);
                }
                double consume = total / seconds(start);
                return new Result(mode, b[0], b[1], u[0], u[1], consume);
            }
        }
    }

    /** Sends {@code n} messages async (bounded by the producer's pending limit); returns {msgs/s, p99 ms}. */
    private static double[] send(Producer<byte[]> producer, byte[] payload, int n) throws Exception {
        long[] latencies = new long[n];
        Semaphore window = new Semaphore(1000);
        List<CompletableFuture<?>> all = new ArrayList<>(n);
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            window.acquire();
            long sent = System.nanoTime();
            int index = i;
            all.add(producer.sendAsync(payload).whenComplete((id, t) -> {
                latencies[index] = System.nanoTime() - sent;
                window.release();
            }));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
        double rate = n / seconds(start);
        Arrays.sort(latencies);
        return new double[] {rate, latencies[(int) Math.min(n - 1, Math.ceil(n * 0.99) - 1)] / 1e6};
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private static void print(List<Result> results, int rounds, int messages, int size) {
        System.out.printf(Locale.ROOT, "%nBrokerThroughputBenchmark: %d rounds, %d messages of %d bytes%n", rounds,
                messages, size);
        System.out.println("| round | storage | batched send msg/s | batched p99 ms | unbatched send msg/s"
                + " | unbatched p99 ms | consume msg/s |");
        System.out.println("|---|---|---|---|---|---|---|");
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            System.out.printf(Locale.ROOT, "| %d | %s | %.0f | %.1f | %.0f | %.1f | %.0f |%n", i / 2,
                    r.mode().name().toLowerCase(Locale.ROOT), r.batchedSendPerSec(), r.p99Millis(),
                    r.unbatchedSendPerSec(), r.unbatchedP99Millis(), r.consumePerSec());
        }
        System.out.println("| round | nereus/stock batched send | unbatched send | consume |");
        System.out.println("|---|---|---|---|");
        for (int i = 0; i + 1 < results.size(); i += 2) {
            Result a = results.get(i);
            Result b = results.get(i + 1);
            Result nereus = a.mode() == StorageMode.NEREUS ? a : b;
            Result stock = a.mode() == StorageMode.NEREUS ? b : a;
            System.out.printf(Locale.ROOT, "| %d | %.2f | %.2f | %.2f |%n", i / 2,
                    nereus.batchedSendPerSec() / stock.batchedSendPerSec(),
                    nereus.unbatchedSendPerSec() / stock.unbatchedSendPerSec(),
                    nereus.consumePerSec() / stock.consumePerSec());
        }
    }
}
