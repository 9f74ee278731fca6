package io.nereus.object;

import static io.nereus.object.StreamObjectFormat.corrupt;

import io.nereus.metadata.Checksum;
import io.nereus.metadata.ChecksumType;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongConsumer;
import java.util.zip.CRC32C;

/**
 * Reads one stream object ({@link StreamObjectFormat}) through ranged reads: {@link #open} fetches the object's
 * tail (footer and, for all but very large objects, the index) and checks the index against the checksum the
 * generation index record holds; {@link #read} then fetches only the blocks it needs, each checked against its
 * CRC in the index, through a shared {@link BlockCache}, and hands out retained slices of the blocks (no copies).
 * Any mismatch fails CORRUPT_DATA naming the object and
 * the check, so the resolver can quarantine the record and fall back. A read fetches the blocks it needs at once, and
 * a read that goes on from the block before has the next blocks fetched ahead into the cache as well ({@link
 * BlockCache#readAheadBlocks}). Immutable after open (what is being fetched ahead is the cache's state): safe from any
 * thread.
 */
public final class StreamObjectReader {
    /** Bytes read from the end of the object at open: the footer and, usually, the whole index. */
    static final int TAIL_READ_BYTES = 64 * 1024;
    /** Blocks of one read fetched at once ahead of its walk, beyond its first (read-ahead not counted). */
    static final int MAX_BLOCKS_AT_ONCE = 8;

    /** Ranged reads of one stored object: {@code length} bytes from {@code position}, exactly. */
    public interface RangeSource {
        CompletableFuture<byte[]> read(long position, int length);

        /**
         * As {@link #read}, in a buffer whose readable bytes are those read, with one reference the caller releases:
         * how blocks are fetched. By default the array of {@link #read}, wrapped.
         */
        default CompletableFuture<ByteBuf> readBuffer(long position, int length) {
            return read(position, length).thenApply(Unpooled::wrappedBuffer);
        }

        /** Ranged gets of the object {@code name} in {@code store} ({@link ObjectStore#getBuffer} for blocks). */
        static RangeSource of(ObjectStore store, ObjectName name) {
            return of(store, name, bytes -> { });
        }

        /** As {@link #of(ObjectStore, ObjectName)}, telling {@code bytesRead} the length of every range read. */
        static RangeSource of(ObjectStore store, ObjectName name, LongConsumer bytesRead) {
            Objects.requireNonNull(store, "store");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(bytesRead, "bytesRead");
            return new RangeSource() {
                @Override
                public CompletableFuture<byte[]> read(long position, int length) {
                    return store.get(name, ByteRange.of(position, length)).thenApply(bytes -> {
                        bytesRead.accept(bytes.length);
                        return bytes;
                    });
                }

                @Override
                public CompletableFuture<ByteBuf> readBuffer(long position, int length) {
                    return store.getBuffer(name, ByteRange.of(position, length)).thenApply(bytes -> {
                        bytesRead.accept(bytes.readableBytes());
                        return bytes;
                    });
                }
            };
        }
    }

    /** Opens the stored object {@code name} of {@code store}, as {@link #open}. */
    public static CompletableFuture<StreamObjectReader> open(ObjectStore store, ObjectName name, long objectSize,
            Checksum expected, BlockCache cache) {
        try {
            return open(name.value(), objectSize, expected, RangeSource.of(store, name), cache);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private record Block(long first, long position, int length, int entries, int crc) {
    }

    private final String name;
    private final RangeSource source;
    private final BlockCache cache;
    private final StreamId stream;
    private final ReadView view;
    private final OffsetRange range;
    private final Block[] blocks;
    private final long[] firstOffsets;
    /** Version 2: entries carry their offsets, with gaps; {@link #range} is the coverage. */
    private final boolean sparse;

    private StreamObjectReader(String name, RangeSource source, BlockCache cache, StreamId stream, ReadView view,
            OffsetRange range, Block[] blocks, boolean sparse) {
        this.sparse = sparse;
        this.name = name;
        this.source = source;
        this.cache = cache;
        this.stream = stream;
        this.view = view;
        this.range = range;
        this.blocks = blocks;
        this.firstOffsets = Arrays.stream(blocks).mapToLong(Block::first).toArray();
    }

    /**
     * Opens the object {@code name} of {@code objectSize} bytes whose index must have checksum {@code expected}
     * (as the publishing index record stores it).
     */
    public static CompletableFuture<StreamObjectReader> open(String name, long objectSize, Checksum expected,
            RangeSource source, BlockCache cache) {
        try {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(expected, "expected");
            Objects.requireNonNull(source, "source");
            Objects.requireNonNull(cache, "cache");
            if (expected.type() != ChecksumType.CRC32C) {
                throw new IllegalArgumentException("stream objects are checked with CRC-32C, not " + expected.type());
            }
            if (objectSize < StreamObjectFormat.HEADER_BYTES * 2L + StreamObjectFormat.FOOTER_BYTES) {
                return CompletableFuture.failedFuture(corrupt(name, "object too small", "size", objectSize));
            }
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        int tailLength = (int) Math.min(objectSize, TAIL_READ_BYTES);
        long tailPosition = objectSize - tailLength;
        return source.read(tailPosition, tailLength).thenCompose(tail -> {
            checkLength(name, tail, tailLength, "tail");
            ByteBuffer footer = ByteBuffer.wrap(tail, tailLength - StreamObjectFormat.FOOTER_BYTES,
                    StreamObjectFormat.FOOTER_BYTES);
            long indexPosition = footer.getLong();
            int indexLength = footer.getInt();
            int indexCrc = footer.getInt();
            int reserved = footer.getInt();
            byte[] magic = new byte[4];
            footer.get(magic);
            if (!Arrays.equals(magic, StreamObjectFormat.FOOTER_MAGIC) || reserved != 0) {
                throw corrupt(name, "no stream object footer");
            }
            long indexEnd = objectSize - StreamObjectFormat.FOOTER_BYTES;
            if (indexLength < StreamObjectFormat.HEADER_BYTES
                    || (indexLength - StreamObjectFormat.HEADER_BYTES) % StreamObjectFormat.INDEX_ENTRY_BYTES != 0
                    || indexPosition < StreamObjectFormat.HEADER_BYTES || indexPosition + indexLength != indexEnd) {
                throw corrupt(name, "index bounds", "indexPosition", indexPosition, "indexLength", indexLength,
                        "size", objectSize);
            }
            if ((indexCrc & 0xFFFF_FFFFL) != expected.value()) {
                throw corrupt(name, "index checksum is not the published one", "stored",
                        Integer.toHexString(indexCrc), "published", Long.toHexString(expected.value()));
            }
            CompletableFuture<byte[]> index = indexPosition >= tailPosition
                    ? CompletableFuture.completedFuture(Arrays.copyOfRange(tail, (int) (indexPosition - tailPosition),
                            (int) (indexPosition - tailPosition) + indexLength))
                    : source.read(indexPosition, indexLength);
            return index.thenApply(bytes -> parseIndex(name, bytes, indexLength, indexPosition, indexCrc, source,
                    cache));
        });
    }

    private static StreamObjectReader parseIndex(String name, byte[] bytes, int indexLength, long indexPosition,
            int indexCrc, RangeSource source, BlockCache cache) {
        checkLength(name, bytes, indexLength, "index");
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        if ((int) crc.getValue() != indexCrc) {
            throw corrupt(name, "index CRC-32C mismatch", "stored", Integer.toHexString(indexCrc), "computed",
                    Long.toHexString(crc.getValue()));
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        byte[] magic = new byte[4];
        b.get(magic);
        int version = b.get() & 0xFF;
        int viewCode = b.get() & 0xFF;
        b.getShort();
        if (!Arrays.equals(magic, StreamObjectFormat.MAGIC)
                || (version != StreamObjectFormat.VERSION && version != StreamObjectFormat.SPARSE_VERSION)) {
            throw corrupt(name, "unknown stream object format", "version", version);
        }
        boolean sparse = version == StreamObjectFormat.SPARSE_VERSION;
        StreamId stream = StreamId.of(b.getLong());
        long first = b.getLong();
        long end = b.getLong();
        int entries = b.getInt();
        int blockCount = b.getInt();
        int indexed = (indexLength - StreamObjectFormat.HEADER_BYTES) / StreamObjectFormat.INDEX_ENTRY_BYTES;
        if (first < 0 || end <= first || entries < (sparse ? 0 : 1) || blockCount != indexed) {
            throw corrupt(name, "index header", "first", first, "end", end, "entries", entries, "blocks", blockCount);
        }
        ReadView view;
        try {
            view = ReadView.fromCode(viewCode);
        } catch (IllegalArgumentException e) {
            throw corrupt(name, "unknown view", "view", viewCode);
        }
        Block[] blocks = new Block[blockCount];
        long expectedPosition = StreamObjectFormat.HEADER_BYTES;
        long previousFirst = first - 1;
        long entriesSeen = 0;
        for (int i = 0; i < blockCount; i++) {
            Block k = new Block(b.getLong(), b.getLong(), b.getInt(), b.getInt(), b.getInt());
            if (k.position() != expectedPosition || k.length() <= 0 || k.entries() <= 0 || k.first() <= previousFirst
                    || k.first() >= end || (i == 0 && !sparse && k.first() != first)) {
                throw corrupt(name, "block index", "block", i);
            }
            expectedPosition += k.length();
            previousFirst = k.first();
            entriesSeen += k.entries();
            blocks[i] = k;
        }
        if (expectedPosition != indexPosition || entriesSeen != entries) {
            throw corrupt(name, "blocks do not fill the object", "blocksEnd", expectedPosition, "indexPosition",
                    indexPosition, "entries", entries, "indexed", entriesSeen);
        }
        return new StreamObjectReader(name, source, cache, stream, view, new OffsetRange(first, end), blocks, sparse);
    }

    private static void checkLength(String name, byte[] got, int expected, String what) {
        if (got.length != expected) {
            throw corrupt(name, "short read", "part", what, "expected", expected, "read", got.length);
        }
    }

    public StreamId stream() {
        return stream;
    }

    public ReadView view() {
        return view;
    }

    /** The offsets the object holds (dense) or covers (sparse). */
    public OffsetRange range() {
        return range;
    }

    /** True for a sparse object (version 2): entries at their own offsets, with gaps. */
    public boolean sparse() {
        return sparse;
    }

    /**
     * Entries from the one containing {@code offset} (in a sparse object: from the first ending after
     * {@code offset}, so possibly none): at most {@code maxEntries} and, beyond the first, at most {@code maxBytes}
     * payload bytes; fewer at the object's end. Fetches only the blocks those entries are in. Each entry's payload is
     * a retained slice of its block (no copy), owned by the caller ({@link StreamEntry}); a failed read hands out
     * nothing.
     */
    public CompletableFuture<List<StreamEntry>> read(long offset, int maxEntries, long maxBytes) {
        if (!range.contains(offset)) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("offset " + offset
                    + " is not in stream object " + name + " " + range));
        }
        if (maxEntries <= 0) {
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "entries to read must be > 0: " + maxEntries));
        }
        if (blocks.length == 0) {
            return CompletableFuture.completedFuture(List.of());
        }
        int at = Arrays.binarySearch(firstOffsets, offset);
        int block = Math.max(0, at >= 0 ? at : -at - 2);
        fetchAhead(block, maxEntries, maxBytes);
        List<StreamEntry> out = new ArrayList<>();
        return readFrom(block, offset, out, 0, maxEntries, maxBytes).whenComplete((read, error) -> {
            if (error != null) {
                StreamEntry.releaseAll(out);
            }
        });
    }

    private CompletableFuture<List<StreamEntry>> readFrom(int block, long offset, List<StreamEntry> out, long bytes,
            int maxEntries, long maxBytes) {
        return block(block).thenCompose(b -> {
            long taken = bytes;
            try {
                for (StreamEntry e : b.entries()) {
                    if (e.range().end() <= offset) {
                        continue;
                    }
                    if (out.size() >= maxEntries || (!out.isEmpty() && taken + e.size() > maxBytes)) {
                        return CompletableFuture.completedFuture(out);
                    }
                    out.add(e.retainedSlice());
                    taken += e.size();
                }
            } finally {
                b.release();
            }
            if (block + 1 >= blocks.length || out.size() >= maxEntries) {
                return CompletableFuture.completedFuture(out);
            }
            return readFrom(block + 1, offset, out, taken, maxEntries, maxBytes);
        });
    }

    /**
     * The object's last entry, owned by the caller as with {@link #read}; empty when it holds none (a sparse object).
     * Fetches only the last block.
     */
    public CompletableFuture<java.util.Optional<StreamEntry>> last() {
        if (blocks.length == 0) {
            return CompletableFuture.completedFuture(java.util.Optional.empty());
        }
        return block(blocks.length - 1).thenApply(b -> {
            try {
                return java.util.Optional.of(b.entries().get(b.entries().size() - 1).retainedSlice());
            } finally {
                b.release();
            }
        });
    }

    /** The entries of block {@code i}, from the cache or fetched and checked, with a reference the caller releases. */
    private CompletableFuture<BlockCache.Decoded> block(int i) {
        BlockCache.Decoded cached = cache.get(name, i);
        if (cached != null) {
            return CompletableFuture.completedFuture(cached);
        }
        CompletableFuture<Void> ahead = cache.loading(name, i);
        if (ahead == null) {
            return fetch(i);
        }
        // fetched ahead right now: taken from the cache once there; fetched again only if it failed or left already
        return ahead.thenCompose(ignored -> {
            BlockCache.Decoded landed = cache.get(name, i);
            return landed != null ? CompletableFuture.completedFuture(landed) : fetch(i);
        });
    }

    /**
     * Starts fetching, ahead of the walk through them, the blocks after {@code first} that the read will likely need
     * (while the index's entry counts and block lengths stay within its bounds; at most {@value #MAX_BLOCKS_AT_ONCE}
     * blocks), all at once, and, when the read looks sequential (it starts at the object's first block, or the block
     * before is cached: the reader, or another, has just been through it), {@link BlockCache#readAheadBlocks} blocks
     * after those, for the reader's next read. Only blocks neither cached nor being fetched, and only while the cache's
     * budget for blocks fetched ahead lasts ({@link BlockCache#startLoading}); none when the cache reads nothing ahead.
     * A fetch ahead that fails is dropped: the walk then fetches the block itself and reports what fails.
     */
    private void fetchAhead(int first, int maxEntries, long maxBytes) {
        int ahead = cache.readAheadBlocks();
        if (ahead == 0) {
            return;
        }
        int last = first;
        long entries = blocks[first].entries();
        long bytes = blocks[first].length();
        while (last + 1 < blocks.length && last - first < MAX_BLOCKS_AT_ONCE && entries < maxEntries
                && bytes < maxBytes) {
            last++;
            entries += blocks[last].entries();
            bytes += blocks[last].length();
        }
        if (first == 0 || cache.holds(name, first - 1)) {
            last += ahead;
        }
        for (int j = first + 1; j <= last && j < blocks.length; j++) {
            CompletableFuture<Void> mine = cache.startLoading(name, j, blocks[j].length());
            if (mine == null) {
                continue;
            }
            int block = j;
            CompletableFuture<BlockCache.Decoded> fetched;
            try {
                fetched = fetch(block);
            } catch (RuntimeException e) {
                fetched = CompletableFuture.failedFuture(e);
            }
            fetched.whenComplete((decoded, error) -> {
                if (decoded != null) {
                    decoded.release(); // the cache holds its own reference
                }
                cache.loaded(name, block, mine);
            });
        }
    }

    /** Block {@code i} fetched from the source, checked and cached, with a reference the caller releases. */
    private CompletableFuture<BlockCache.Decoded> fetch(int i) {
        Block k = blocks[i];
        long end = i + 1 < blocks.length ? blocks[i + 1].first() : range.end();
        return source.readBuffer(k.position(), k.length()).thenApply(bytes -> {
            BlockCache.Decoded decoded = decodeBlock(i, k, end, bytes);
            cache.put(name, i, decoded);
            return decoded;
        });
    }

    /**
     * The block's entries, checked; their payloads are slices of the block's stored bytes, {@code fetched}'s readable
     * bytes, which {@link BlockCache#wrap} takes over without a copy (so the block is never copied again on its way to
     * a reader), and the caller owns the one reference to the result. A block that fails its checks is released here.
     */
    private BlockCache.Decoded decodeBlock(int i, Block k, long end, ByteBuf fetched) {
        ByteBuf buffer = cache.wrap(fetched);
        try {
            if (buffer.readableBytes() != k.length()) {
                throw corrupt(name, "short read", "part", "block " + i, "expected", k.length(), "read",
                        buffer.readableBytes());
            }
            CRC32C crc = new CRC32C();
            crc.update(buffer.nioBuffer());
            if ((int) crc.getValue() != k.crc()) {
                throw corrupt(name, "block CRC-32C mismatch", "block", i, "stored", Integer.toHexString(k.crc()),
                        "computed", Long.toHexString(crc.getValue()));
            }
            return new BlockCache.Decoded(buffer, entries(i, k, end, buffer));
        } catch (RuntimeException e) {
            buffer.release();
            throw e;
        }
    }

    private List<StreamEntry> entries(int i, Block k, long end, ByteBuf buffer) {
        int at = buffer.readerIndex();
        int stop = buffer.writerIndex();
        List<StreamEntry> entries = new ArrayList<>(k.entries());
        long next = k.first();
        for (int n = 0; n < k.entries(); n++) {
            if (stop - at < (sparse ? StreamObjectFormat.SPARSE_ENTRY_HEADER_BYTES
                    : StreamObjectFormat.ENTRY_HEADER_BYTES)) {
                throw corrupt(name, "block truncated", "block", i, "entry", n);
            }
            if (sparse) {
                long offset = buffer.getLong(at);
                at += Long.BYTES;
                if (offset < next || (n == 0 && offset != k.first())) {
                    throw corrupt(name, "sparse entry offset", "block", i, "entry", n, "offset", offset, "min",
                            next);
                }
                next = offset;
            }
            int records = buffer.getInt(at);
            int length = buffer.getInt(at + Integer.BYTES);
            at += 2 * Integer.BYTES;
            if (records <= 0 || length < 0 || length > stop - at || next + records > end) {
                throw corrupt(name, "entry header", "block", i, "entry", n, "records", records, "length", length);
            }
            entries.add(new StreamEntry(new OffsetRange(next, next + records), buffer.slice(at, length)));
            at += length;
            next += records;
        }
        if (at != stop || (sparse ? next > end : next != end)) {
            throw corrupt(name, "block does not end where the next begins", "block", i, "end", next,
                    "expected", end);
        }
        return List.copyOf(entries);
    }
}
