import java.io.FileReader;
import java.io.Reader;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.pulsar.client.admin.LongRunningProcessStatus;
import org.apache.pulsar.client.admin.OffloadProcessStatus;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.MessageId;

/**
 * Offloads a topic up to its last message through the admin API (the CLI's offload takes only a size threshold)
 * and waits for the offload to end; prints the seconds it took. Run with the distribution's lib/ on the classpath:
 * {@code java -cp "lib/*" TriggerOffload.java conf/client.conf persistent://tenant/ns/topic}. The broker's admin
 * address is the {@code webServiceUrl} of that client.conf, as for bin/pulsar-admin.
 */
public final class TriggerOffload {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: TriggerOffload <client.conf> <topic>");
            System.exit(2);
        }
        Properties conf = new Properties();
        try (Reader r = new FileReader(Path.of(args[0]).toFile())) {
            conf.load(r);
        }
        String admin = conf.getProperty("webServiceUrl", "").strip();
        if (admin.isEmpty()) {
            System.err.println(args[0] + " has no webServiceUrl");
            System.exit(2);
        }
        try (PulsarAdmin client = PulsarAdmin.builder().serviceHttpUrl(admin).build()) {
            MessageId last = client.topics().getLastMessageId(args[1]);
            long started = System.nanoTime();
            client.topics().triggerOffload(args[1], last);
            OffloadProcessStatus status;
            while ((status = client.topics().offloadStatus(args[1])).getStatus()
                    == LongRunningProcessStatus.Status.RUNNING) {
                Thread.sleep(100);
            }
            if (status.getStatus() != LongRunningProcessStatus.Status.SUCCESS) {
                System.err.println("offload of " + args[1] + " ended " + status.getStatus() + ": "
                        + status.getLastError());
                System.exit(1);
            }
            System.out.printf("%.1f%n", (System.nanoTime() - started) / 1e9);
        }
    }
}
