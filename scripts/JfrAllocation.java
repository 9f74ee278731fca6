import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * Heap bytes a JVM allocated during a time window, from a Java Flight Recorder file: the sum of the weights of its
 * jdk.ObjectAllocationSample events (each the JVM's estimate of the bytes allocated since the thread's previous
 * sample), with the share of the first frames in io.nereus packages. Used by scripts/bench-vs-stock (BENCH_JFR=1).
 *
 * <pre>java scripts/JfrAllocation.java broker.jfr FROM TO [TOP]</pre>
 * FROM and TO are ISO-8601 instants; prints the total bytes on the first line, then, with TOP, the TOP largest
 * allocating frames ("first io.nereus frame", or "other" when none) as "bytes&lt;TAB&gt;frame".
 */
public final class JfrAllocation {
    private JfrAllocation() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: java JfrAllocation.java RECORDING.jfr FROM TO [TOP]");
            System.exit(2);
        }
        Instant from = Instant.parse(args[1]);
        Instant to = Instant.parse(args[2]);
        int top = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        long total = 0;
        Map<String, Long> byFrame = new HashMap<>();
        try (RecordingFile recording = new RecordingFile(Path.of(args[0]))) {
            while (recording.hasMoreEvents()) {
                RecordedEvent e = recording.readEvent();
                if (!e.getEventType().getName().equals("jdk.ObjectAllocationSample")
                        || e.getStartTime().isBefore(from) || e.getStartTime().isAfter(to)) {
                    continue;
                }
                long weight = e.getLong("weight");
                total += weight;
                if (top > 0) {
                    byFrame.merge(firstNereusFrame(e), weight, Long::sum);
                }
            }
        }
        System.out.println(total);
        byFrame.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(top)
                .forEach(f -> System.out.println(f.getValue() + "\t" + f.getKey()));
    }

    private static String firstNereusFrame(RecordedEvent e) {
        if (e.getStackTrace() != null) {
            for (RecordedFrame f : e.getStackTrace().getFrames()) {
                String type = f.getMethod().getType().getName();
                if (type.startsWith("io.nereus.")) {
                    return type + "." + f.getMethod().getName();
                }
            }
        }
        return "other";
    }
}
