package io.nereus.object;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.Checksum;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StreamObjectFormatTest {
    private static final StreamId STREAM = StreamId.of(42);

    /** An object held in memory, counting the ranged reads made of it. */
    private static final class Stored implements StreamObjectReader.RangeSource {
        final byte[] bytes;
        final AtomicInteger reads = new AtomicInteger();
        final AtomicLong bytesRead = new AtomicLong();

        Stored(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public CompletableFuture<byte[]> read(long position, int length) {
            reads.incrementAndGet();
            bytesRead.addAndGet(length);
            int from = (int) Math.min(position, bytes.length);
            return CompletableFuture.completedFuture(Arrays.copyOfRange(bytes, from,
                    (int) Math.min(bytes.length, position + length)));
        }
    }

    /** {@code n} consecutive entries from offset 100, record counts 1..3, payloads of 0..maxPayload bytes. */
    private static List<StreamEntry> entries(int n, int maxPayload, long seed) {
        Random random = new Random(seed);
        List<StreamEntry> out = new ArrayList<>();
        long offset = 100;
        for (int i = 0; i < n; i++) {
            int records = 1 + random.nextInt(3);
            byte[] payload = new byte[random.nextInt(maxPayload + 1)];
            random.nextBytes(payload);
            out.add(new StreamEntry(new OffsetRange(offset, offset + records), payload));
            offset += records;
        }
        return out;
    }

    /** A dense object as the bytes a store holds, with what its writer said of it. */
    private record Written(byte[] bytes, OffsetRange range, Checksum checksum, int entries, int blocks) {
    }

    /** The object of {@code entries}, written through a builder of {@code writer} (its buffers released). */
    private static Written encode(StreamObjectWriter writer, StreamId stream, ReadView view, List<StreamEntry> entries) {
        try (StreamObjectWriter.Builder b = writer.builder(stream, view, UnpooledByteBufAllocator.DEFAULT)) {
            entries.forEach(b::add);
            return written(b.finish());
        }
    }

    private static Written written(StreamObjectWriter.Encoded e) {
        ByteBuffer all = ByteBuffer.allocate((int) e.length());
        for (ByteBuffer part : e.content().buffers()) {
            all.put(part);
        }
        return new Written(all.array(), e.range(), e.checksum(), e.entries(), e.blocks());
    }

    private static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new CompletionException(e.getCause());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static StreamObjectReader open(Stored stored, Checksum checksum, BlockCache cache) {
        return await(StreamObjectReader.open("obj", stored.bytes.length, checksum, stored, cache));
    }

    private static StreamObjectReader open(Gated gated, Checksum checksum, BlockCache cache) {
        return await(StreamObjectReader.open("obj", gated.bytes.length, checksum, gated, cache));
    }

    private static void assertCorrupt(Runnable r, String reason) {
        assertThatThrownBy(r::run).hasCauseInstanceOf(NereusException.class).cause().satisfies(e -> {
            NereusException n = (NereusException) e;
            assertThat(n.code()).isEqualTo(ErrorCode.CORRUPT_DATA);
            assertThat(n.context()).containsEntry("object", "obj").containsEntry("reason", reason);
        });
    }

    @Test
    void everyOffset_readsBackItsContainingEntryByteExact() {
        List<StreamEntry> written = entries(1_000, 600, 1);
        Written encoded = encode(new StreamObjectWriter(4096), STREAM, ReadView.COMMITTED, written);
        assertThat(encoded.range()).isEqualTo(new OffsetRange(100, written.get(999).range().end()));
        assertThat(encoded.blocks()).isGreaterThan(50);
        StreamObjectReader reader = open(new Stored(encoded.bytes()), encoded.checksum(), new BlockCache(1 << 20));
        assertThat(reader.stream()).isEqualTo(STREAM);
        assertThat(reader.view()).isEqualTo(ReadView.COMMITTED);
        assertThat(reader.range()).isEqualTo(encoded.range());
        for (StreamEntry e : written) {
            for (long o = e.range().start(); o < e.range().end(); o++) {
                List<StreamEntry> got = await(reader.read(o, 1, Long.MAX_VALUE));
                assertThat(got).hasSize(1);
                assertThat(got.get(0).range()).isEqualTo(e.range());
                assertThat(got.get(0).payload()).isEqualTo(e.payload());
            }
        }
        List<StreamEntry> all = await(reader.read(100, Integer.MAX_VALUE, Long.MAX_VALUE));
        assertThat(all).hasSize(1_000);
        for (int i = 0; i < all.size(); i++) {
            assertThat(all.get(i).range()).isEqualTo(written.get(i).range());
            assertThat(all.get(i).payload()).isEqualTo(written.get(i).payload());
        }
    }

    @Test
    void readOfOneEntry_fetchesTheTailAndOneBlock_notTheObject() {
        List<StreamEntry> written = entries(20_000, 600, 2);
        Written encoded = encode(new StreamObjectWriter(64 * 1024), STREAM, ReadView.COMMITTED,
                written);
        Stored stored = new Stored(encoded.bytes());
        StreamObjectReader reader = open(stored, encoded.checksum(), new BlockCache(1 << 20));
        assertThat(stored.reads).hasValue(1);
        StreamEntry middle = written.get(10_000);
        assertThat(await(reader.read(middle.range().start(), 1, Long.MAX_VALUE)).get(0).payload())
                .isEqualTo(middle.payload());
        assertThat(stored.reads).hasValue(2);
        // the 64 KiB tail, then one block of at most 64 KiB: about a tenth of this object
        assertThat(stored.bytesRead.get()).isLessThanOrEqualTo(2L * 64 * 1024)
                .isLessThan(encoded.bytes().length / 10);
    }

    @Test
    void sequentialReads_fetchEachBlockOnce() {
        List<StreamEntry> written = entries(2_000, 300, 3);
        Written encoded = encode(new StreamObjectWriter(2048), STREAM, ReadView.COMMITTED, written);
        Stored stored = new Stored(encoded.bytes());
        BlockCache cache = new BlockCache(1 << 20);
        StreamObjectReader reader = open(stored, encoded.checksum(), cache);
        long offset = 100;
        int got = 0;
        while (offset < encoded.range().end()) {
            List<StreamEntry> batch = await(reader.read(offset, 7, Long.MAX_VALUE));
            got += batch.size();
            offset = batch.get(batch.size() - 1).range().end();
        }
        assertThat(got).isEqualTo(2_000);
        assertThat(stored.reads).hasValue(1 + encoded.blocks());
        assertThat(cache.misses()).isEqualTo(encoded.blocks());
    }

    @Test
    void largeIndex_beyondTheTailRead_isFetchedWithOneMoreRead() {
        List<StreamEntry> written = entries(5_000, 10, 4);
        Written encoded = encode(new StreamObjectWriter(1), STREAM, ReadView.TOPIC_COMPACTED,
                written);
        assertThat(encoded.blocks()).isEqualTo(5_000); // an index of 140 KB, beyond the 64 KiB tail read
        Stored stored = new Stored(encoded.bytes());
        StreamObjectReader reader = open(stored, encoded.checksum(), new BlockCache(0));
        assertThat(stored.reads).hasValue(2);
        assertThat(reader.view()).isEqualTo(ReadView.TOPIC_COMPACTED);
        StreamEntry last = written.get(4_999);
        assertThat(await(reader.read(last.range().end() - 1, 5, Long.MAX_VALUE))).singleElement()
                .satisfies(e -> assertThat(e.payload()).isEqualTo(last.payload()));
    }

    @Test
    void maxBytes_limitsEntriesBeyondTheFirst() {
        List<StreamEntry> written = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            written.add(new StreamEntry(new OffsetRange(i, i + 1), new byte[100]));
        }
        Written encoded = encode(new StreamObjectWriter(250), STREAM, ReadView.COMMITTED, written);
        StreamObjectReader reader = open(new Stored(encoded.bytes()), encoded.checksum(), new BlockCache(1 << 20));
        assertThat(await(reader.read(0, 10, 0))).hasSize(1);
        assertThat(await(reader.read(2, 10, 350))).extracting(e -> e.range().start()).containsExactly(2L, 3L, 4L);
    }

    @Test
    void flippedByteInABlock_failsThatBlockOnly() {
        List<StreamEntry> written = entries(500, 200, 5);
        Written encoded = encode(new StreamObjectWriter(1024), STREAM, ReadView.COMMITTED, written);
        byte[] bytes = encoded.bytes().clone();
        bytes[StreamObjectFormat.HEADER_BYTES + 12] ^= 1; // inside the first block
        StreamObjectReader reader = open(new Stored(bytes), encoded.checksum(), new BlockCache(1 << 20));
        assertCorrupt(() -> await(reader.read(100, 1, Long.MAX_VALUE)), "block CRC-32C mismatch");
        StreamEntry last = written.get(499);
        assertThat(await(reader.read(last.range().start(), 1, Long.MAX_VALUE)).get(0).payload())
                .isEqualTo(last.payload());
    }

    @Test
    void flippedByteInTheIndex_orAnotherChecksum_failsTheOpen() {
        Written encoded = encode(new StreamObjectWriter(1024), STREAM, ReadView.COMMITTED,
                entries(100, 100, 6));
        byte[] bytes = encoded.bytes().clone();
        bytes[bytes.length - StreamObjectFormat.FOOTER_BYTES - 5] ^= 1; // last index entry
        assertCorrupt(() -> open(new Stored(bytes), encoded.checksum(), new BlockCache(0)), "index CRC-32C mismatch");
        Checksum other = Checksum.crc32c(encoded.checksum().value() ^ 1);
        assertCorrupt(() -> open(new Stored(encoded.bytes()), other, new BlockCache(0)),
                "index checksum is not the published one");
    }

    @Test
    void truncatedOrForeignObject_failsTheOpen() {
        Written encoded = encode(new StreamObjectWriter(1024), STREAM, ReadView.COMMITTED,
                entries(100, 100, 7));
        byte[] truncated = Arrays.copyOf(encoded.bytes(), encoded.bytes().length - 3);
        assertCorrupt(() -> open(new Stored(truncated), encoded.checksum(), new BlockCache(0)),
                "no stream object footer");
        byte[] foreign = new byte[4096];
        assertCorrupt(() -> open(new Stored(foreign), encoded.checksum(), new BlockCache(0)),
                "no stream object footer");
        assertCorrupt(() -> open(new Stored(new byte[10]), encoded.checksum(), new BlockCache(0)), "object too small");
    }

    @Test
    void readOutsideTheObject_isRefused() {
        Written encoded = encode(new StreamObjectWriter(1024), STREAM, ReadView.COMMITTED,
                entries(10, 10, 8));
        StreamObjectReader reader = open(new Stored(encoded.bytes()), encoded.checksum(), new BlockCache(0));
        assertThatThrownBy(() -> await(reader.read(99, 1, 10))).hasCauseInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("offset 99 is not in stream object obj");
        assertThatThrownBy(() -> await(reader.read(encoded.range().end(), 1, 10)))
                .hasCauseInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void encode_refusesAGapOrNoEntries() {
        StreamObjectWriter writer = new StreamObjectWriter(1024);
        List<StreamEntry> gap = List.of(new StreamEntry(new OffsetRange(0, 1), new byte[1]),
                new StreamEntry(new OffsetRange(2, 3), new byte[1]));
        assertThatThrownBy(() -> encode(writer, STREAM, ReadView.COMMITTED, gap))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("entry 1 starts at 2, expected 1");
        assertThatThrownBy(() -> encode(writer, STREAM, ReadView.COMMITTED, List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new StreamObjectWriter(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void builder_truncatedToAnyEntry_writesTheEntriesKeptAndThoseAddedAfter() {
        List<StreamEntry> written = entries(60, 300, 7);
        List<StreamEntry> other = entries(60, 300, 8);
        for (int keep : new int[] {0, 1, 9, 30, 59, 60}) {
            StreamObjectWriter writer = new StreamObjectWriter(1024);
            try (StreamObjectWriter.Builder b = writer.builder(STREAM, ReadView.COMMITTED,
                    UnpooledByteBufAllocator.DEFAULT)) {
                written.forEach(b::add);
                b.truncate(keep);
                assertThat(b.entries()).isEqualTo(keep);
                assertThat(b.payloadBytes()).isEqualTo(written.subList(0, keep).stream()
                        .mapToLong(StreamEntry::size).sum());
                // what follows the kept entries: the written ones' offsets, other bytes
                List<StreamEntry> expected = new ArrayList<>(written.subList(0, keep));
                for (int i = keep; i < written.size(); i++) {
                    StreamEntry e = new StreamEntry(written.get(i).range(), other.get(i).bytes());
                    b.add(e);
                    expected.add(e);
                }
                Written object = written(b.finish());
                StreamObjectReader reader = open(new Stored(object.bytes()), object.checksum(), new BlockCache(0));
                List<StreamEntry> read = await(reader.read(100, Integer.MAX_VALUE, Long.MAX_VALUE));
                assertThat(read).hasSize(expected.size());
                for (int i = 0; i < read.size(); i++) {
                    assertThat(read.get(i).range()).isEqualTo(expected.get(i).range());
                    assertThat(read.get(i).bytes()).as("entry %d of %d kept", i, keep)
                            .isEqualTo(expected.get(i).bytes());
                    assertThat(b.sameEntry(i, read.get(i))).isTrue();
                    if (expected.get(i).size() > 0) {
                        byte[] changed = expected.get(i).bytes();
                        changed[changed.length - 1] ^= 1;
                        assertThat(b.sameEntry(i, new StreamEntry(expected.get(i).range(), changed))).isFalse();
                    }
                    // a payload in direct memory, not an array, compares the same way
                    ByteBuf direct = UnpooledByteBufAllocator.DEFAULT.directBuffer(Math.max(1, read.get(i).size()))
                            .writeBytes(read.get(i).bytes());
                    StreamEntry inDirect = new StreamEntry(read.get(i).range(), direct);
                    assertThat(b.sameEntry(i, inDirect)).isTrue();
                    if (direct.writerIndex() > 0) {
                        direct.setByte(0, direct.getByte(0) ^ 1);
                        assertThat(b.sameEntry(i, inDirect)).isFalse();
                    }
                    inDirect.release();
                }
                StreamEntry.releaseAll(read);
                assertThatThrownBy(() -> b.add(other.get(0))).isInstanceOf(IllegalStateException.class);
            }
        }
    }

    @Test
    void builder_closeReleasesItsBuffers_whetherFinishedOrNot() {
        List<ByteBuf> allocated = new ArrayList<>();
        ByteBufAllocator alloc = new AbstractByteBufAllocator(true) {
            @Override
            protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
                throw new AssertionError("an object's blocks are direct buffers");
            }

            @Override
            protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
                ByteBuf b = Unpooled.directBuffer(initialCapacity, maxCapacity);
                allocated.add(b);
                return b;
            }

            @Override
            public boolean isDirectBufferPooled() {
                return false;
            }
        };
        StreamObjectWriter writer = new StreamObjectWriter(4096);
        StreamObjectWriter.Builder finished = writer.builder(STREAM, ReadView.COMMITTED, alloc);
        StreamObjectWriter.Builder dropped = writer.builder(STREAM, ReadView.COMMITTED, alloc);
        entries(200, 600, 3).forEach(e -> {
            finished.add(e);
            dropped.add(e);
        });
        finished.finish();
        assertThat(allocated).hasSizeGreaterThan(2 * 10).allMatch(b -> b.refCnt() == 1); // some 15 blocks each
        finished.close();
        dropped.close();
        dropped.close();
        assertThat(allocated).allMatch(b -> b.refCnt() == 0);
        assertThatThrownBy(dropped::finish).isInstanceOf(IllegalStateException.class);
    }

    /** An object whose ranged reads, while {@link #gated}, wait until the test releases or fails them. */
    private static final class Gated implements StreamObjectReader.RangeSource {
        private record Held(byte[] bytes, CompletableFuture<byte[]> future) {
        }

        final byte[] bytes;
        final List<Long> positions = new CopyOnWriteArrayList<>();
        final ConcurrentSkipListMap<Long, Held> held = new ConcurrentSkipListMap<>();
        volatile boolean gated;

        Gated(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public CompletableFuture<byte[]> read(long position, int length) {
            positions.add(position);
            byte[] out = Arrays.copyOfRange(bytes, (int) position, (int) (position + length));
            if (!gated) {
                return CompletableFuture.completedFuture(out);
            }
            CompletableFuture<byte[]> f = new CompletableFuture<>();
            held.put(position, new Held(out, f));
            return f;
        }

        /** Positions of the reads waiting, lowest first. */
        List<Long> waiting() {
            return List.copyOf(held.keySet());
        }

        void release(long position) {
            Held h = held.remove(position);
            h.future().complete(h.bytes());
        }

        void fail(long position) {
            held.remove(position).future().completeExceptionally(new IOException("refused at " + position));
        }
    }

    /** Entries of about 300 bytes, one per block: block {@code i} is entry {@code i}. */
    private static Written blockPerEntry(List<StreamEntry> written) {
        Written encoded = encode(new StreamObjectWriter(1), STREAM, ReadView.COMMITTED, written);
        assertThat(encoded.blocks()).isEqualTo(written.size());
        return encoded;
    }

    /** An object of one entry per block, opened through a {@link Gated} source that now holds every read. */
    private record GatedObject(List<StreamEntry> written, Gated source, BlockCache cache, StreamObjectReader reader) {
        static GatedObject of(int entries, long seed) {
            List<StreamEntry> written = entries(entries, 300, seed);
            Written encoded = blockPerEntry(written);
            Gated source = new Gated(encoded.bytes());
            BlockCache cache = new BlockCache(1 << 20, 2);
            StreamObjectReader reader = open(source, encoded.checksum(), cache);
            source.gated = true;
            return new GatedObject(written, source, cache, reader);
        }

        /** Reads {@code count} entries from entry (and block) {@code i}. */
        CompletableFuture<List<StreamEntry>> read(int i, int count) {
            return reader.read(written.get(i).range().start(), count, Long.MAX_VALUE);
        }

        ByteBuf payload(int i) {
            return written.get(i).payload();
        }

        /** Reads entry 0 with its block let through, and returns the two fetches ahead still held (blocks 1, 2). */
        List<Long> readBlockZero() {
            CompletableFuture<List<StreamEntry>> first = read(0, 1);
            List<Long> blocks012 = source.waiting();
            assertThat(blocks012).hasSize(3);
            source.release(blocks012.get(0));
            await(first);
            return blocks012.subList(1, 3);
        }
    }

    @Test
    void readAhead_fetchesTheNextBlocksWithTheFirst_andEachLaterOneBeforeTheReaderNeedsIt() {
        GatedObject o = GatedObject.of(20, 7);
        CompletableFuture<List<StreamEntry>> first = o.read(0, 1);
        List<Long> blocks012 = o.source().waiting();
        assertThat(blocks012).as("block 0 and the two after it, fetched together").hasSize(3);
        assertThat(first).isNotDone();
        blocks012.forEach(o.source()::release);
        assertThat(await(first)).singleElement().satisfies(e -> assertThat(e.payload()).isEqualTo(o.payload(0)));

        // every later block was fetched ahead: reading it finds it cached, and asks for the one two further on
        for (int i = 1; i < 20; i++) {
            CompletableFuture<List<StreamEntry>> next = o.read(i, 1);
            assertThat(next).as("block %d", i).isDone();
            assertThat(await(next).get(0).payload()).isEqualTo(o.payload(i));
            assertThat(o.source().waiting()).as("after block %d", i).hasSize(i + 2 < 20 ? 1 : 0);
            o.source().waiting().forEach(o.source()::release);
        }
        assertThat(o.source().positions).as("the tail, then every block once").hasSize(1 + 20).doesNotHaveDuplicates();
        assertThat(o.cache().readAheads()).isEqualTo(19);
    }

    @Test
    void readOfSeveralBlocks_fetchesThemAtOnce_andThoseAfterWhenSequential() {
        GatedObject o = GatedObject.of(30, 11);
        // from block 10, whose block before is not cached: its own four blocks at once, none after them
        CompletableFuture<List<StreamEntry>> middle = o.read(10, 4);
        assertThat(o.source().waiting()).hasSize(4);
        assertThat(middle).isNotDone();
        o.source().waiting().forEach(o.source()::release);
        assertThat(await(middle)).extracting(StreamEntry::range).containsExactly(
                o.written().subList(10, 14).stream().map(StreamEntry::range).toArray(OffsetRange[]::new));

        // from block 14, block 13 cached: its four blocks and the two after them
        CompletableFuture<List<StreamEntry>> next = o.read(14, 4);
        assertThat(o.source().waiting()).hasSize(6);
        o.source().waiting().forEach(o.source()::release);
        assertThat(await(next)).hasSize(4);
        assertThat(o.source().positions).as("the tail and blocks 10 to 19, each once").hasSize(11)
                .doesNotHaveDuplicates();
    }

    @Test
    void readAhead_aReaderNeedingABlockBeingFetchedAhead_waitsForThatFetch() {
        GatedObject o = GatedObject.of(10, 8);
        List<Long> blocks12 = o.readBlockZero();

        CompletableFuture<List<StreamEntry>> second = o.read(1, 1);
        assertThat(second).isNotDone();
        assertThat(o.source().positions).as("block 1 is not fetched a second time").containsOnlyOnce(blocks12.get(0));
        o.source().release(blocks12.get(0));
        assertThat(await(second).get(0).payload()).isEqualTo(o.payload(1));
    }

    @Test
    void readAhead_thatFails_isFetchedAgainByTheReaderThatNeedsTheBlock() {
        GatedObject o = GatedObject.of(10, 9);
        List<Long> blocks12 = o.readBlockZero();
        o.source().fail(blocks12.get(0));
        o.source().release(blocks12.get(1));
        o.source().gated = false;

        assertThat(await(o.read(1, 1)).get(0).payload()).isEqualTo(o.payload(1));
        assertThat(o.source().positions.stream().filter(blocks12.get(0)::equals)).as("fetched ahead, then again")
                .hasSize(2);
    }

    @Test
    void readAhead_notForAReadInTheMiddle_norWithoutACache() {
        List<StreamEntry> written = entries(10, 300, 10);
        Written encoded = blockPerEntry(written);
        Stored stored = new Stored(encoded.bytes());
        BlockCache cache = new BlockCache(1 << 20, 2);
        StreamObjectReader reader = open(stored, encoded.checksum(), cache);
        assertThat(await(reader.read(written.get(5).range().start(), 1, Long.MAX_VALUE))).hasSize(1);
        assertThat(stored.reads).as("the tail and block 5 alone").hasValue(2);
        assertThat(cache.readAheads()).isZero();

        assertThat(new BlockCache(0, 2).readAheadBlocks()).isZero();
        assertThatThrownBy(() -> new BlockCache(1 << 20, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("blocks read ahead must be >= 0: -1");
        Stored uncached = new Stored(encoded.bytes());
        StreamObjectReader plain = open(uncached, encoded.checksum(), new BlockCache(0, 2));
        assertThat(await(plain.read(written.get(0).range().start(), 1, Long.MAX_VALUE))).hasSize(1);
        assertThat(uncached.reads).as("the tail and block 0 alone").hasValue(2);
    }

    private static BlockCache.Decoded block(int bytes) {
        ByteBuf buffer = Unpooled.buffer(bytes).writeZero(bytes);
        return new BlockCache.Decoded(buffer, List.of(new StreamEntry(new OffsetRange(0, 1), buffer.slice(0, 1))));
    }

    @Test
    void blockCache_evictsLeastRecentlyUsedBeyondItsBytes() {
        BlockCache cache = new BlockCache(300);
        cache.put("a", 0, block(100));
        cache.put("a", 1, block(100));
        cache.put("a", 2, block(100));
        assertThat(cache.get("a", 0)).isNotNull(); // now most recently used
        cache.put("b", 0, block(150));
        assertThat(cache.get("a", 1)).isNull();
        assertThat(cache.get("a", 2)).isNull();
        assertThat(cache.get("a", 0)).isNotNull();
        assertThat(cache.bytes()).isEqualTo(250);
        cache.put("c", 0, block(301)); // larger than the cache: not kept
        assertThat(cache.get("c", 0)).isNull();
    }

    @Test
    void blockCache_fetchesAheadWithinHalfItsBound_untilTheBlocksAreReadEvictedOrNotCached() {
        BlockCache cache = new BlockCache(400, 4); // blocks fetched ahead and not yet read: at most 200 bytes
        CompletableFuture<Void> one = cache.startLoading("o", 1, 100);
        CompletableFuture<Void> two = cache.startLoading("o", 2, 100);
        assertThat(one).isNotNull();
        assertThat(two).isNotNull();
        assertThat(cache.startLoading("o", 2, 100)).as("already being fetched").isNull();
        assertThat(cache.startLoading("o", 3, 100)).as("beyond half the bound").isNull();

        // block 1 lands and is read: its room is free again
        BlockCache.Decoded landed = block(100);
        cache.put("o", 1, landed);
        landed.release();
        cache.loaded("o", 1, one);
        assertThat(one).isDone();
        assertThat(cache.startLoading("o", 1, 100)).as("cached").isNull();
        cache.get("o", 1).release();
        CompletableFuture<Void> three = cache.startLoading("o", 3, 100);
        assertThat(three).isNotNull();

        // block 2's fetch caches nothing (it failed): its room is free at once
        cache.loaded("o", 2, two);
        assertThat(cache.startLoading("o", 4, 100)).isNotNull();
        assertThat(cache.startLoading("o", 5, 100)).isNull();

        // block 3 lands and is evicted before anyone reads it: free again
        BlockCache.Decoded unread = block(100);
        cache.put("o", 3, unread);
        unread.release();
        cache.loaded("o", 3, three);
        BlockCache.Decoded large = block(400);
        cache.put("x", 0, large); // evicts blocks 1 and 3
        large.release();
        assertThat(cache.blocks()).isEqualTo(1);
        assertThat(cache.startLoading("o", 5, 100)).isNotNull();
    }

    /**
     * A block the object store read into pooled direct memory is taken over without a copy: its readable bytes are
     * the block, and the pooled buffer goes back to its pool with the block's last slice, not before.
     */
    @Test
    void blockCache_directBlock_isTheFetchedBytes_andReleasesThemWithItsLastSlice() {
        BlockCache cache = new BlockCache(250);
        ByteBuf fetched = PooledByteBufAllocator.DEFAULT.directBuffer(300);
        for (int i = 0; i < 300; i++) {
            fetched.writeByte(i);
        }
        fetched.setIndex(50, 250);
        ByteBuf block = cache.wrap(fetched);
        assertThat(block.isDirect()).isTrue();
        assertThat(ByteBufUtil.getBytes(block)).isEqualTo(ByteBufUtil.getBytes(fetched, 50, 200));
        assertThat(cache.liveBytes()).isEqualTo(200);
        ByteBuf slice = block.retainedSlice(10, 20);
        block.release();
        assertThat(fetched.refCnt()).as("held for the slice").isEqualTo(1);
        assertThat(cache.liveBytes()).isEqualTo(200);
        assertThat(slice.getByte(0)).isEqualTo((byte) 60);
        slice.release();
        assertThat(fetched.refCnt()).isZero();
        assertThat(cache.liveBytes()).isZero();
    }

    @Test
    void blockCache_holdsOneReferencePerBlock_andNeverFreesABlockWhileASliceIsOut() {
        BlockCache cache = new BlockCache(250);
        ByteBuf first = cache.wrap(Unpooled.wrappedBuffer(new byte[100]));
        BlockCache.Decoded a = new BlockCache.Decoded(first,
                List.of(new StreamEntry(new OffsetRange(0, 1), first.slice(0, 60)),
                        new StreamEntry(new OffsetRange(1, 2), first.slice(60, 40))));
        cache.put("a", 0, a);
        assertThat(first.refCnt()).isEqualTo(2); // the decoder's and the cache's
        a.release();
        BlockCache.Decoded got = cache.get("a", 0);
        assertThat(first.refCnt()).isEqualTo(2); // the cache's and the reader's
        StreamEntry slice = got.entries().get(1).retainedSlice();
        got.release();
        assertThat(cache.bytes()).isEqualTo(100); // slices out change nothing
        assertThat(cache.liveBytes()).isEqualTo(100);
        cache.put("b", 0, block(200)); // 300 bytes: "a" is evicted while the slice is out
        assertThat(cache.bytes()).isEqualTo(200);
        assertThat(cache.blocks()).isEqualTo(1);
        assertThat(first.refCnt()).isEqualTo(1); // the slice's: the block's memory stays valid
        assertThat(cache.liveBytes()).as("evicted, still referenced by the slice").isEqualTo(100);
        assertThat(slice.size()).isEqualTo(40);
        assertThat(slice.bytes()).hasSize(40);
        slice.release();
        assertThat(first.refCnt()).isZero();
        assertThat(cache.liveBytes()).isZero();
        cache.close();
        assertThat(cache.bytes()).isZero();
        assertThat(cache.blocks()).isZero();
        BlockCache.Decoded late = block(50);
        cache.put("c", 0, late); // a fetch ahead landing after close: not kept
        assertThat(cache.blocks()).isZero();
        assertThat(cache.startLoading("c", 1, 10)).as("nothing fetched ahead once closed").isNull();
        assertThat(late.buffer().refCnt()).isEqualTo(1);
        late.release();
    }

    /** Every other entry of {@link #entries}, so that the rest keep their offsets with gaps between them. */
    private static List<StreamEntry> sparseEntries(int n, int maxPayload, long seed) {
        List<StreamEntry> all = entries(2 * n, maxPayload, seed);
        List<StreamEntry> out = new ArrayList<>();
        for (int i = 1; i < all.size(); i += 2) {
            out.add(all.get(i));
        }
        return out;
    }

    @TempDir
    Path spillDir;

    /** A sparse object as the compactor writes it: through a {@link StreamObjectSpill}, entry by entry. */
    private record Sparse(byte[] bytes, Checksum checksum, OffsetRange range, int blocks) {
    }

    private Sparse sparse(OffsetRange coverage, List<StreamEntry> entries) throws IOException {
        Path file = Files.createTempFile(spillDir, "sparse", ".obj");
        try (StreamObjectSpill spill = StreamObjectSpill.create(file, STREAM, ReadView.TOPIC_COMPACTED, coverage,
                1024)) {
            for (StreamEntry e : entries) {
                spill.add(e);
            }
            StreamObjectSpill.Spilled done = spill.finish();
            return new Sparse(Files.readAllBytes(file), done.checksum(), done.range(), done.blocks());
        }
    }

    @Test
    void sparse_roundTripsEntriesAtTheirOffsets_andReadsFromAGap() throws Exception {
        List<StreamEntry> kept = sparseEntries(200, 300, 7);
        OffsetRange coverage = new OffsetRange(0, kept.get(kept.size() - 1).range().end() + 5);
        Sparse enc = sparse(coverage, kept);
        assertThat(enc.range()).isEqualTo(coverage);
        assertThat(enc.blocks()).isGreaterThan(1);
        StreamObjectReader r = open(new Stored(enc.bytes()), enc.checksum(), new BlockCache(1 << 20));
        assertThat(r.sparse()).isTrue();
        assertThat(r.range()).isEqualTo(coverage);
        assertThat(r.view()).isEqualTo(ReadView.TOPIC_COMPACTED);
        List<StreamEntry> all = await(r.read(0, Integer.MAX_VALUE, Long.MAX_VALUE));
        assertThat(all).hasSize(kept.size());
        for (int i = 0; i < kept.size(); i++) {
            assertThat(all.get(i).range()).isEqualTo(kept.get(i).range());
            assertThat(all.get(i).payload()).isEqualTo(kept.get(i).payload());
        }
        // an offset in the gap before entry 10 reads from entry 10 on
        long gap = kept.get(10).range().start() - 1;
        assertThat(kept.get(9).range().end()).isLessThanOrEqualTo(gap);
        assertThat(await(r.read(gap, 3, Long.MAX_VALUE))).extracting(StreamEntry::range)
                .containsExactly(kept.get(10).range(), kept.get(11).range(), kept.get(12).range());
        assertThat(await(r.read(coverage.end() - 1, 10, Long.MAX_VALUE))).as("after the last entry").isEmpty();
    }

    @Test
    void sparse_withoutEntries_coversItsRangeAndReadsNothing() throws Exception {
        Sparse enc = sparse(new OffsetRange(0, 50), List.of());
        StreamObjectReader r = open(new Stored(enc.bytes()), enc.checksum(), new BlockCache(0));
        assertThat(r.range()).isEqualTo(new OffsetRange(0, 50));
        assertThat(await(r.read(10, 10, Long.MAX_VALUE))).isEmpty();
    }

    @Test
    void sparse_refusesEntriesOutOfOrderOrOutsideTheCoverage() {
        StreamEntry a = new StreamEntry(new OffsetRange(5, 6), new byte[] {1});
        StreamEntry b = new StreamEntry(new OffsetRange(3, 4), new byte[] {2});
        assertThatThrownBy(() -> sparse(new OffsetRange(0, 10), List.of(a, b)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> sparse(new OffsetRange(0, 5), List.of(a)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void sparse_corruptEntryOffset_isCorruptData() throws Exception {
        List<StreamEntry> kept = List.of(new StreamEntry(new OffsetRange(3, 4), new byte[] {1}),
                new StreamEntry(new OffsetRange(8, 9), new byte[] {2}));
        Sparse enc = sparse(new OffsetRange(0, 10), kept);
        byte[] bytes = enc.bytes().clone();
        // the second entry's offset (after header 40, entry one 16 + 1) rewritten to 2, before the first's end
        java.nio.ByteBuffer.wrap(bytes).putLong(40 + 17, 2);
        // the block CRC no longer matches: a reader refuses the block before looking at offsets
        StreamObjectReader r = open(new Stored(bytes), enc.checksum(), new BlockCache(0));
        assertCorrupt(() -> await(r.read(0, 10, Long.MAX_VALUE)), "block CRC-32C mismatch");
    }
}
