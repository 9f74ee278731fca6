package io.nereus.wal;

import io.nereus.object.DirectFiles;
import io.nereus.object.ProcessFiles;
import io.nereus.runtime.EngineRuntime;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Local copies ("mirrors") of the WAL slices this broker's writer writes, kept until the materializer has copied each
 * slice into objects, so that it reads a slice from local disk instead of from the bookies.
 *
 * <p>Why: the materializer reads every slice back once, soon after it seals. From BookKeeper each byte is read from
 * the bookie's entry log, copied into its read cache and its response, sent over a socket and received by the
 * broker; at 50,000 msg/s of one topic that read was a fifth of the broker's CPU (docs/benchmarks.md). The writer has
 * every batch in memory as it hands it to BookKeeper; copying it into an aligned buffer that goes to a local file
 * with direct I/O costs a memory copy and a little system time, and reading it back with direct I/O as little.
 *
 * <p>A mirror is a cache, never a source of truth: a slice without one (another writer's, one the space limit or a
 * failure dropped, every slice after a restart) is read from BookKeeper as before, and so is any read of a mirror
 * that fails. What a mirror serves is checked as BookKeeper's bytes are: {@link WalBatchCodec#decode} verifies each
 * batch's CRC32C over all its bytes and the slice id in its header, and the entry ids match BookKeeper's (the
 * writer's {@link Mirror#acked} drops a mirror whose batches were acknowledged under other ids, and one whose write
 * failed). A mirror is readable only once its slice is retired and every batch of it is in the file.
 *
 * <p>Layout: the batches back to back in entry order, their offsets in memory; written in aligned pieces of
 * {@value #STAGING_BYTES} bytes through staging buffers (as many as {@code stagingBytes} holds, made as needed), the
 * last padded to the filesystem's block. The writer's thread copies each batch into the current staging buffer and
 * never waits: when no buffer is free (the disk is behind) the batch is skipped, and so is every next one until a
 * buffer is free again; the mirror goes on with the batches after, and a read of entries that include a skipped one is
 * read from BookKeeper (the mirror keeps the entry ids: a skipped batch still takes its id, and a batch that had filled
 * the last free buffer when none was left for its rest leaves those bytes in the file, unread). One thread
 * ({@code nereus-wal-mirror}) writes, reads and deletes the files, in the order asked. A mirror reserves its slice's
 * size limit when it starts, and a slice whose reserve would take the mirrors' reserves past {@code maxBytes} is not
 * mirrored (the materializer is behind; mirroring it would only add disk writes). Files live in one directory, named by
 * process ({@code nereus-wal-mirror-<pid>-...}); those of processes no longer running are deleted at {@link #open},
 * this process's at {@link #closeAsync}.
 *
 * <p>Direct I/O is required: through the page cache each mirrored byte would cost a page the kernel must find and
 * fill, which on the machines measured cost more than the bookie's read it replaces. Where the directory's
 * filesystem refuses {@code O_DIRECT}, {@link #open} returns {@link #NONE} and says why.
 */
public final class SliceMirrors implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SliceMirrors.class);
    /** The file name prefix of mirror files; the process id and a random part follow. */
    public static final String PREFIX = "nereus-wal-mirror-";
    static final String SUFFIX = ".slice";
    /** Bytes of one staging buffer: each write to a file moves this much (the last of a slice less). */
    public static final int STAGING_BYTES = 1 << 20;

    /** Whether {@code bytes} of staging is a whole number of staging buffers, at least one (see {@link #open}). */
    public static boolean validStagingBytes(long bytes) {
        return bytes >= STAGING_BYTES && bytes % STAGING_BYTES == 0 && bytes / STAGING_BYTES <= Integer.MAX_VALUE;
    }
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    /** Probe files of this process so far: each open probes with a name of its own. */
    private static final AtomicLong PROBES = new AtomicLong();

    /** No mirrors: every slice is read from BookKeeper. */
    public static final SliceMirrors NONE = new SliceMirrors();

    private final Path dir;
    private final DirectFiles direct;
    private final int alignment;
    private final long maxBytes;
    /**
     * Staging buffers in all, made as needed: one per mirror being written, the rest waiting for the disk. The
     * default 128 (MiB) is about 0.4 s of a WAL written at 300 MB/s, which rides out most of the stalls of a disk the
     * bookie's own writes keep busy (32 did not at that rate; see docs/benchmarks.md).
     */
    private final int stagingBuffers;
    private final ExecutorService io;
    private final Map<Long, Mirror> mirrors = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<ByteBuffer> freeBuffers = new ConcurrentLinkedQueue<>();
    private final AtomicInteger buffersMade = new AtomicInteger();
    /** Bytes of batches held by the mirrors not dropped or released. */
    private final AtomicLong bytes = new AtomicLong();
    /** Bytes the mirrors not dropped or released reserved when they started: what admits a new one. */
    private final AtomicLong reserved = new AtomicLong();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder batchesSkipped = new LongAdder();
    private volatile boolean closed;
    /** Completes once the I/O thread has run its last task after {@link #closeAsync}. */
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();

    private SliceMirrors() {
        this.dir = null;
        this.direct = null;
        this.alignment = 1;
        this.maxBytes = 0;
        this.stagingBuffers = 0;
        this.io = null;
    }

    private SliceMirrors(Path dir, DirectFiles direct, long maxBytes, int stagingBuffers, ExecutorService io) {
        this.dir = dir;
        this.direct = direct;
        this.alignment = direct.alignment();
        this.maxBytes = maxBytes;
        this.stagingBuffers = stagingBuffers;
        this.io = io;
    }

    /**
     * Mirrors in {@code dir} (an existing directory) of at most {@code maxBytes} in all, written through at most
     * {@code stagingBytes} of staging buffers ({@link #STAGING_BYTES} each) and read on a thread of {@code runtime};
     * {@link #NONE} when {@code maxBytes} is 0 or the filesystem refuses direct I/O (logged). Deletes the mirror files
     * of processes no longer running.
     */
    public static SliceMirrors open(Path dir, long maxBytes, long stagingBytes, EngineRuntime runtime) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("WAL slice mirror bytes must be >= 0: " + maxBytes);
        }
        if (!validStagingBytes(stagingBytes)) {
            throw new IllegalArgumentException("WAL slice mirror staging bytes must be a positive multiple of "
                    + STAGING_BYTES + ": " + stagingBytes);
        }
        if (maxBytes == 0) {
            return NONE;
        }
        Optional<DirectFiles> direct = DirectFiles.probe(dir, PREFIX + ProcessHandle.current().pid() + "-probe"
                + PROBES.incrementAndGet() + SUFFIX);
        if (direct.isEmpty()) {
            LOG.info("WAL slices are not mirrored locally (the materializer reads them from BookKeeper): no direct"
                    + " I/O in dir={}", dir);
            return NONE;
        }
        ProcessFiles.removeAbandoned(dir, PREFIX, SUFFIX);
        LOG.info("WAL slices are mirrored locally for the materializer: dir={} maxBytes={} stagingBytes={}", dir,
                maxBytes, stagingBytes);
        return new SliceMirrors(dir, direct.get(), maxBytes, (int) (stagingBytes / STAGING_BYTES),
                runtime.executor("nereus-wal-mirror"));
    }

    /**
     * Starts the mirror of slice {@code sliceId}, which its writer is about to write from its first entry on, taking
     * batches while it holds less than {@code reserve} bytes (the slice's size limit); null when mirroring is off or
     * closed, or when that reserve does not fit beside the other mirrors' (the materializer is behind: the slice is
     * read from BookKeeper). Writer's thread.
     */
    Mirror start(long sliceId, long reserve) {
        if (io == null || closed) {
            return null;
        }
        if (reserved.addAndGet(reserve) > maxBytes) {
            reserved.addAndGet(-reserve);
            dropped.increment();
            LOG.info("WAL slice not mirrored, the mirrors of slices not yet materialized fill the space: slice={}"
                    + " reservedBytes={} sliceBytes={} maxBytes={}", sliceId, reserved.get(), reserve, maxBytes);
            return null;
        }
        Mirror m = new Mirror(sliceId, reserve);
        mirrors.put(sliceId, m);
        return m;
    }

    /**
     * The batches at entries {@code first..last} of slice {@code sliceId} read from its mirror, each a buffer of its
     * own that the caller releases; null when no readable mirror holds them all (one of them skipped, say: read them
     * from BookKeeper). The future
     * completes with null when the mirror was released or dropped before the read ran, and fails when the read does
     * (the mirror is then dropped); either way, read them from BookKeeper.
     */
    public CompletableFuture<List<ByteBuf>> read(long sliceId, long first, long last) {
        Mirror m = mirrors.get(sliceId);
        if (m == null || !m.readable || m.dropped || first < 0 || last < first || last >= m.entries
                || m.skips(first, last)) {
            return null;
        }
        CompletableFuture<List<ByteBuf>> out = new CompletableFuture<>();
        try {
            io.execute(() -> {
                try {
                    out.complete(m.readOnIo(first, last));
                } catch (IOException | RuntimeException e) {
                    m.drop("read failed: " + e);
                    out.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            return null;
        }
        return out;
    }

    /** Drops the mirror of slice {@code sliceId}, if any: the materializer has copied it, or it was deleted. */
    public void release(long sliceId) {
        Mirror m = mirrors.get(sliceId);
        if (m != null) {
            m.drop(null);
        }
    }

    /**
     * Drops the mirror of slice {@code sliceId}, if any, because what it served was wrong ({@code reason}): counted
     * and logged; the slice is read from BookKeeper from now on.
     */
    public void discard(long sliceId, String reason) {
        Mirror m = mirrors.get(sliceId);
        if (m != null) {
            m.drop(reason);
        }
    }

    /** Bytes the mirrors' files hold now: their batches, and the first part of any batch skipped partway. */
    public long bytes() {
        return bytes.get();
    }

    /** Bytes of batches served from mirrors so far. */
    public long bytesRead() {
        return bytesRead.sum();
    }

    /**
     * Slices not mirrored for want of space, and mirrors dropped before their slice was copied (a failure, a batch
     * under another entry id, a slice past its reserve).
     */
    public long droppedMirrors() {
        return dropped.sum();
    }

    /** Batches not mirrored because every staging buffer waited for the disk; read from BookKeeper. */
    public long skippedBatches() {
        return batchesSkipped.sum();
    }

    /** {@link #closeAsync}, not waiting for the files to be deleted. */
    @Override
    public void close() {
        closeAsync();
    }

    /**
     * Drops every mirror and ends the I/O thread once it has deleted their files. The future completes then (at once
     * when mirroring is off); the caller that waits for it before the process exits leaves no file behind (the I/O
     * thread is a daemon: an exit does not wait for it). Never fails.
     */
    public CompletableFuture<Void> closeAsync() {
        if (io == null) {
            return CompletableFuture.completedFuture(null);
        }
        synchronized (terminated) {
            if (closed) {
                return terminated;
            }
            closed = true;
        }
        for (Mirror m : mirrors.values()) {
            m.drop(null);
        }
        try {
            io.execute(() -> terminated.complete(null)); // after the deletes the drops queued
        } catch (RejectedExecutionException e) {
            terminated.complete(null);
        }
        io.shutdown();
        return terminated;
    }

    private ByteBuffer takeBuffer() {
        ByteBuffer b = freeBuffers.poll();
        if (b == null && buffersMade.getAndUpdate(n -> n < stagingBuffers ? n + 1 : n) < stagingBuffers) {
            // exactly STAGING_BYTES: an aligned slice of the larger buffer holds up to one alignment more when the
            // allocation happens to start aligned, and the file's pieces would then not all be STAGING_BYTES
            b = ByteBuffer.allocateDirect(STAGING_BYTES + alignment).alignedSlice(alignment).limit(STAGING_BYTES)
                    .slice();
        }
        return b == null ? null : b.clear();
    }

    private void giveBack(ByteBuffer b) {
        if (b != null) {
            freeBuffers.add(b);
        }
    }

    /**
     * The mirror of one slice. {@link #append}, {@link #acked} and {@link #finish} are called by the writer's thread,
     * in entry order; the file is written, read and deleted on the I/O thread; {@link #drop} from any thread.
     */
    final class Mirror {
        final long sliceId;
        /** Bytes reserved at the start: a batch is taken while the mirror holds less. */
        final long reserve;
        // writer's thread
        private ByteBuffer staging;
        /** Where {@link #staging}'s first byte goes in the file (a multiple of {@value #STAGING_BYTES}). */
        private long stagingAt;
        private long length;
        /** Offsets of the batches appended, and the end of the last: appended + 1 values. */
        private long[] offsets = new long[1024];
        private int appended;
        /** Bit per entry appended: set for a skipped batch; null while none was. */
        private long[] skips;
        // I/O thread
        private Path file;
        private FileChannel channel;
        // set on the I/O thread after the last write; index and entries are final once readable is
        private volatile long[] index;
        /** {@link #skips} as it was at the finish; null when no entry was skipped. */
        private volatile long[] skipBits;
        private volatile long entries;
        private volatile boolean readable;
        private volatile boolean dropped;
        private final AtomicBoolean dropping = new AtomicBoolean();
        /** Bytes this mirror added to {@link SliceMirrors#bytes}; -1 once they were taken off again. */
        private final AtomicLong counted = new AtomicLong();

        Mirror(long sliceId, long reserve) {
            this.sliceId = sliceId;
            this.reserve = reserve;
        }

        /**
         * Copies {@code data} (one batch, not consumed) as the next entry; returns the entry id it must be written as
         * in BookKeeper, -1 when this slice is no longer mirrored.
         */
        long append(ByteBuf data) {
            if (dropped) {
                return stop();
            }
            if (length >= reserve) {
                drop("the slice grew past the " + reserve + " bytes its mirror reserved");
                return stop();
            }
            int n = data.readableBytes();
            if (appended + 1 == offsets.length) {
                offsets = Arrays.copyOf(offsets, offsets.length * 2);
            }
            int entry = appended;
            offsets[entry] = length;
            int copied = n - copy(data, n);
            // what the file holds; not once a drop has taken off what was counted
            if (counted.getAndUpdate(c -> c < 0 ? c : c + copied) >= 0) {
                bytes.addAndGet(copied);
            }
            if (copied < n) {
                // a batch only part of which is in the file is skipped too; its bytes there are never read
                skip(entry);
            }
            appended++;
            offsets[appended] = length;
            return entry;
        }

        /**
         * Copies {@code data}'s {@code n} bytes at the end of the file as far as staging buffers are free; returns how
         * many were not (0: all copied). {@link #length} moves by what was copied, so a skipped batch's copied part
         * ends where the last buffer it filled ends, and the next buffer starts there.
         */
        private int copy(ByteBuf data, int n) {
            int from = data.readerIndex();
            int left = n;
            while (left > 0) {
                if (staging == null) {
                    staging = takeBuffer();
                    if (staging == null) {
                        return left;
                    }
                    stagingAt = length;
                }
                int chunk = Math.min(left, staging.remaining());
                ByteBuffer dst = staging.duplicate();
                dst.limit(dst.position() + chunk);
                data.getBytes(from, dst);
                staging.position(staging.position() + chunk);
                from += chunk;
                left -= chunk;
                length += chunk;
                if (!staging.hasRemaining()) {
                    write(staging, stagingAt);
                    staging = null;
                }
            }
            return 0;
        }

        /** Marks entry {@code entry} skipped: every staging buffer waits for the disk. */
        private void skip(int entry) {
            if (skips == null) {
                skips = new long[offsets.length >> 6];
                LOG.warn("WAL slice mirror skips batches while all {} staging buffers wait for the disk; those are"
                        + " read from BookKeeper: slice={} firstSkippedEntry={}", stagingBuffers, sliceId, entry);
            } else if ((entry >> 6) >= skips.length) {
                skips = Arrays.copyOf(skips, Math.max(skips.length * 2, (entry >> 6) + 1));
            }
            skips[entry >> 6] |= 1L << entry;
            batchesSkipped.increment();
        }

        /** Whether any of entries {@code first..last} was skipped; once readable. */
        boolean skips(long first, long last) {
            long[] bits = skipBits;
            if (bits == null) {
                return false;
            }
            for (long e = first; e <= last; e++) {
                int word = (int) (e >> 6);
                if (word < bits.length && (bits[word] & 1L << e) != 0) {
                    return true;
                }
            }
            return false;
        }

        /** Gives back the staging buffer of a mirror no longer written; -1. */
        private long stop() {
            giveBack(staging);
            staging = null;
            return -1;
        }

        /** BookKeeper acknowledged the batch mirrored as {@code mirroredAs} as entry {@code entryId}. */
        void acked(long mirroredAs, long entryId) {
            if (mirroredAs != entryId) {
                drop("the batch mirrored as entry " + mirroredAs + " was written as entry " + entryId);
            }
        }

        /** No more batches go to the slice: the rest is written, then the mirror can be read. */
        void finish() {
            if (dropped) {
                stop();
                return;
            }
            if (staging != null && staging.position() > 0) {
                int padded = (staging.position() + alignment - 1) & -alignment;
                while (staging.position() < padded) {
                    staging.put((byte) 0);
                }
                write(staging, stagingAt);
                staging = null;
            } else {
                stop();
            }
            long[] done = Arrays.copyOf(offsets, appended + 1);
            long[] holes = skips;
            long count = appended;
            onIo(() -> {
                if (!dropped) {
                    index = done;
                    skipBits = holes;
                    entries = count;
                    readable = true;
                }
            });
        }

        /** Drops the mirror: it serves no read from now on, and its file is deleted. {@code reason} null: released. */
        void drop(String reason) {
            if (!dropping.compareAndSet(false, true)) {
                return;
            }
            dropped = true;
            readable = false;
            mirrors.remove(sliceId, this);
            if (reason != null) {
                SliceMirrors.this.dropped.increment();
                LOG.warn("WAL slice mirror dropped, the slice will be read from BookKeeper: slice={} reason={}",
                        sliceId, reason);
            }
            Runnable delete = () -> {
                closeAndDelete();
                reserved.addAndGet(-reserve);
                bytes.addAndGet(-counted.getAndSet(-1));
            };
            try {
                io.execute(delete);
            } catch (RejectedExecutionException e) {
                delete.run(); // the I/O thread has ended: nothing else touches the file now
            }
        }

        private void write(ByteBuffer buffer, long at) {
            buffer.flip();
            onIo(() -> {
                try {
                    if (!dropped) {
                        if (channel == null) {
                            file = ProcessFiles.create(dir, PREFIX, SUFFIX);
                            channel = direct.openForReadingAndWriting(file);
                        }
                        long position = at;
                        while (buffer.hasRemaining()) {
                            position += channel.write(buffer, position);
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    drop("write failed: " + e);
                } finally {
                    giveBack(buffer);
                }
            });
        }

        /** Reads entries {@code first..last} into a buffer each, null when the mirror is gone; I/O thread. */
        private List<ByteBuf> readOnIo(long first, long last) throws IOException {
            long[] at = index;
            if (dropped || at == null || channel == null) {
                return null; // released or dropped since the read was asked for
            }
            long start = at[(int) first];
            long end = at[(int) last + 1];
            ByteBuf all = direct.readBuffer(channel, start, Math.toIntExact(end - start), ALLOC);
            try {
                List<ByteBuf> out = new ArrayList<>((int) (last - first + 1));
                for (long e = first; e <= last; e++) {
                    out.add(all.retainedSlice(all.readerIndex() + (int) (at[(int) e] - start),
                            (int) (at[(int) e + 1] - at[(int) e])));
                }
                bytesRead.add(end - start);
                return out;
            } finally {
                all.release();
            }
        }

        private void closeAndDelete() {
            try {
                if (channel != null) {
                    channel.close();
                }
                if (file != null) {
                    Files.deleteIfExists(file);
                }
            } catch (IOException e) {
                LOG.warn("WAL slice mirror file not deleted (deleted at the next start) file={}", file, e);
            }
        }

        private void onIo(Runnable task) {
            try {
                io.execute(task);
            } catch (RejectedExecutionException e) {
                // closed: close() dropped every mirror before ending the thread
            }
        }
    }
}
