package io.nereus.testing;

import io.netty.util.ResourceLeakDetector;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Netty's leak detector, recording every leak it reports (and logging it as Netty's does) so that a test can fail
 * on one ({@link LeakDetection}; pulsar-it's ReadLeakTest through this module's test-jar). Netty builds its detectors
 * when its buffer classes load, so this one is installed by the system property
 * {@code io.netty.customResourceLeakDetector}, which the test JVMs set (both modules' poms).
 */
public final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final List<String> REPORTS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;

    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
        installed = true;
    }

    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        this(resourceType, samplingInterval);
    }

    /** Whether Netty made its detectors of this class (the system property was set before Netty loaded). */
    public static boolean installed() {
        return installed;
    }

    /** The records of every leak reported so far, in order. */
    public static List<String> reports() {
        return REPORTS;
    }

    @Override
    protected boolean needReport() {
        return true;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        REPORTS.add(records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        REPORTS.add("untraced leak of " + resourceType);
        super.reportUntracedLeak(resourceType);
    }
}
