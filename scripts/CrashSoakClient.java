import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * The client side of scripts/crash-soak: a producer of sequence-numbered messages that records every sequence
 * number the broker acknowledged, a consumer on a durable subscription that records what it receives and
 * acknowledges, and a checker that reads the topic. Run with the distribution's lib/ on the classpath:
 * {@code java -cp "lib/*" CrashSoakClient.java <mode> <serviceUrl> <topic> <dir> [args]}. Each message's payload
 * starts with its sequence number (8 bytes, big-endian), padded to the message size; sequence numbers start at 0
 * and each is sent once (the client may resend it after a reconnection, which makes a duplicate in the topic).
 *
 * <ul>
 *   <li>{@code produce <rate> <size>}: sends at {@code rate} msg/s until killed (SIGTERM closes it cleanly: every
 *       send completes or fails first), the client reconnecting across broker restarts with no send timeout, and
 *       appends each acknowledged sequence number to {@code dir/acked.log} (one decimal a line, flushed every
 *       100 ms and at exit).</li>
 *   <li>{@code consume <subscription>}: an Exclusive consumer, from the earliest message, acknowledging every
 *       message with ack receipts; appends each received message (sequence number and message id) to
 *       {@code dir/received.log} and each one whose acknowledgement the broker confirmed to
 *       {@code dir/consumer-acked.log}.</li>
 *   <li>{@code check <state>}: reads the topic from where the previous check stopped (the state file holds its
 *       position and what it saw; a missing file starts from the earliest message) to the last message the broker
 *       has, then checks that every sequence number in {@code acked.log} as it was when the check started has been
 *       read, and that sequence numbers first appear in increasing order. Prints one line {@code read=<n> new=<n>
 *       duplicates=<n> acked=<n> missing=<n> out_of_order=<n> first_missing=<seq|->}; exit 0 when nothing is missing
 *       or out of order, 1 otherwise.</li>
 *   <li>{@code subscription}: compares {@code received.log} with {@code acked.log} and {@code consumer-acked.log}
 *       (run it after the producer has stopped and the consumer has caught up): prints {@code acked=<n> received=<n> not_received=<n> redelivered_after_ack=<n> first_not_received=<seq|->};
 *       exit 0 when every acknowledged sequence number was received, 1 otherwise.</li>
 * </ul>
 */
public final class CrashSoakClient {
    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            usage();
        }
        String mode = args[0];
        String url = args[1];
        String topic = args[2];
        Path dir = Path.of(args[3]);
        switch (mode) {
            case "produce" -> {
                if (args.length != 6) {
                    usage();
                }
                produce(url, topic, dir, Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            }
            case "consume" -> {
                if (args.length != 5) {
                    usage();
                }
                consume(url, topic, dir, args[4]);
            }
            case "check" -> {
                if (args.length != 5) {
                    usage();
                }
                System.exit(check(url, topic, dir, Path.of(args[4])));
            }
            case "subscription" -> System.exit(subscription(dir));
            default -> usage();
        }
    }

    private static void usage() {
        System.err.println("usage: CrashSoakClient produce <serviceUrl> <topic> <dir> <rate> <size>\n"
                + "       CrashSoakClient consume <serviceUrl> <topic> <dir> <subscription>\n"
                + "       CrashSoakClient check <serviceUrl> <topic> <dir> <state-file>\n"
                + "       CrashSoakClient subscription - - <dir>");
        System.exit(2);
    }

    private static PulsarClient client(String url) throws Exception {
        return PulsarClient.builder().serviceUrl(url)
                .operationTimeout(60, TimeUnit.SECONDS)
                .connectionTimeout(10, TimeUnit.SECONDS)
                .startingBackoffInterval(100, TimeUnit.MILLISECONDS)
                .maxBackoffInterval(1, TimeUnit.SECONDS)
                .build();
    }

    /** A log of lines (a decimal number first), appended by any thread and flushed on demand. */
    private static final class NumberLog implements AutoCloseable {
        private final BufferedWriter out;

        NumberLog(Path file) throws IOException {
            out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }

        synchronized void add(long n) {
            add(Long.toString(n));
        }

        synchronized void add(String line) {
            try {
                out.write(line);
                out.write('\n');
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        synchronized void flush() {
            try {
                out.flush();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public synchronized void close() throws IOException {
            out.close();
        }
    }

    private static BitSet readLog(Path file) throws IOException {
        BitSet set = new BitSet();
        if (!Files.exists(file)) {
            return set;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
            if (!line.isBlank()) {
                set.set(Math.toIntExact(Long.parseLong(line.strip().split(" ")[0])));
            }
        }
        return set;
    }

    private static long sequenceOf(Message<byte[]> m) {
        return ByteBuffer.wrap(m.getValue()).getLong();
    }

    // ---- produce

    private static void produce(String url, String topic, Path dir, int rate, int size) throws Exception {
        if (rate < 1 || size < 8) {
            throw new IllegalArgumentException("rate must be >= 1 and size >= 8: " + rate + ", " + size);
        }
        PulsarClient client = client(url);
        Producer<byte[]> producer = client.newProducer().topic(topic)
                .sendTimeout(0, TimeUnit.SECONDS)
                .blockIfQueueFull(true)
                .maxPendingMessages(10_000)
                .create();
        NumberLog acked = new NumberLog(dir.resolve("acked.log"));
        AtomicLong pending = new AtomicLong();
        Thread flusher = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                acked.flush();
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        flusher.setDaemon(true);
        flusher.start();
        Object stop = new Object();
        boolean[] stopping = {false};
        Thread sender = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            synchronized (stop) {
                stopping[0] = true;
            }
            sender.interrupt();
            try {
                producer.flush();
                long waitedFor = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (pending.get() > 0 && System.nanoTime() < waitedFor) {
                    Thread.sleep(50);
                }
                producer.close();
                client.close();
            } catch (Exception e) {
                System.err.println("closing the producer: " + e);
            }
            acked.flush();
        }));
        long seq = 0;
        long t0 = System.nanoTime();
        while (true) {
            synchronized (stop) {
                if (stopping[0]) {
                    break;
                }
            }
            long due = t0 + seq * 1_000_000_000L / rate;
            long now = System.nanoTime();
            if (due > now) {
                try {
                    TimeUnit.NANOSECONDS.sleep(due - now);
                } catch (InterruptedException e) {
                    break;
                }
            }
            byte[] payload = new byte[size];
            ByteBuffer.wrap(payload).putLong(seq);
            long s = seq;
            pending.incrementAndGet();
            try {
                producer.sendAsync(payload).whenComplete((id, error) -> {
                    if (error == null) {
                        acked.add(s);
                    }
                    pending.decrementAndGet();
                });
            } catch (Exception e) {
                pending.decrementAndGet();
                break;
            }
            seq++;
        }
    }

    // ---- consume

    private static void consume(String url, String topic, Path dir, String subscription) throws Exception {
        PulsarClient client = client(url);
        Consumer<byte[]> consumer = client.newConsumer().topic(topic).subscriptionName(subscription)
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .isAckReceiptEnabled(true)
                .subscribe();
        NumberLog received = new NumberLog(dir.resolve("received.log"));
        NumberLog confirmed = new NumberLog(dir.resolve("consumer-acked.log"));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            received.flush();
            confirmed.flush();
        }));
        long lastFlush = System.nanoTime();
        while (true) {
            Message<byte[]> m = consumer.receive(100, TimeUnit.MILLISECONDS);
            if (m != null) {
                String line = sequenceOf(m) + " " + m.getMessageId();
                received.add(line);
                consumer.acknowledgeAsync(m).thenRun(() -> confirmed.add(line));
            }
            if (System.nanoTime() - lastFlush > TimeUnit.MILLISECONDS.toNanos(100)) {
                received.flush();
                confirmed.flush();
                lastFlush = System.nanoTime();
            }
        }
    }

    // ---- check

    /** What the checks so far saw: where the last stopped, every sequence number read, the greatest one. */
    private record CheckState(MessageId position, BitSet seen, long greatest, long read, long duplicates) {
        static CheckState load(Path file) throws IOException {
            if (!Files.exists(file)) {
                return new CheckState(MessageId.earliest, new BitSet(), -1, 0, 0);
            }
            List<String> lines = Files.readAllLines(file, StandardCharsets.US_ASCII);
            MessageId position = MessageId.fromByteArray(java.util.Base64.getDecoder().decode(lines.get(0)));
            BitSet seen = BitSet.valueOf(java.util.Base64.getDecoder().decode(lines.get(1)));
            return new CheckState(position, seen, Long.parseLong(lines.get(2)), Long.parseLong(lines.get(3)),
                    Long.parseLong(lines.get(4)));
        }

        void save(Path file) throws IOException {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.write(tmp, List.of(java.util.Base64.getEncoder().encodeToString(position.toByteArray()),
                    java.util.Base64.getEncoder().encodeToString(seen.toByteArray()), Long.toString(greatest),
                    Long.toString(read), Long.toString(duplicates)), StandardCharsets.US_ASCII);
            Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
    }

    private static int check(String url, String topic, Path dir, Path stateFile) throws Exception {
        BitSet acked = readLog(dir.resolve("acked.log")); // before reading: each of these is in the topic by now
        CheckState state = CheckState.load(stateFile);
        BitSet seen = state.seen();
        long greatest = state.greatest();
        long read = 0;
        long fresh = 0;
        long duplicates = 0;
        long outOfOrder = 0;
        MessageId position = state.position();
        try (PulsarClient client = client(url);
                Reader<byte[]> reader = client.newReader(Schema.BYTES).topic(topic).startMessageId(position)
                        .create()) {
            while (reader.hasMessageAvailable()) {
                Message<byte[]> m = reader.readNext(30, TimeUnit.SECONDS);
                if (m == null) {
                    break;
                }
                position = m.getMessageId();
                long seq = sequenceOf(m);
                read++;
                if (seen.get(Math.toIntExact(seq))) {
                    duplicates++;
                    continue;
                }
                if (seq < greatest) {
                    outOfOrder++; // a number first seen after a greater one: the topic's order broke
                }
                seen.set(Math.toIntExact(seq));
                greatest = Math.max(greatest, seq);
                fresh++;
            }
        }
        BitSet missing = (BitSet) acked.clone();
        missing.andNot(seen);
        new CheckState(position, seen, greatest, state.read() + read, state.duplicates() + duplicates).save(stateFile);
        System.out.printf("read=%d new=%d duplicates=%d acked=%d missing=%d out_of_order=%d first_missing=%s%n", read,
                fresh, duplicates, acked.cardinality(), missing.cardinality(), outOfOrder,
                missing.isEmpty() ? "-" : Integer.toString(missing.nextSetBit(0)));
        return missing.isEmpty() && outOfOrder == 0 ? 0 : 1;
    }

    // ---- subscription

    private static int subscription(Path dir) throws IOException {
        BitSet acked = readLog(dir.resolve("acked.log"));
        // A message (its id) received again after the broker confirmed its acknowledgement is a redelivery of an
        // acknowledged message; the two logs' relative order is lost, so this counts every second receipt of a
        // message whose acknowledgement was ever confirmed (an upper bound). A duplicate the producer sent is
        // another message, with its own id.
        java.util.Set<String> confirmed = new java.util.HashSet<>(lines(dir.resolve("consumer-acked.log")));
        java.util.Set<String> receivedIds = new java.util.HashSet<>();
        BitSet received = new BitSet();
        long redelivered = 0;
        for (String line : lines(dir.resolve("received.log"))) {
            if (!receivedIds.add(line) && confirmed.contains(line)) {
                redelivered++;
            }
            received.set(Math.toIntExact(Long.parseLong(line.split(" ")[0])));
        }
        BitSet notReceived = (BitSet) acked.clone();
        notReceived.andNot(received);
        System.out.printf("acked=%d received=%d not_received=%d redelivered_after_ack=%d first_not_received=%s%n",
                acked.cardinality(), received.cardinality(), notReceived.cardinality(), redelivered,
                notReceived.isEmpty() ? "-" : Integer.toString(notReceived.nextSetBit(0)));
        return notReceived.isEmpty() ? 0 : 1;
    }

    private static List<String> lines(Path file) throws IOException {
        if (!Files.exists(file)) {
            return List.of();
        }
        return Files.readAllLines(file, StandardCharsets.US_ASCII).stream().map(String::strip)
                .filter(l -> !l.isEmpty()).toList();
    }
}
