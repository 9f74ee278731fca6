package io.nereus.fdb.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The in-memory model the DurableLog tests recover into and snapshot from: a sorted map with unsigned key order,
 * optionally remembering the state after every version so that it can serve {@link SnapshotSource} requests.
 */
final class DurableLogTestModel implements RecoverySink, SnapshotSource {
    static final Comparator<byte[]> UNSIGNED = Arrays::compareUnsigned;
    private static final HexFormat HEX = HexFormat.of();

    private final TreeMap<byte[], byte[]> state = new TreeMap<>(UNSIGNED);
    private final ConcurrentSkipListMap<Long, NavigableMap<byte[], byte[]>> history = new ConcurrentSkipListMap<>();
    private final boolean keepHistory;
    private long version;
    private byte[] lastSnapshotKey;
    /** Whether serving a snapshot forgets the history before it (on by default, to keep memory small). */
    volatile boolean pruneHistory = true;
    final AtomicInteger openSnapshots = new AtomicInteger();
    final AtomicInteger snapshotsServed = new AtomicInteger();
    final List<Long> snapshotVersions = new ArrayList<>();

    DurableLogTestModel() {
        this(false);
    }

    DurableLogTestModel(boolean keepHistory) {
        this.keepHistory = keepHistory;
    }

    @Override
    public synchronized void loadSnapshotEntry(byte[] key, byte[] value) {
        if (lastSnapshotKey != null && UNSIGNED.compare(lastSnapshotKey, key) >= 0) {
            throw new AssertionError("snapshot entries out of order");
        }
        if (version != 0) {
            throw new AssertionError("snapshot entry after a record");
        }
        lastSnapshotKey = key;
        state.put(key, value);
    }

    @Override
    public synchronized void apply(LogRecord record) {
        if (record.version() <= version) {
            throw new AssertionError("version " + record.version() + " after " + version);
        }
        applyTo(state, record);
        version = record.version();
        if (keepHistory) {
            history.put(version, new TreeMap<>(state));
        }
    }

    @Override
    public StateSnapshot openSnapshot(long at) {
        NavigableMap<byte[], byte[]> view = history.get(at);
        if (view == null) {
            throw new IllegalStateException("version " + at + " is not readable");
        }
        if (pruneHistory) {
            history.headMap(at).clear(); // compaction versions only grow
        }
        synchronized (this) {
            snapshotVersions.add(at);
        }
        openSnapshots.incrementAndGet();
        snapshotsServed.incrementAndGet();
        return new StateSnapshot() {
            @Override
            public Iterator<Map.Entry<byte[], byte[]>> entries() {
                return view.entrySet().iterator();
            }

            @Override
            public void close() {
                openSnapshots.decrementAndGet();
            }
        };
    }

    /** The state right after {@code at} was applied (needs history, and {@code at} not yet pruned). */
    Map<String, String> stateAt(long at) {
        NavigableMap<byte[], byte[]> view = history.get(at);
        if (view == null) {
            throw new IllegalStateException("no history for version " + at);
        }
        return hex(view);
    }

    synchronized long version() {
        return version;
    }

    /** The state as hex strings, in key order: AssertJ prints readable differences. */
    synchronized Map<String, String> snapshot() {
        return hex(state);
    }

    static void applyTo(NavigableMap<byte[], byte[]> map, LogRecord record) {
        for (Effect e : record.effects()) {
            if (e.kind() == Effect.SET) {
                map.put(e.key(), e.value());
            } else if (UNSIGNED.compare(e.key(), e.end()) < 0) {
                map.subMap(e.key(), true, e.end(), false).clear();
            }
        }
    }

    static Map<String, String> hex(Map<byte[], byte[]> map) {
        Map<String, String> out = new LinkedHashMap<>();
        map.forEach((k, v) -> out.put(HEX.formatHex(k), HEX.formatHex(v)));
        return out;
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static LogRecord rec(long version, Effect... effects) {
        return new LogRecord(version, List.of(effects));
    }

    /** A record of one to three SETs of values up to {@code maxValue} bytes over {@code keys} keys, sometimes a clear. */
    static LogRecord randomRecord(java.util.Random random, long version, int keys, int maxValue) {
        List<Effect> effects = new ArrayList<>();
        for (int n = 1 + random.nextInt(3); n > 0; n--) {
            byte[] key = b(String.format("key-%04d", random.nextInt(keys)));
            if (random.nextInt(8) == 0) {
                effects.add(Effect.clearRange(key, next(key)));
            } else {
                byte[] value = new byte[random.nextInt(maxValue + 1)];
                random.nextBytes(value);
                effects.add(Effect.set(key, value));
            }
        }
        return new LogRecord(version, effects);
    }

    /** Applies each record to this model, appends it, and waits for all of them to be durable. */
    void appendAll(DurableLog log, List<LogRecord> records) throws Exception {
        List<java.util.concurrent.CompletableFuture<Void>> futures = new ArrayList<>();
        for (LogRecord r : records) {
            apply(r);
            futures.add(appendAndWrite(log, r));
        }
        java.util.concurrent.CompletableFuture.allOf(futures.toArray(java.util.concurrent.CompletableFuture[]::new))
                .get(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    /** Appends {@code r} and writes it, as a commit does once it has left its critical section. */
    static java.util.concurrent.CompletableFuture<Void> appendAndWrite(DurableLog log, LogRecord r) {
        java.util.concurrent.CompletableFuture<Void> durable = log.append(r);
        log.write();
        return durable;
    }

    /** The key right after {@code key}: {@code key + 0x00}, so that {@code clearRange(key, next(key))} clears one key. */
    static byte[] next(byte[] key) {
        return Arrays.copyOf(key, key.length + 1);
    }

    static List<Path> files(Path dir, String glob) throws IOException {
        List<Path> out = new ArrayList<>();
        try (var s = Files.newDirectoryStream(dir, glob)) {
            s.forEach(out::add);
        }
        out.sort(Comparator.comparing(Path::toString));
        return out;
    }

    static long directoryBytes(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0; // deleted meanwhile
                }
            }).sum();
        }
    }

    /** Record start offsets of a segment, walking its framing (the last element is the end of the last record). */
    static List<Long> recordBoundaries(byte[] segment) {
        List<Long> out = new ArrayList<>();
        long pos = DurableLogFormat.SEGMENT_HEADER_BYTES;
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(segment);
        while (pos + DurableLogFormat.FRAME_BYTES <= segment.length) {
            out.add(pos);
            pos += DurableLogFormat.FRAME_BYTES + b.getInt((int) pos);
        }
        if (pos != segment.length) {
            throw new AssertionError("segment does not end at a record boundary");
        }
        out.add(pos);
        return out;
    }
}
