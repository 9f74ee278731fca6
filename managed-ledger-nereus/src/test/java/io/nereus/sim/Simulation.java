package io.nereus.sim;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.fdb.embedded.CommitFault;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.generation.CollectorConfig;
import io.nereus.generation.MaterializerConfig;
import io.nereus.generation.CompactionResult;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.CursorState;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.MetadataStore;
import io.nereus.metadata.NereusKeyspace;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.WriteOutcome;
import io.nereus.object.ObjectStore;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import io.nereus.stream.ReadResult;
import io.nereus.stream.StorageConfig;
import io.nereus.stream.StreamStorage;
import io.nereus.object.SimObjectStore;
import io.nereus.wal.WalConfig;
import io.nereus.wal.WalObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.bookkeeper.client.SimBookKeeper;

/**
 * One seeded run of the engine (streams, WAL writer, commit pipeline, resolver, generation-0 repair, materializer,
 * collector, cursor persistence) over simulated bookies ({@link SimBookKeeper.Bookies}) and an in-memory EmbeddedFdb
 * with injected commit faults, all on one {@link SimLoop} on simulated time. Every step is one operation, one fault or
 * one crash, drawn from the seed; the loop runs until the step's futures are done before the invariants are checked
 * against the model this class keeps of what was acknowledged. The run keeps a {@link Trace} of what it saw. See
 * {@link SimulationTest} for what is deterministic.
 */
final class Simulation {
    static final int STREAMS = 4;
    /** The simulated time one wait may take before the step counts as one that can never finish. */
    private static final Duration AWAIT_LIMIT = Duration.ofMinutes(10);

    /** The figures of a run; {@code trace} is the hash of everything it saw (equal for two runs of one seed). */
    record Result(long seed, long steps, long appendsAcked, long appendsFailed, long reads, long crashes,
            long fences, long faults, long zombieAppendsRefused, long compactionsPublished, long tasks,
            Duration simulatedTime, long trace,
            Duration elapsed, Duration cpu) {
    }

    /** An invariant broke: names the seed and the step so that the run can be replayed. */
    static final class Violation extends AssertionError {
        Violation(long seed, long step, String what) {
            super("simulation seed " + seed + " step " + step + ": " + what);
        }
    }

    private final long seed;
    private final Random random;
    private final SimClock clock = new SimClock();
    private final SimLoop loop = new SimLoop(clock);
    /** The engine's randomness (reply delays, backoff jitter, object names), apart from the steps' draws. */
    private final Random engineRandom;
    private final Trace trace = new Trace();
    private final SimBookKeeper.Bookies bookies = new SimBookKeeper.Bookies();
    private final EmbeddedFdb fdb;
    private final ObjectStore objects;
    private final NereusKeyspace keyspace = new NereusKeyspace(new Subspace(Tuple.from("nereus", "sim")));
    private final StorageConfig config;
    private final Model[] models = new Model[STREAMS];
    private Broker broker;
    private Broker zombie;
    private int incarnations;
    private long step;
    private long appendsAcked;
    private long appendsFailed;
    private long reads;
    private long crashes;
    /** Compactions published. */
    private long compactions;
    private static final SimCompactionPolicy COMPACTION = new SimCompactionPolicy();
    private long fences;
    private long faults;
    private long zombieRefused;

    Simulation(long seed) {
        this.seed = seed;
        this.random = new Random(seed);
        this.engineRandom = new Random(~seed);
        this.fdb = EmbeddedFdb.builder().clock(clock).executor(loop.lane("fdb"))
                .timer(loop.lane("fdb-timer"), clock::nanos).jitter(engineRandom::nextDouble).build();
        this.objects = new SimObjectStore(clock);
        WalConfig wal = WalConfig.defaults().withQuorums(1, 1, 1).withSlice(16 * 1024, Duration.ofMinutes(5))
                .withRecovery(Duration.ofSeconds(30), Duration.ofHours(1));
        this.config = StorageConfig.defaults().withWal(wal).withTailCacheBytes(4 * 1024)
                // no WAL slice mirrors: they are local files, outside the simulated world (SliceMirrorsTest)
                .withMaterializer(new MaterializerConfig(true, 8 * 1024, 1024, Duration.ofHours(1), 1L << 40, 3,
                        64 * 1024, 2, 0, 1 << 20))
                .withCollector(new CollectorConfig(Duration.ofHours(1), Duration.ofSeconds(10),
                        Duration.ofSeconds(20)));
        for (int i = 0; i < STREAMS; i++) {
            models[i] = new Model("sim-stream-" + i, i);
        }
    }

    /** Runs {@code steps} steps, checking the invariants after each; throws {@link Violation} at the first break. */
    Result run(long steps) {
        long started = System.nanoTime();
        long cpuBefore = threadCpuNanos();
        Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
        try {
            broker = start("broker-0");
            for (step = 1; step <= steps; step++) {
                step();
            }
            bookies.setDown(false);
            checkEverything();
            for (Model m : models) {
                trace.add(m.seenTrim, m.seenEnd, m.cursorMarkDelete, m.acked.size());
            }
            trace.add(loop.tasksRun(), clock.nanos());
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (!threadsBefore.contains(t) && (t.getName().startsWith("nereus-")
                        || t.getName().startsWith("embedded-fdb-"))) {
                    fail("the run started thread " + t.getName() + ": a thread the runtime seam does not cover");
                }
            }
        } finally {
            if (zombie != null) {
                zombie.crash();
            }
            if (broker != null) {
                broker.crash();
            }
            objects.close();
            fdb.close();
        }
        return new Result(seed, steps, appendsAcked, appendsFailed, reads, crashes, fences, faults, zombieRefused,
                compactions, loop.tasksRun(), Duration.ofNanos(clock.nanos()), trace.value(),
                Duration.ofNanos(System.nanoTime() - started), Duration.ofNanos(threadCpuNanos() - cpuBefore));
    }

    /** CPU time of the calling thread, which runs the whole simulation (engine included). */
    static long threadCpuNanos() {
        return java.lang.management.ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    /** CPU time of the whole test JVM (the compiler's and collector's threads included). */
    static long processCpuNanos() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os ? os.getProcessCpuTime() : 0;
    }

    private long wipeBookiesAt = -1;

    /**
     * Makes the bookies lose every ledger at step {@code at} (BookKeeper losing acknowledged data): a broken world in
     * which the invariants must fail, so that a test can show the simulation notices.
     */
    Simulation wipingBookiesAt(long at) {
        wipeBookiesAt = at;
        return this;
    }

    private void step() {
        if (step == wipeBookiesAt) {
            bookies.wipe();
        }
        step(random.nextInt(1000));
    }

    private void step(int roll) {
        if (roll < 380) {
            append(models[random.nextInt(STREAMS)], 1 + random.nextInt(3));
        } else if (roll < 430) {
            burst(false);
        } else if (roll < 630) {
            read(models[random.nextInt(STREAMS)]);
        } else if (roll < 650) {
            broker.storage.clearTailCache();
        } else if (roll < 690) {
            trim(models[random.nextInt(STREAMS)]);
        } else if (roll < 740) {
            cursor(models[random.nextInt(STREAMS)]);
        } else if (roll < 780) {
            CommitFault fault = CommitFault.values()[random.nextInt(CommitFault.values().length)];
            int count = 1 + random.nextInt(2);
            fdb.injectCommitFaults(fault, count);
            trace.add(1, fault.ordinal(), count);
            faults++;
        } else if (roll < 800) {
            SimBookKeeper.AddFault fault = SimBookKeeper.AddFault.values()[random.nextInt(SimBookKeeper.AddFault.values().length)];
            bookies.injectAddFaults(fault, 1);
            trace.add(2, fault.ordinal());
            faults++;
        } else if (roll < 810) {
            bookies.setDown(!bookies.isDown() && random.nextInt(3) == 0);
            trace.add(3, bookies.isDown() ? 1 : 0);
            faults++;
        } else if (roll < 830) {
            settle(broker.storage.rollWalSlice());
        } else if (roll < 860) {
            loop.advance(Duration.ofMillis(random.nextInt(20_000)));
        } else if (roll < 870) {
            settle(broker.storage.recoverAbandonedSlices());
        } else if (roll < 885) {
            settle(broker.storage.materializeSealedSlices());
        } else if (roll < 900) {
            settle(broker.storage.collectGarbage());
        } else if (roll < 920) {
            verifyStream(models[random.nextInt(STREAMS)]);
        } else if (roll < 940) {
            zombieAppend(models[random.nextInt(STREAMS)]);
        } else if (roll < 943) {
            crash();
        } else if (roll < 945) {
            fence();
        } else if (roll < 955) {
            compact(models[random.nextInt(STREAMS)]);
        } else {
            read(models[random.nextInt(STREAMS)]);
        }
    }

    // ---------------------------------------------------------------- operations

    private void append(Model m, int entries) {
        Pending p = submit(broker, m, entries);
        if (p != null) {
            finish(p);
            checkHead(m);
        }
    }

    /** Several appends over random streams handed to the WAL together (a group commit); with crash, unawaited. */
    private List<Pending> burst(boolean forCrash) {
        int n = 2 + random.nextInt(5);
        List<Pending> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Pending p = submit(broker, models[random.nextInt(STREAMS)], 1 + random.nextInt(2));
            if (p != null) {
                all.add(p);
            }
        }
        if (!forCrash) {
            all.forEach(this::finish);
            for (Model m : models) {
                checkHead(m);
            }
        }
        return all;
    }

    private record Pending(Model model, List<byte[]> payloads, CompletableFuture<OffsetRange> done, long session) {
    }

    private Pending submit(Broker b, Model m, int entries) {
        NereusStream s = b.writable(m);
        if (s == null) {
            return null;
        }
        List<byte[]> payloads = new ArrayList<>();
        List<AppendEntry> list = new ArrayList<>();
        for (int i = 0; i < entries; i++) {
            byte[] payload = m.newPayload(random, b == zombie);
            payloads.add(payload);
            list.add(new AppendEntry(payload, 1));
        }
        return new Pending(m, payloads, s.append(list), s.writeSession());
    }

    private void finish(Pending p) {
        finish(p, outcome(p.done));
    }

    private void finish(Pending p, Outcome<OffsetRange> o) {
        if (o.value == null) {
            trace.add(4, o.error instanceof NereusException n ? n.code().ordinal() : -1);
            appendsFailed++;
            return;
        }
        OffsetRange r = o.value;
        Model m = p.model;
        trace.add(5, m.index, r.start(), r.end());
        if (r.end() - r.start() != p.payloads.size()) {
            fail("append acknowledged " + r + " for " + p.payloads.size() + " entries of " + m.name);
        }
        for (int i = 0; i < p.payloads.size(); i++) {
            long offset = r.start() + i;
            byte[] payload = p.payloads.get(i);
            m.observe(this, offset, payload);
            m.acked.put(offset, payload);
            trace.add(payload);
        }
        m.ackedEnd = Math.max(m.ackedEnd, r.end());
        appendsAcked++;
    }

    /**
     * The fenced process (an ownership transfer left it alive) tries to append, trim or save a cursor on a stream its
     * successor holds the writer of: each must fail.
     */
    private void zombieAppend(Model m) {
        if (zombie == null || !broker.epochs.containsKey(m.name)) {
            read(m); // no fenced process, or its successor has not acquired this stream (it may still write)
            return;
        }
        Long zombieEpoch = zombie.epochs.get(m.name);
        int what = random.nextInt(4);
        if (what == 0 && zombieEpoch != null && m.id != null) {
            Outcome<StreamHead> o = outcome(zombie.metadata.streams().trim(m.id, Math.max(m.seenTrim, m.seenEnd),
                    zombieEpoch));
            if (o.value != null) {
                fail("a fenced writer's trim was applied: " + m.name + " epoch " + zombieEpoch);
            }
            zombieRefused++;
            return;
        }
        if (what == 1 && zombieEpoch != null && m.id != null) {
            CursorState lost = new CursorState(0, List.of(), new TreeMap<>(), Map.of(), Map.of());
            Outcome<WriteOutcome> o = outcome(zombie.metadata.cursors().saveCursor(m.id, "sub", zombieEpoch, lost));
            if (o.value instanceof WriteOutcome.Written) {
                fail("a fenced writer's cursor save was applied: " + m.name + " epoch " + zombieEpoch);
            }
            zombieRefused++;
            checkCursor(m);
            return;
        }
        if (what == 2) {
            read(zombie, m);
            return;
        }
        Pending p = submit(zombie, m, 1);
        if (p == null) {
            return;
        }
        Outcome<OffsetRange> o = outcome(p.done);
        if (o.value != null) {
            fail("a fenced writer's append was acknowledged: " + m.name + " " + o.value);
        }
        zombieRefused++;
        if (random.nextInt(20) == 0) {
            zombie.crash();
            zombie = null;
        }
    }

    private void read(Model m) {
        read(broker, m);
    }

    /** A read through {@code b}'s handle (the writer's, or a fenced process's, whose caches may be stale). */
    private void read(Broker b, Model m) {
        NereusStream s = b.handle(m);
        if (s == null) {
            return;
        }
        long from = Math.max(0, m.trim - 3 + random.nextInt((int) Math.min(Integer.MAX_VALUE - 8,
                Math.max(1, m.seenEnd - m.trim + 6))));
        Outcome<ReadResult> o = outcome(s.read(ReadView.COMMITTED, from, 1 + random.nextInt(8), 1L << 20,
                BoundaryMode.CONTAINING_ENTRY));
        reads++;
        if (o.value == null) {
            if (o.error instanceof NereusException n && n.code() == ErrorCode.OFFSET_TRIMMED) {
                return;
            }
            checkReadFailure(m, from, o.error);
            return;
        }
        checkRead(m, from, o.value);
    }

    private void trim(Model m) {
        NereusStream s = broker.handle(m);
        Long epoch = broker.epochs.get(m.name);
        if (s == null || epoch == null) {
            return;
        }
        Outcome<StreamHead> head = outcome(s.head());
        if (head.value == null) {
            return;
        }
        long lo = head.value.trimOffset();
        long hi = head.value.committedEnd();
        long to = lo + (hi > lo ? (long) (random.nextDouble() * (hi - lo + 1) * 0.5) : 0);
        to = Math.min(to, hi);
        Outcome<StreamHead> o = outcome(broker.metadata.streams().trim(m.id, to, epoch));
        if (o.value != null) {
            m.trim = Math.max(m.trim, to);
            m.acked.headMap(m.trim).clear();
        }
        checkHead(m);
    }

    private void cursor(Model m) {
        Long epoch = broker.epochs.get(m.name);
        if (epoch == null || m.id == null) {
            return;
        }
        long markDelete = m.cursorMarkDelete + (m.seenEnd > m.cursorMarkDelete
                ? random.nextInt((int) Math.min(1000, m.seenEnd - m.cursorMarkDelete + 1)) : 0);
        long hole = markDelete + 1 + random.nextInt(4);
        long holeEnd = hole + 1 + random.nextInt(3);
        List<OffsetRange> ranges = new ArrayList<>();
        for (OffsetRange r : m.cursorRanges) {
            if (r.start() > markDelete) {
                ranges.add(r);
            }
        }
        if (ranges.isEmpty() || ranges.get(ranges.size() - 1).end() < hole) {
            ranges.add(new OffsetRange(hole, holeEnd));
        }
        CursorState state = new CursorState(markDelete, ranges, new TreeMap<>(), Map.of(), Map.of());
        Outcome<WriteOutcome> o = outcome(broker.metadata.cursors().saveCursor(m.id, "sub", epoch, state));
        if (o.value instanceof WriteOutcome.Written) {
            m.cursorMarkDelete = markDelete;
            m.cursorRanges = ranges;
        }
        checkCursor(m);
    }

    /**
     * Compacts the stream into its TOPIC_COMPACTED view ({@link SimCompactionPolicy}); a failure (faults, a fenced
     * or trimmed stream) is allowed, a publication is checked ({@link #checkCompacted}).
     */
    private void compact(Model m) {
        NereusStream s = broker.handle(m);
        if (s == null) {
            return;
        }
        Outcome<CompactionResult> o = outcome(broker.storage.compact(s, COMPACTION));
        if (o.value instanceof CompactionResult.Published) {
            compactions++;
        }
        trace.add(8, o.value instanceof CompactionResult.Published ? 1 : o.value == null ? 2 : 0);
        checkCompacted(m);
    }

    /**
     * The compacted view of {@code m} as stored now: its horizon never below one published before (across crashes,
     * fences and new writers); its entries below the horizon, in offset order, one per key, each the payload that
     * was appended at its offset; and for every acknowledged entry below the horizon not trimmed, its key kept at
     * that offset or a later one.
     */
    private void checkCompacted(Model m) {
        if (m.id == null) {
            return;
        }
        Outcome<Optional<IndexRecord>> current = outcome(broker.storage.compactor().compactedRecord(m.id));
        if (current.value == null) {
            return; // the metadata read failed (an injected fault): checked at a later step
        }
        if (current.value.isEmpty()) {
            if (m.horizon > 0) {
                fail(m.name + " compacted view gone after horizon " + m.horizon + " was published");
            }
            return;
        }
        IndexRecord record = current.value.get();
        if (record.endOffset() < m.horizon) {
            fail(m.name + " compacted horizon went back from " + m.horizon + " to " + record.endOffset());
        }
        m.horizon = record.endOffset();
        Outcome<List<StreamEntry>> read = outcome(broker.storage.compactor().read(record, 0, Integer.MAX_VALUE,
                Long.MAX_VALUE));
        if (read.value == null) {
            return; // a retriable object read failure; the view is checked again at a later step
        }
        Map<String, Long> kept = new HashMap<>();
        long previous = -1;
        try {
            for (StreamEntry e : read.value) {
                long at = e.range().start();
                byte[] payload = e.bytes();
                if (at <= previous || at >= record.endOffset()) {
                    fail(m.name + " compacted entry at " + at + " out of order or beyond the horizon "
                            + record.endOffset());
                }
                previous = at;
                if (kept.put(SimCompactionPolicy.key(payload.length), at) != null) {
                    fail(m.name + " compacted view keeps two entries of key " + SimCompactionPolicy.key(payload.length));
                }
                m.observe(this, at, payload); // the bytes appended at that offset, and only those
            }
        } finally {
            StreamEntry.releaseAll(read.value);
        }
        for (Map.Entry<Long, byte[]> a : m.acked.headMap(record.endOffset()).entrySet()) {
            Long at = kept.get(SimCompactionPolicy.key(a.getValue().length));
            if (at == null || at < a.getKey()) {
                fail(m.name + " acknowledged entry at " + a.getKey() + " below horizon " + record.endOffset()
                        + " has its key " + SimCompactionPolicy.key(a.getValue().length) + " at " + at);
            }
        }
    }

    /**
     * The broker dies at an arbitrary point of the work in flight: appends handed to the WAL, and sometimes a slice
     * roll, a materializer or a collector pass, run for a number of tasks drawn from the seed, then the process is
     * killed. What was acknowledged before it died must survive; the rest may or may not have been stored.
     */
    private void crash() {
        List<Pending> inFlight = burst(true);
        switch (random.nextInt(4)) {
            case 0 -> broker.storage.rollWalSlice();
            case 1 -> broker.storage.materializeSealedSlices();
            case 2 -> broker.storage.collectGarbage();
            default -> { }
        }
        int tasks = random.nextInt(400);
        loop.runTasks(tasks, Duration.ofMillis(50));
        trace.add(6, tasks, loop.tasksRun());
        Broker dead = broker;
        dead.crash();
        for (Pending p : inFlight) {
            // acknowledged before the crash or not: either is allowed
            if (p.done.isDone()) {
                finish(p, outcome(p.done));
            }
        }
        if (zombie != null) {
            zombie.crash();
            zombie = null;
        }
        crashes++;
        loop.advance(Duration.ofSeconds(random.nextInt(60)));
        broker = start(random.nextBoolean() ? dead.writerId : "broker-" + (++incarnations));
        checkEverything();
    }

    private void fence() {
        if (zombie != null) {
            zombie.crash();
        }
        zombie = broker;
        broker = start("broker-" + (++incarnations));
        fences++;
        checkEverything();
    }

    // ---------------------------------------------------------------- invariants

    private void checkHead(Model m) {
        if (m.id == null) {
            return;
        }
        Outcome<Optional<StreamHead>> o = outcome(broker.metadata.streams().head(m.id));
        if (o.value == null || o.value.isEmpty()) {
            return;
        }
        StreamHead h = o.value.get();
        if (h.committedEnd() < m.seenEnd || h.committedEnd() < m.ackedEnd) {
            fail(m.name + " committed end went back to " + h.committedEnd() + " (seen " + m.seenEnd + ", acked "
                    + m.ackedEnd + ")");
        }
        if (h.trimOffset() < m.trim || h.trimOffset() < m.seenTrim) {
            fail(m.name + " trim offset went back to " + h.trimOffset() + " (acknowledged trim " + m.trim + ")");
        }
        m.seenEnd = h.committedEnd();
        m.seenTrim = h.trimOffset();
    }

    /** Checks what a read served, then releases its entries (a read hands its caller one reference per entry). */
    private void checkRead(Model m, long from, ReadResult r) {
        try {
            checkServed(m, from, r);
        } finally {
            r.release();
        }
    }

    private void checkServed(Model m, long from, ReadResult r) {
        if (from < m.trim && !r.entries().isEmpty()) {
            fail(m.name + " served trimmed offset " + from + " (acknowledged trim " + m.trim + ")");
        }
        long expected = -1;
        for (StreamEntry e : r.entries()) {
            if (e.range().end() - e.range().start() != 1) {
                fail(m.name + " entry of one record covers " + e.range());
            }
            if (expected >= 0 && e.range().start() != expected) {
                fail(m.name + " read from " + from + " is not dense: " + e.range() + " after " + expected);
            }
            if (expected < 0 && e.range().start() != from) {
                fail(m.name + " read from " + from + " started at " + e.range());
            }
            if (e.range().start() < m.trim) {
                fail(m.name + " served trimmed offset " + e.range().start() + " (trim " + m.trim + ")");
            }
            expected = e.range().end();
            m.observe(this, e.range().start(), e.bytes());
        }
        m.seenEnd = Math.max(m.seenEnd, expected);
    }

    private void checkReadFailure(Model m, long from, Throwable error) {
        if (error instanceof NereusException n && (n.retriable() || n.code() == ErrorCode.CLOSED)) {
            return;
        }
        if (m.acked.containsKey(from) && !bookies.isDown()) {
            fail(m.name + " acknowledged offset " + from + " unreadable: " + error);
        }
    }

    private void checkCursor(Model m) {
        Outcome<Optional<CursorState>> o = outcome(broker.metadata.cursors().loadCursor(m.id, "sub"));
        if (o.value == null || m.cursorMarkDelete == 0 && m.cursorRanges.isEmpty()) {
            return;
        }
        CursorState s = o.value.orElse(null);
        if (s == null) {
            fail(m.name + " cursor lost (acknowledged mark-delete " + m.cursorMarkDelete + ")");
            return;
        }
        if (s.markDeleteEnd() < m.cursorMarkDelete) {
            fail(m.name + " cursor mark-delete went back to " + s.markDeleteEnd() + " from " + m.cursorMarkDelete);
        }
        for (OffsetRange acked : m.cursorRanges) {
            for (long x = Math.max(acked.start(), s.markDeleteEnd()); x < acked.end(); x++) {
                long offset = x;
                if (s.individuallyDeleted().stream().noneMatch(r -> r.start() <= offset && offset < r.end())) {
                    fail(m.name + " cursor lost acknowledged offset " + offset + " of " + acked + ": " + s);
                }
            }
        }
    }

    /** Simulated time one retry of a failed whole-stream read lets pass (slice recovery runs after it). */
    private static final Duration RECOVERY_ROUND = Duration.ofSeconds(10);
    /** Retries of a failed whole-stream read: together longer than a writer's lease (30 s). */
    private static final int RECOVERY_ROUNDS = 4;

    /** Reads every stream whole and checks every invariant; after crashes, fencing and at the end. */
    private void checkEverything() {
        for (Model m : models) {
            verifyStream(m);
            checkCursor(m);
            checkCompacted(m);
        }
    }

    private void verifyStream(Model m) {
        NereusStream s = broker.handle(m);
        if (s == null) {
            return;
        }
        checkHead(m);
        long from = m.seenTrim;
        int tries = 0;
        while (from < m.seenEnd) {
            Outcome<ReadResult> o = outcome(s.read(ReadView.COMMITTED, from, 64, 1L << 20,
                    BoundaryMode.CONTAINING_ENTRY));
            reads++;
            if (o.value == null) {
                if (o.error instanceof NereusException n && n.code() == ErrorCode.OFFSET_TRIMMED) {
                    checkHead(m);
                    from = Math.max(from, m.seenTrim);
                    continue;
                }
                checkReadFailure(m, from, o.error);
                if (bookies.isDown()) {
                    return; // bookies gone: the offsets stay checked by later steps
                }
                if (++tries > RECOVERY_ROUNDS) {
                    // every bookie is up, and the writer's lease ran out and slice recovery ran meanwhile
                    fail(m.name + " committed offset " + from + " unreadable with every bookie up: " + o.error);
                }
                // a slice whose last entry is torn opens only once closed: by its writer when the add times out,
                // by slice recovery (salvage) once a dead writer's lease ran out; let that happen
                loop.advance(RECOVERY_ROUND);
                settle(broker.storage.recoverAbandonedSlices());
                continue;
            }
            checkRead(m, from, o.value);
            if (o.value.entries().isEmpty()) {
                fail(m.name + " read at " + from + " below committed end " + m.seenEnd + " returned nothing");
            }
            from = o.value.nextOffset();
        }
        for (Map.Entry<Long, byte[]> e : m.acked.tailMap(m.seenTrim).entrySet()) {
            if (e.getKey() >= m.seenEnd) {
                fail(m.name + " acknowledged offset " + e.getKey() + " beyond committed end " + m.seenEnd);
            }
        }
    }

    void fail(String what) {
        throw new Violation(seed, step, what);
    }

    // ---------------------------------------------------------------- processes

    private Broker start(String writerId) {
        SimLoop.Process process = loop.process(writerId, engineRandom);
        KillableDatabase db = new KillableDatabase(fdb);
        Outcome<MetadataStore> opened = outcome(MetadataStore.open(db.database(), keyspace, process.lane("metadata")));
        if (opened.value == null) {
            fail("metadata store did not open: " + opened.error);
        }
        MetadataStore metadata = opened.value;
        SimBookKeeper bk = new SimBookKeeper(bookies, process.lane("bookkeeper"), clock::nanos, engineRandom);
        StreamStorage storage = StreamStorage.create(config, bk, metadata, objects, writerId, clock, WalObserver.NONE,
                process);
        Broker b = new Broker(writerId, process, db, bk, metadata, storage);
        for (Model m : models) {
            b.acquire(m);
        }
        return b;
    }

    /** One simulated broker process: its clients of the bookies and of the metadata, its storage, its handles. */
    private final class Broker {
        final String writerId;
        final SimLoop.Process process;
        final KillableDatabase db;
        final SimBookKeeper bk;
        final MetadataStore metadata;
        final StreamStorage storage;
        final Map<String, NereusStream> handles = new HashMap<>();
        final Map<String, Long> epochs = new HashMap<>();

        Broker(String writerId, SimLoop.Process process, KillableDatabase db, SimBookKeeper bk, MetadataStore metadata,
                StreamStorage storage) {
            this.writerId = writerId;
            this.process = process;
            this.db = db;
            this.bk = bk;
            this.metadata = metadata;
            this.storage = storage;
        }

        NereusStream handle(Model m) {
            NereusStream s = handles.get(m.name);
            if (s == null) {
                Outcome<NereusStream> o = outcome(storage.openStream(m.name));
                if (o.value == null) {
                    return null;
                }
                s = o.value;
                handles.put(m.name, s);
                if (m.id == null) {
                    m.id = s.id();
                }
            }
            return s;
        }

        void acquire(Model m) {
            NereusStream s = handle(m);
            if (s == null) {
                return;
            }
            Outcome<Long> epoch = outcome(s.acquireWriter());
            if (epoch.value != null) {
                epochs.put(m.name, epoch.value);
            } else {
                epochs.remove(m.name);
            }
        }

        /** The handle to append through; a handle left without a writer (its head unreadable) acquires it again. */
        NereusStream writable(Model m) {
            if (this == zombie) {
                return handles.get(m.name);
            }
            if (!epochs.containsKey(m.name)) {
                acquire(m);
            }
            return epochs.containsKey(m.name) ? handles.get(m.name) : null;
        }

        /**
         * The process dies: its clients make no more requests, and nothing of it runs again (what its lanes had
         * queued is dropped, replies to it included).
         */
        void crash() {
            bk.crash();
            db.kill();
            process.kill();
        }
    }

    // ---------------------------------------------------------------- futures

    private record Outcome<T>(T value, Throwable error) {
    }

    /**
     * Runs the loop until {@code f} is done (the step runs to its end); a step that can never finish is a liveness
     * violation, and so is a task that threw meanwhile.
     */
    private <T> Outcome<T> outcome(CompletableFuture<T> f) {
        try {
            loop.runUntil(f, AWAIT_LIMIT);
        } catch (SimLoop.Stuck e) {
            fail("a step can never finish: " + e.getMessage());
        }
        Throwable uncaught = loop.takeUncaught();
        if (uncaught != null) {
            Violation v = new Violation(seed, step, "an engine task threw: " + uncaught.getCause());
            v.initCause(uncaught);
            throw v;
        }
        try {
            return new Outcome<>(f.join(), null);
        } catch (CompletionException | java.util.concurrent.CancellationException e) {
            return new Outcome<>(null, Failures.unwrap(e));
        }
    }

    private <T> void settle(CompletableFuture<T> f) {
        outcome(f);
    }
}
