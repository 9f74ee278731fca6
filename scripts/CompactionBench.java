import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;

/**
 * The client side of the compaction scenario of scripts/bench-vs-stock, through the Pulsar 4.0.8 client and admin
 * API of the distribution: {@code java -cp "lib/*" CompactionBench.java <mode> <serviceUrl> <httpUrl> <topic>
 * <messages> <keys> <size>}. Message {@code i} has the key {@code key-(i mod keys)} and a payload of {@code size}
 * bytes starting with {@code i} (8 bytes, big-endian); the producer batches as Pulsar does by default. Each mode
 * prints {@code name=value} lines for the script.
 *
 * <ul>
 *   <li>{@code produce}: creates the topic and a subscription {@code hold} at the earliest message (so neither
 *       storage trims what the compaction has to read), then sends the messages, at most 10,000 in flight:
 *       {@code produce_s}, {@code produce_msg_per_s}.</li>
 *   <li>{@code compact}: {@code pulsar-admin topics compact} (the admin API's trigger), then polls
 *       {@code compaction-status} every 50 ms until SUCCESS (ERROR fails): {@code compact_start_ms} and
 *       {@code compact_end_ms} (epoch), {@code compaction_s}; then waits until the topic's internal stats show the
 *       compacted ledger (stock installs it after reporting SUCCESS): {@code installed_s}, from the trigger.</li>
 *   <li>{@code read <readers>}: that many {@code readCompacted} readers in turn, each from the earliest message to
 *       the last one: {@code read_msg_per_s} of each (the first is cold: the broker reads the compacted data for the
 *       first time), {@code read_count}; fails unless every reader read exactly {@code keys} messages, one per key,
 *       each the latest value of its key.</li>
 * </ul>
 */
public final class CompactionBench {
    public static void main(String[] args) throws Exception {
        if (args.length < 7) {
            System.err.println("usage: CompactionBench produce|compact|read <serviceUrl> <httpUrl> <topic> <messages>"
                    + " <keys> <size> [readers]");
            System.exit(2);
        }
        String mode = args[0];
        String topic = args[3];
        long messages = Long.parseLong(args[4]);
        int keys = Integer.parseInt(args[5]);
        int size = Integer.parseInt(args[6]);
        try (PulsarClient client = PulsarClient.builder().serviceUrl(args[1]).build();
                PulsarAdmin admin = PulsarAdmin.builder().serviceHttpUrl(args[2]).build()) {
            switch (mode) {
                case "produce" -> produce(client, admin, topic, messages, keys, size);
                case "compact" -> compact(admin, topic);
                case "read" -> read(client, topic, messages, keys, args.length > 7 ? Integer.parseInt(args[7]) : 1);
                default -> {
                    System.err.println("unknown mode " + mode);
                    System.exit(2);
                }
            }
        }
    }

    private static void produce(PulsarClient client, PulsarAdmin admin, String topic, long messages, int keys,
            int size) throws Exception {
        admin.topics().createNonPartitionedTopic(topic);
        admin.topics().createSubscription(topic, "hold", MessageId.earliest);
        Semaphore inFlight = new Semaphore(10_000);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        long start = System.nanoTime();
        try (Producer<byte[]> producer = client.newProducer(Schema.BYTES).topic(topic).enableBatching(true)
                .blockIfQueueFull(true).maxPendingMessages(10_000).sendTimeout(0, TimeUnit.SECONDS).create()) {
            for (long i = 0; i < messages && failed.get() == null; i++) {
                byte[] payload = new byte[size];
                ByteBuffer.wrap(payload).putLong(i);
                for (int b = 8; b < size; b++) {
                    payload[b] = (byte) ('a' + (i + b) % 26);
                }
                inFlight.acquire();
                producer.newMessage().key("key-" + (i % keys)).value(payload).sendAsync().whenComplete((id, t) -> {
                    if (t != null) {
                        failed.compareAndSet(null, t);
                    }
                    inFlight.release();
                });
            }
            producer.flush();
            inFlight.acquire(10_000);
        }
        if (failed.get() != null) {
            throw new IllegalStateException("a send failed", failed.get());
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("produce_s=%.1f%nproduce_msg_per_s=%.0f%n", seconds, messages / seconds);
    }

    private static void compact(PulsarAdmin admin, String topic) throws Exception {
        long startMs = System.currentTimeMillis();
        long start = System.nanoTime();
        admin.topics().triggerCompaction(topic);
        while (true) {
            LongRunningProcessStatus status = admin.topics().compactionStatus(topic);
            if (status.status == LongRunningProcessStatus.Status.SUCCESS) {
                break;
            }
            if (status.status == LongRunningProcessStatus.Status.ERROR) {
                throw new IllegalStateException("compaction failed: " + status.lastError);
            }
            Thread.sleep(50);
        }
        long end = System.nanoTime();
        long endMs = System.currentTimeMillis();
        while (true) {
            PersistentTopicInternalStats stats = admin.topics().getInternalStats(topic);
            if (stats.compactedLedger != null && stats.compactedLedger.ledgerId >= 0) {
                break;
            }
            Thread.sleep(50);
        }
        long installed = System.nanoTime();
        System.out.printf("compact_start_ms=%d%ncompact_end_ms=%d%ncompaction_s=%.2f%ninstalled_s=%.2f%n", startMs,
                endMs, (end - start) / 1e9, (installed - start) / 1e9);
    }

    private static void read(PulsarClient client, String topic, long messages, int keys, int readers)
            throws Exception {
        for (int r = 0; r < readers; r++) {
            Map<String, Long> latest = new HashMap<>();
            long count = 0;
            long start = System.nanoTime();
            try (Reader<byte[]> reader = client.newReader(Schema.BYTES).topic(topic).startMessageId(MessageId.earliest)
                    .readCompacted(true).receiverQueueSize(1000).create()) {
                while (reader.hasMessageAvailable()) {
                    Message<byte[]> m = reader.readNext(30, TimeUnit.SECONDS);
                    if (m == null) {
                        throw new IllegalStateException("no message within 30 s after " + count);
                    }
                    count++;
                    latest.put(m.getKey(), ByteBuffer.wrap(m.getValue()).getLong());
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long wrong = 0;
            for (int k = 0; k < keys; k++) {
                long expected = messages - 1 - ((messages - 1 - k) % keys);
                Long got = latest.get("key-" + k);
                if (got == null || got != expected) {
                    wrong++;
                }
            }
            System.out.printf("read_msg_per_s=%.0f%nread_count=%d%n", count / seconds, count);
            if (count != keys || latest.size() != keys || wrong != 0) {
                throw new IllegalStateException("reader " + r + " read " + count + " messages of " + latest.size()
                        + " keys, " + wrong + " keys without their latest value; expected " + keys);
            }
        }
    }
}
