package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.CompactionOutcome;
import io.nereus.metadata.CompactionRequest;
import io.nereus.metadata.GenerationIndexStore;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.PublicationRequest;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamHead;
import io.nereus.metadata.StreamId;
import io.nereus.object.BlockCache;
import io.nereus.object.ObjectContent;
import io.nereus.object.ObjectName;
import io.nereus.object.ObjectStore;
import io.nereus.object.ProcessFiles;
import io.nereus.object.StoredObject;
import io.nereus.object.StreamObjectReader;
import io.nereus.object.StreamObjectSpill;
import io.nereus.runtime.EngineRuntime;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Topic compaction as the {@link ReadView#TOPIC_COMPACTED} view of a stream: reads the previous compacted generation
 * and the committed offsets from its horizon to the committed end, twice (phase one finds the latest record of each
 * key, phase two keeps it, as the {@link CompactionPolicy} decides), writes what is kept as a sparse stream object
 * whose coverage is {@code [0, new horizon)} with every entry at its original offset, reads it back, and publishes
 * it with the horizon in one conditional transaction ({@link GenerationIndexStore#publishCompaction}).
 *
 * <p>Memory: the {@link KeyTable} (one entry per live key), never the topic nor what is kept: both phases and the
 * read-back read in chunks of at most {@value #READ_ENTRIES} entries and {@code READ_BYTES} (8 MiB) beyond the
 * first, and phase two writes each kept entry at once into a local spill file ({@link StreamObjectSpill}, holding a
 * {@value StreamObjectSpill#WRITE_BUFFER_BYTES}-byte write buffer and the block index, 28 bytes per block), which is
 * then put as the object ({@link ObjectContent#ofFile}: copied or uploaded in bounded pieces) and deleted;
 * {@link CompactionResult.Published#peakBufferedBytes} reports what the spill held at most. The read-back check
 * compares a SHA-256 of the kept entries' offsets and payloads, computed as they were written. The horizon never
 * moves backwards: the index refuses a publication that would not move it forward or that was made from another
 * compacted generation than the current one.
 *
 * <p>Threads: the policy runs on the compactor's own thread; the methods may be called from any thread and never
 * block. A compaction that fails leaves the current generation as it was; an object it wrote and did not publish
 * is garbage for the collector. The compactor never publishes an object later than {@code maxPublishDelay} after
 * writing it (the collector may delete unreferenced objects older than twice that).
 */
public final class TopicCompactor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TopicCompactor.class);
    /** Entries asked of one read. */
    static final int READ_ENTRIES = 1000;
    /** Payload bytes asked of one read (beyond its first entry). */
    static final long READ_BYTES = 8L << 20;

    /**
     * Reads committed entries of the stream from an offset: at most so many entries and, beyond the first, bytes. The
     * compactor owns the entries it gets and releases each one once the policy has seen it.
     */
    @FunctionalInterface
    public interface CommittedReader {
        CompletableFuture<List<StreamEntry>> read(long fromOffset, int maxEntries, long maxBytes);
    }

    private final GenerationIndexStore index;
    private final ObjectTargetReader reader;
    private final ObjectStore objects;
    private final int blockBytes;
    private final Path spillDir;
    private final Clock clock;
    private final Duration maxPublishDelay;
    private final Consumer<StreamId> published;
    private final EngineRuntime runtime;
    private final ExecutorService exec;
    private final ConcurrentHashMap<StreamId, AtomicLong> changes = new ConcurrentHashMap<>();

    /**
     * A compactor that spills the objects it writes into the JVM's temporary directory ({@code java.io.tmpdir}).
     *
     * @param reader          reads stream objects (the previous compacted generation, read-back verification uses the
     *                        object store directly)
     * @param blockBytes      target block size of the objects written
     * @param published       told of each stream whose compacted view changed (the resolver drops its cached records)
     * @param runtime         gives the compactor's thread ({@code nereus-compactor}) and the unique part of object names
     */
    public TopicCompactor(GenerationIndexStore index, ObjectTargetReader reader, ObjectStore objects, int blockBytes,
            Clock clock, Duration maxPublishDelay, Consumer<StreamId> published, EngineRuntime runtime) {
        this(index, reader, objects, blockBytes, ProcessFiles.tempDir(), clock,
                maxPublishDelay, published, runtime);
    }

    /**
     * @param spillDir an existing directory where each compaction writes its object before putting it: one file
     *                 per compaction running, named by the process id ({@link SpillFiles}), deleted when the
     *                 compaction ends. A process that died (a crash, a kill) leaves its files behind; the compactor
     *                 deletes, once when it starts, every such file in the directory whose process is no longer
     *                 running.
     */
    public TopicCompactor(GenerationIndexStore index, ObjectTargetReader reader, ObjectStore objects, int blockBytes,
            Path spillDir, Clock clock, Duration maxPublishDelay, Consumer<StreamId> published,
            EngineRuntime runtime) {
        this.index = Objects.requireNonNull(index, "index");
        this.reader = Objects.requireNonNull(reader, "reader");
        this.objects = Objects.requireNonNull(objects, "objects");
        if (blockBytes <= 0) {
            throw new IllegalArgumentException("stream object block target must be > 0 bytes: " + blockBytes);
        }
        this.blockBytes = blockBytes;
        this.spillDir = Objects.requireNonNull(spillDir, "spillDir");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.maxPublishDelay = Objects.requireNonNull(maxPublishDelay, "maxPublishDelay");
        this.published = Objects.requireNonNull(published, "published");
        this.runtime = runtime;
        this.exec = runtime.executor("nereus-compactor");
        exec.execute(() -> SpillFiles.removeAbandoned(spillDir));
    }

    /** The published compacted generation of {@code stream}; its range end is the horizon. Empty: never compacted. */
    public CompletableFuture<Optional<IndexRecord>> compactedRecord(StreamId stream) {
        return index.compactedRecord(stream);
    }

    /**
     * How many times this compactor changed the compacted view of {@code stream} (a publication or a
     * {@link #drop}); a reader that cached the view reads it again when this moved. Only this process's changes:
     * one broker owns a topic, and a new owner reads the view when it loads the topic. One counter per stream
     * ever compacted or dropped here (a few bytes each).
     */
    public long changes(StreamId stream) {
        AtomicLong c = changes.get(stream);
        return c == null ? 0 : c.get();
    }

    private void changed(StreamId stream) {
        changes.computeIfAbsent(stream, s -> new AtomicLong()).incrementAndGet();
        published.accept(stream);
    }

    /**
     * Removes the compacted view of {@code stream} (compaction disabled), see
     * {@link GenerationIndexStore#dropCompaction}: its records are retired in one transaction and their objects
     * collected after the grace period. A compaction running meanwhile is refused at its publication.
     *
     * @return the number of compacted generations retired
     */
    public CompletableFuture<Integer> drop(StreamId stream) {
        return index.dropCompaction(stream).thenApply(retired -> {
            changed(stream);
            if (!retired.isEmpty()) {
                LOG.info("dropped the compacted view: stream={} generations={}", stream, retired.size());
            }
            return retired.size();
        });
    }

    /**
     * Entries of the compacted generation {@code record} from the first one ending after {@code fromOffset}: at most
     * {@code maxEntries} and, beyond the first, {@code maxBytes} payload bytes; none past its last entry. Fails as a
     * {@link TargetReader} does (TARGET_MISSING once a newer generation replaced this one and its object was
     * collected: read the current record again). The entries are retained slices of the object's blocks, owned by
     * the caller ({@link StreamEntry}).
     */
    public CompletableFuture<List<StreamEntry>> read(IndexRecord record, long fromOffset, int maxEntries,
            long maxBytes) {
        if (record.view() != ReadView.TOPIC_COMPACTED || !record.range().contains(fromOffset)) {
            return CompletableFuture.completedFuture(List.of());
        }
        return reader.read(record, fromOffset, maxEntries, maxBytes);
    }

    /**
     * The last entry of the compacted generation {@code record}, owned by the caller as with {@link #read}; empty when
     * it keeps none. Fails as {@link #read}.
     */
    public CompletableFuture<Optional<StreamEntry>> last(IndexRecord record) {
        return reader.last(record);
    }

    /**
     * Compacts {@code stream} up to {@code head}'s committed end: the new horizon. Committed offsets between the
     * previous horizon and the trim point of {@code head} were trimmed before any compaction saw them and are not in
     * the result (Pulsar's compactor cannot read them either).
     *
     * @param committed reads the stream's committed entries
     */
    public CompletableFuture<CompactionResult> compact(StreamId stream, StreamHead head, CommittedReader committed,
            CompactionPolicy policy) {
        try {
            Objects.requireNonNull(stream, "stream");
            Objects.requireNonNull(head, "head");
            Objects.requireNonNull(committed, "committed");
            Objects.requireNonNull(policy, "policy");
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return index.compactedRecord(stream).thenComposeAsync(previous -> {
            long from = previous.map(IndexRecord::endOffset).orElse(0L);
            long end = head.committedEnd();
            if (end <= from) {
                return CompletableFuture.completedFuture(new CompactionResult.UpToDate(previous));
            }
            long committedFrom = Math.max(from, head.trimOffset());
            if (committedFrom > from) {
                LOG.warn("offsets trimmed before a compaction read them are not in the compacted view: stream={}"
                        + " horizon={} trimOffset={}", stream, from, head.trimOffset());
            }
            return new Run(stream, previous, committedFrom, end, committed, policy).run();
        }, exec);
    }

    /** One compaction; confined to {@link #exec}. */
    private final class Run {
        final StreamId stream;
        final Optional<IndexRecord> previous;
        final long committedFrom;
        final long end;
        final CommittedReader committed;
        final CompactionPolicy policy;
        final KeyTable keys = new KeyTable();
        final MessageDigest keptDigest = sha256();
        Path spillFile;
        StreamObjectSpill spill;
        long keptBytes;
        long entriesRead;
        final long started = clock.millis();

        Run(StreamId stream, Optional<IndexRecord> previous, long committedFrom, long end, CommittedReader committed,
                CompactionPolicy policy) {
            this.stream = stream;
            this.previous = previous;
            this.committedFrom = committedFrom;
            this.end = end;
            this.committed = committed;
            this.policy = policy;
        }

        CompletableFuture<CompactionResult> run() {
            return pass(e -> {
                entriesRead++;
                policy.scan(e, keys);
            }).thenCompose(ignored -> {
                openSpill();
                return pass(e -> policy.retain(e, keys).ifPresent(p -> keep(new StreamEntry(e.range(), p))));
            }).thenCompose(ignored -> writeAndPublish()).whenCompleteAsync((r, t) -> discardSpill(), exec);
        }

        private void openSpill() {
            try {
                spillFile = SpillFiles.create(spillDir);
                spill = StreamObjectSpill.create(spillFile, stream, ReadView.TOPIC_COMPACTED, new OffsetRange(0, end),
                        blockBytes);
            } catch (IOException e) {
                throw spillFailed(e);
            }
        }

        /** Phase two: {@code e} stays; it goes to the spill file at once, and into the digest verification checks. */
        private void keep(StreamEntry e) {
            try {
                spill.add(e);
            } catch (IOException x) {
                throw spillFailed(x);
            }
            digest(keptDigest, e);
            keptBytes += e.size();
        }

        private NereusException spillFailed(IOException e) {
            return new NereusException(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED, ErrorContext.of("stream", stream,
                    "file", spillFile, "operation", "spill", "reason", e.toString()), e);
        }

        private void discardSpill() {
            try {
                if (spill != null) {
                    spill.close();
                }
                if (spillFile != null) {
                    Files.deleteIfExists(spillFile);
                }
            } catch (IOException e) {
                LOG.warn("compaction spill file not removed: stream={} file={}", stream, spillFile, e);
            }
        }

        /** Every entry of the previous generation, then every committed one up to {@link #end}, in offset order. */
        CompletableFuture<Void> pass(Consumer<StreamEntry> each) {
            CompletableFuture<Void> done = new CompletableFuture<>();
            if (previous.isPresent()) {
                IndexRecord p = previous.get();
                step((o, n, b) -> reader.read(p, o, n, b), 0, p.endOffset(), true, each, () ->
                        step(committed, committedFrom, end, false, each, () -> done.complete(null), done), done);
            } else {
                step(committed, committedFrom, end, false, each, () -> done.complete(null), done);
            }
            return done;
        }

        /** Reads [{@code from}, {@code to}) chunk by chunk on {@link #exec}, then runs {@code then}. */
        private void step(CommittedReader source, long from, long to, boolean sparse, Consumer<StreamEntry> each,
                Runnable then, CompletableFuture<Void> failed) {
            if (from >= to) {
                then.run();
                return;
            }
            source.read(from, READ_ENTRIES, READ_BYTES).whenComplete((entries, error) -> {
                try {
                    exec.execute(() -> take(source, from, to, sparse, each, then, failed, entries, error));
                } catch (RejectedExecutionException e) {
                    if (entries != null) {
                        StreamEntry.releaseAll(entries); // the compactor closed: nobody takes them
                    }
                    failed.completeExceptionally(e);
                }
            });
        }

        /** One chunk read by {@link #step}: every entry goes to {@code each}, then is released, whatever happens. */
        private void take(CommittedReader source, long from, long to, boolean sparse, Consumer<StreamEntry> each,
                Runnable then, CompletableFuture<Void> failed, List<StreamEntry> entries, Throwable error) {
            if (error != null) {
                failed.completeExceptionally(Failures.unwrap(error));
                return;
            }
            long next = from;
            try {
                for (StreamEntry e : entries) {
                    if (e.range().start() >= to) {
                        next = to;
                        break;
                    }
                    if (e.range().end() <= next) {
                        continue;
                    }
                    each.accept(e);
                    next = e.range().end();
                }
                if (entries.isEmpty()) {
                    if (!sparse) {
                        throw new NereusException(ErrorCode.RETRIABLE_READ_FAILED, ErrorContext.of("stream",
                                stream, "offset", from, "why", "no committed entry read below " + to));
                    }
                    next = to;
                }
            } catch (RuntimeException e) {
                failed.completeExceptionally(e);
                return;
            } finally {
                StreamEntry.releaseAll(entries);
            }
            step(source, next, to, sparse, each, then, failed);
        }

        private CompletableFuture<CompactionResult> writeAndPublish() {
            StreamObjectSpill.Spilled spilled;
            try {
                spilled = spill.finish();
            } catch (IOException e) {
                throw spillFailed(e);
            }
            long peak = spill.peakBufferedBytes();
            ObjectName name = StreamObjectNames.newName(stream, ReadView.TOPIC_COMPACTED, spilled.range(),
                    runtime.uniqueId());
            long[] written = new long[1];
            return objects.putNew(name, ObjectContent.ofFile(spilled.file(), spilled.size())).thenCompose(stored -> {
                written[0] = clock.millis();
                return verify(stored, spilled).thenApply(ignored -> stored);
            }).thenCompose(stored -> {
                long waited = clock.millis() - written[0];
                if (waited > maxPublishDelay.toMillis()) {
                    throw new NereusException(ErrorCode.RETRIABLE_MATERIALIZATION_INCOMPLETE, ErrorContext.of(
                            "object", name, "why", "verified " + waited + " ms after it was written, later than "
                                    + maxPublishDelay.toMillis() + " ms an object may wait for its publication"));
                }
                return index.publishCompaction(new CompactionRequest(stream,
                        previous.map(PublicationRequest.SourceRef::of), end,
                        new ObjectTarget(name.value(), 0, stored.size(), stored.size(), stored.version()),
                        spilled.checksum(), spilled.entries(), keptBytes));
            }).thenComposeAsync(outcome -> {
                IndexRecord record = outcome instanceof CompactionOutcome.Publish p ? p.record()
                        : outcome instanceof CompactionOutcome.AlreadyPublished a ? a.record() : null;
                if (record != null) {
                    changed(stream);
                    LOG.info("published compacted generation: stream={} generation={} horizon={} keys={} kept={}"
                            + " bytes={} read={} peakBuffered={} object={} in {} ms", stream, record.generation(), end,
                            keys.size(), spilled.entries(), spilled.size(), entriesRead, peak, name,
                            clock.millis() - started);
                    return CompletableFuture.<CompactionResult>completedFuture(new CompactionResult.Published(record,
                            keys.size(), entriesRead, keptBytes, peak));
                }
                LOG.info("compaction refused, deleting its object: stream={} horizon={} object={} outcome={}", stream,
                        end, name, outcome);
                return objects.delete(name).handle((ignored, error) -> new CompactionResult.Refused(outcome));
            }, exec);
        }

        /**
         * Reads the stored object back through the reader every read uses, {@link #READ_ENTRIES} entries at a time,
         * and compares what it holds with what was kept: as many entries, the same offsets and payloads (a SHA-256
         * over both, computed as they were kept).
         */
        private CompletableFuture<Void> verify(StoredObject stored, StreamObjectSpill.Spilled spilled) {
            if (stored.size() != spilled.size()) {
                return CompletableFuture.failedFuture(corrupt(stored.name(), "stored size differs from written size"));
            }
            byte[] expected = keptDigest.digest();
            return StreamObjectReader.open(objects, stored.name(), stored.size(), spilled.checksum(), new BlockCache(0))
                    .thenCompose(r -> readBack(r, 0, sha256(), new long[1])).thenAccept(read -> {
                        if (read.count != spilled.entries()) {
                            throw corrupt(stored.name(), "read back " + read.count + " entries, wrote "
                                    + spilled.entries());
                        }
                        if (!MessageDigest.isEqual(read.digest, expected)) {
                            throw corrupt(stored.name(), "the entries read back differ from the ones written");
                        }
                    });
        }

        private CompletableFuture<ReadBack> readBack(StreamObjectReader r, long from, MessageDigest digest,
                long[] count) {
            if (from >= end) {
                return CompletableFuture.completedFuture(new ReadBack(count[0], digest.digest()));
            }
            return r.read(from, READ_ENTRIES, READ_BYTES).thenComposeAsync(entries -> {
                if (entries.isEmpty()) {
                    return CompletableFuture.completedFuture(new ReadBack(count[0], digest.digest()));
                }
                long next;
                try {
                    for (StreamEntry e : entries) {
                        digest(digest, e);
                    }
                    count[0] += entries.size();
                    next = entries.get(entries.size() - 1).range().end();
                } finally {
                    StreamEntry.releaseAll(entries);
                }
                return readBack(r, next, digest, count);
            }, exec);
        }
    }

    private record ReadBack(long count, byte[] digest) {
    }

    /** Adds {@code e}'s offset, record count and payload to {@code digest}. */
    private static void digest(MessageDigest digest, StreamEntry e) {
        byte[] head = new byte[16];
        ByteBuffer.wrap(head).putLong(e.range().start()).putInt((int) e.range().length()).putInt(e.size());
        digest.update(head);
        digest.update(e.payload().nioBuffer());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private static NereusException corrupt(ObjectName name, String reason) {
        return new NereusException(ErrorCode.CORRUPT_DATA, ErrorContext.of("object", name, "reason", reason));
    }

    @Override
    public void close() {
        exec.shutdownNow();
    }
}
