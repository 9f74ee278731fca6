package io.nereus.stream;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import org.junit.jupiter.api.Test;

class TailCacheTest {
    private static final StreamId A = StreamId.of(1);
    private static final StreamId B = StreamId.of(2);

    private static StreamEntry entry(long start, long records, int bytes) {
        return new StreamEntry(OffsetRange.of(start, start + records), new byte[bytes]);
    }

    private static void put(TailCache cache, StreamId stream, StreamEntry e) {
        cache.put(stream, e.range(), e.payload());
    }

    private static ByteBuf pooled(int bytes, int fill) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(bytes);
        for (int i = 0; i < bytes; i++) {
            b.writeByte(fill);
        }
        return b;
    }

    @Test
    void payloads_areRetainedWhileCached_andReleasedOnEvictionInvalidateAndClose() {
        TailCache cache = new TailCache(100);
        ByteBuf a0 = pooled(40, 1);
        ByteBuf a1 = pooled(40, 2);
        ByteBuf a2 = pooled(40, 3);
        ByteBuf b0 = pooled(10, 4);
        ByteBuf tooLarge = pooled(101, 5);
        ByteBuf overlapping = pooled(10, 6);
        cache.put(A, OffsetRange.single(0), a0);
        cache.put(A, OffsetRange.single(1), a1);
        cache.put(B, OffsetRange.single(0), b0);
        cache.put(B, OffsetRange.single(1), tooLarge); // not kept, not retained
        cache.put(A, OffsetRange.of(1, 3), overlapping); // not after A's last entry: not kept, not retained
        assertThat(List.of(a0.refCnt(), a1.refCnt(), b0.refCnt())).containsOnly(2);
        assertThat(tooLarge.refCnt()).isEqualTo(1);
        assertThat(overlapping.refCnt()).isEqualTo(1);

        StreamEntry hit = cache.get(A, 1).orElseThrow(); // a retained slice of the cached buffer, not a copy
        assertThat(hit.bytes()).containsOnly((byte) 2).hasSize(40);
        assertThat(a1.refCnt()).isEqualTo(3);

        cache.put(A, OffsetRange.single(2), a2); // 130 bytes: a0 is evicted and released
        assertThat(a0.refCnt()).isEqualTo(1);
        assertThat(cache.bytes()).isEqualTo(90);
        cache.invalidate(B);
        assertThat(b0.refCnt()).isEqualTo(1);
        assertThat(cache.bytes()).isEqualTo(80);
        cache.close();
        assertThat(a2.refCnt()).isEqualTo(1);
        assertThat(a1.refCnt()).isEqualTo(2); // the hit still holds its slice: the bytes stay valid
        assertThat(cache.bytes()).isZero();
        assertThat(hit.bytes()).containsOnly((byte) 2).hasSize(40);
        hit.release();
        assertThat(a1.refCnt()).isEqualTo(1);
        cache.put(A, OffsetRange.single(3), b0); // after close nothing is kept
        assertThat(b0.refCnt()).isEqualTo(1);
        assertThat(cache.stats().entries()).isZero();
        for (ByteBuf b : List.of(a0, a1, a2, b0, tooLarge, overlapping)) {
            assertThat(b.release()).isTrue();
        }
    }

    @Test
    void findsTheEntryContainingAnOffset_acrossManyEntriesOfAStream() {
        TailCache cache = new TailCache(1 << 20);
        for (int i = 0; i < 100; i++) {
            put(cache, A, entry(3L * i, 3, 10)); // entries of 3 records each: [0,3), [3,6), ...
        }
        for (long o = 0; o < 300; o++) {
            StreamEntry e = cache.get(A, o).orElseThrow();
            assertThat(e.range().contains(o)).isTrue();
            assertThat(e.range().start()).isEqualTo(o / 3 * 3);
        }
        assertThat(cache.get(A, 300)).isEmpty();
        assertThat(cache.get(B, 0)).isEmpty();
        TailCacheStats s = cache.stats();
        assertThat(s.entries()).isEqualTo(100);
        assertThat(s.bytes()).isEqualTo(1000);
        assertThat(s.hits()).isEqualTo(300);
        assertThat(s.misses()).isEqualTo(2);
    }

    @Test
    void evictsTheOldestInsertionsFirst_whicheverStreamTheyBelongTo() {
        TailCache cache = new TailCache(100);
        put(cache, A, entry(0, 1, 40));
        put(cache, B, entry(0, 1, 40));
        put(cache, A, entry(1, 1, 40)); // 120 bytes: A's first entry goes
        assertThat(cache.get(A, 0)).isEmpty();
        assertThat(cache.get(B, 0)).isPresent();
        assertThat(cache.get(A, 1)).isPresent();
        put(cache, A, entry(2, 1, 40)); // B's entry goes
        assertThat(cache.get(B, 0)).isEmpty();
        assertThat(cache.bytes()).isEqualTo(80);
        assertThat(cache.stats().evicted()).isEqualTo(2);
        // B's ring emptied and is gone; a new entry of B starts a new one
        put(cache, B, entry(1, 1, 10));
        assertThat(cache.get(B, 1)).isPresent();
    }

    @Test
    void ringWrapsAndGrows_keepingOffsetOrder() {
        TailCache cache = new TailCache(50 * 10);
        for (int i = 0; i < 1_000; i++) {
            put(cache, A, entry(i, 1, 10)); // the ring holds the last 50, wrapping many times
        }
        assertThat(cache.get(A, 949)).isEmpty();
        for (long o = 950; o < 1_000; o++) {
            assertThat(cache.get(A, o).orElseThrow().range().start()).isEqualTo(o);
        }
        cache.resize(2_000); // room for 200: the ring grows past its size while wrapped
        for (int i = 1_000; i < 1_150; i++) {
            put(cache, A, entry(i, 1, 10));
        }
        for (long o = 950; o < 1_150; o++) {
            assertThat(cache.get(A, o).orElseThrow().range().start()).isEqualTo(o);
        }
        assertThat(cache.stats().entries()).isEqualTo(200);
    }

    @Test
    void anEntryNotAfterTheStreamsLastOne_isNotCached() {
        TailCache cache = new TailCache(1_000);
        put(cache, A, entry(10, 5, 10));
        put(cache, A, entry(5, 5, 10)); // a late completion of an earlier session
        put(cache, A, entry(12, 5, 10)); // overlaps the last one
        assertThat(cache.get(A, 5)).isEmpty();
        assertThat(cache.get(A, 16)).isEmpty();
        assertThat(cache.get(A, 12).orElseThrow().range().start()).isEqualTo(10);
        assertThat(cache.bytes()).isEqualTo(10);
        assertThat(cache.stats().inserted()).isEqualTo(1);
    }

    @Test
    void invalidateAndShrinking_keepTheByteCountExact() {
        TailCache cache = new TailCache(1_000);
        for (int i = 0; i < 10; i++) {
            put(cache, A, entry(i, 1, 10));
            put(cache, B, entry(i, 1, 20));
        }
        assertThat(cache.bytes()).isEqualTo(300);
        cache.invalidate(A);
        assertThat(cache.bytes()).isEqualTo(200);
        assertThat(cache.get(A, 3)).isEmpty();
        assertThat(cache.stats().entries()).isEqualTo(10);
        cache.resize(100); // B's five oldest go
        assertThat(cache.bytes()).isEqualTo(100);
        assertThat(cache.get(B, 4)).isEmpty();
        assertThat(cache.get(B, 5)).isPresent();
        put(cache, A, entry(0, 1, 10)); // a stream invalidated starts afresh; 110 bytes: B's oldest goes
        assertThat(cache.get(A, 0)).isPresent();
        assertThat(cache.get(B, 5)).isEmpty();
        assertThat(cache.bytes()).isEqualTo(90);
        put(cache, B, entry(100, 1, 200)); // larger than the whole cache: not kept
        assertThat(cache.bytes()).isEqualTo(90);
    }

    @Test
    void bytes_countWhatTheCacheHolds_exactly_whileSlicesAreOutAndAfterEviction() {
        TailCache cache = new TailCache(100);
        ByteBuf a0 = pooled(30, 1);
        ByteBuf a1 = pooled(50, 2);
        ByteBuf a2 = pooled(45, 3);
        cache.put(A, OffsetRange.single(0), a0);
        cache.put(A, OffsetRange.single(1), a1);
        StreamEntry s0 = cache.get(A, 0).orElseThrow();
        StreamEntry s1 = cache.get(A, 1).orElseThrow();
        StreamEntry s1again = cache.get(A, 1).orElseThrow();
        assertThat(cache.bytes()).isEqualTo(80); // slices out change nothing
        assertThat(cache.stats().hitBytes()).isEqualTo(130);
        s1again.payload().readerIndex(10); // a slice's indices are its own: the cached entry is untouched
        StreamEntry s1third = cache.get(A, 1).orElseThrow();
        assertThat(s1third.size()).isEqualTo(50);
        s1third.release();

        cache.put(A, OffsetRange.single(2), a2); // 125 bytes: a0 is evicted while s0 is out
        assertThat(cache.bytes()).isEqualTo(95);
        assertThat(cache.stats().entries()).isEqualTo(2);
        assertThat(a0.refCnt()).isEqualTo(2); // the caller's and s0's
        assertThat(s0.bytes()).containsOnly((byte) 1).hasSize(30);

        cache.resize(50); // a1 goes too: only a2 (45 bytes) stays
        assertThat(cache.bytes()).isEqualTo(45);
        assertThat(s1.bytes()).containsOnly((byte) 2).hasSize(50);
        cache.clear();
        assertThat(cache.bytes()).isZero();
        for (StreamEntry e : List.of(s0, s1, s1again)) {
            e.release();
        }
        assertThat(List.of(a0.refCnt(), a1.refCnt(), a2.refCnt())).containsOnly(1);
        for (ByteBuf b : List.of(a0, a1, a2)) {
            assertThat(b.release()).isTrue();
        }
    }
}
