package io.nereus.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Netty's {@link ResourceLeakDetector} at PARANOID (every buffer allocated from now on is tracked) for the tests of
 * a class, recording every leak Netty reports ({@link RecordingLeakDetector}, which the test JVM installs as Netty's
 * detector). {@link #leaks} collects garbage until a canary
 * buffer leaked on purpose has been reported (so that what became garbage before it has been looked at too) and
 * returns the reports that name Nereus code: a buffer Nereus retained, sliced or touched that was never released.
 * Leaks of other code in the JVM (the in-process bookie's, say) are not Nereus's and are left out. Netty reports one
 * leak per distinct record, once per JVM. Building a BookKeeper client or bookie sets Netty's level to its allocator
 * policy: a test builds them at PARANOID ({@link BookKeeperCluster#newV2Client}), and {@link #leaks} fails when the
 * level changed meanwhile.
 */
public final class LeakDetection implements BeforeAllCallback, AfterAllCallback {
    private static final AtomicLong CANARIES = new AtomicLong();

    private final List<String> reports = RecordingLeakDetector.reports();
    private ResourceLeakDetector.Level previous;

    /** Sets PARANOID, then reports what earlier tests of the JVM left as garbage and forgets it. */
    @Override
    public void beforeAll(ExtensionContext context) {
        PooledByteBufAllocator.DEFAULT.directBuffer(1).release(); // Netty's buffer classes, and their detector, load
        if (!RecordingLeakDetector.installed()) {
            throw new IllegalStateException("Netty's leak detector is not RecordingLeakDetector: run the test JVM with"
                    + " -Dio.netty.customResourceLeakDetector=" + RecordingLeakDetector.class.getName());
        }
        previous = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        leaks();
        clear();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        ResourceLeakDetector.setLevel(previous);
    }

    /** The leaks of Nereus code reported so far, after a garbage collection that reported a fresh canary. */
    public List<String> leaks() {
        if (ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.PARANOID) {
            // a BookKeeper client or bookie built meanwhile set its own policy: buffers went untracked
            throw new IllegalStateException("Netty's leak detection level was changed to "
                    + ResourceLeakDetector.getLevel() + " during the test");
        }
        String canary = "nereus-leak-canary-" + CANARIES.incrementAndGet();
        leakCanary(canary);
        Awaitility.await("the leak detector to report a canary buffer").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100)).until(() -> {
                    System.gc();
                    PooledByteBufAllocator.DEFAULT.directBuffer(1).release(); // a tracked allocation polls the reports
                    return reports.stream().anyMatch(r -> r.contains(canary));
                });
        return reports.stream().filter(r -> !r.contains("nereus-leak-canary-") && r.contains("io.nereus.")).toList();
    }

    /** Forgets the reports so far (after a test leaked on purpose). */
    public void clear() {
        reports.clear();
    }

    private static void leakCanary(String hint) {
        ByteBuf canary = PooledByteBufAllocator.DEFAULT.directBuffer(8);
        canary.touch(hint);
    }
}
