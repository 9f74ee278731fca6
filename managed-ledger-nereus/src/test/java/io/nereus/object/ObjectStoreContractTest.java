package io.nereus.object;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract of {@link ObjectStore}, run against every implementation: a subclass opens a new, empty store
 * for each test. Large objects use {@link #LARGE_BYTES}, which a subclass's store writes in parts of
 * {@link #PART_BYTES} where it has parts.
 */
abstract class ObjectStoreContractTest {
    static final int PART_BYTES = 5 << 20;
    static final int LARGE_BYTES = 4 * PART_BYTES + 12_345;
    /** S3 reports modification times in whole seconds, and clocks of client and server may differ a little. */
    private static final Duration TIME_SLACK = Duration.ofSeconds(5);

    protected ObjectStore store;
    /** Where a test writes the files it puts as content. */
    @TempDir
    Path files;

    /** A new, empty store for the test named by {@code test}; closed after it. */
    protected abstract ObjectStore open(TestInfo test);

    @BeforeEach
    void openStore(TestInfo test) {
        store = open(test);
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    // ----------------------------------------------------------------------------------------- put and get

    @Test
    void putNew_thenGetWhole_returnsTheBytesAndTheStoredObject() {
        byte[] bytes = bytes(1000, 1);

        StoredObject stored = await(store.putNew(name("a/b/one"), ObjectContent.of(bytes)));

        assertThat(stored.name()).isEqualTo(name("a/b/one"));
        assertThat(stored.size()).isEqualTo(1000);
        assertThat(stored.version()).isNotBlank();
        assertThat(await(store.get(name("a/b/one"), ByteRange.of(0, 1000)))).isEqualTo(bytes);
    }

    @Test
    void putNew_contentOfSeveralChunks_isStoredConcatenated() {
        byte[] a = bytes(10, 1);
        byte[] b = new byte[0];
        byte[] c = bytes(7, 2);

        await(store.putNew(name("chunks"), ObjectContent.of(a, b, c)));

        assertThat(await(store.get(name("chunks"), ByteRange.of(0, 17)))).isEqualTo(concat(a, c));
    }

    @Test
    void get_ranges_returnExactlyThoseBytes_includingTheLastByte() {
        byte[] bytes = bytes(4096, 2);
        await(store.putNew(name("ranges"), ObjectContent.of(bytes)));

        assertThat(await(store.get(name("ranges"), ByteRange.of(0, 1)))).containsExactly(bytes[0]);
        assertThat(await(store.get(name("ranges"), ByteRange.of(100, 900))))
                .isEqualTo(Arrays.copyOfRange(bytes, 100, 1000));
        assertThat(await(store.get(name("ranges"), ByteRange.of(4095, 1)))).containsExactly(bytes[4095]);
        assertThat(await(store.get(name("ranges"), ByteRange.of(4000, 96))))
                .isEqualTo(Arrays.copyOfRange(bytes, 4000, 4096));
    }

    @Test
    void get_emptyRangeWithinTheObject_returnsNoBytes() {
        await(store.putNew(name("empty-range"), ObjectContent.of(bytes(10, 3))));

        assertThat(await(store.get(name("empty-range"), ByteRange.of(0, 0)))).isEmpty();
        assertThat(await(store.get(name("empty-range"), ByteRange.of(5, 0)))).isEmpty();
        assertThat(await(store.get(name("empty-range"), ByteRange.of(10, 0)))).isEmpty();
    }

    @Test
    void get_rangeEndingBeyondTheEnd_failsRangeNotSatisfiable() {
        await(store.putNew(name("short"), ObjectContent.of(bytes(10, 4))));

        for (ByteRange r : List.of(ByteRange.of(5, 6), ByteRange.of(0, 11), ByteRange.of(10, 1),
                ByteRange.of(20, 5), ByteRange.of(11, 0))) {
            NereusException e = failure(store.get(name("short"), r));
            assertThat(e.code()).as("%s", r).isEqualTo(ErrorCode.RANGE_NOT_SATISFIABLE);
            assertThat(e.context()).as("%s", r).containsEntry("name", name("short"))
                    .containsEntry("offset", r.offset()).containsEntry("length", r.length());
        }
    }

    /** {@link ObjectStore#getBuffer}: the bytes of {@link ObjectStore#get} in a buffer the caller releases. */
    @Test
    void getBuffer_ranges_returnExactlyThoseBytes_andFailAsGetDoes() {
        byte[] bytes = bytes(9000, 5);
        await(store.putNew(name("buffers"), ObjectContent.of(bytes)));

        for (long[] r : new long[][] {{0, 9000}, {0, 1}, {8999, 1}, {100, 900}, {4095, 2}, {4096, 4096}, {17, 0},
            {9000, 0}}) {
            ByteBuf b = await(store.getBuffer(name("buffers"), ByteRange.of(r[0], r[1])));
            try {
                assertThat(ByteBufUtil.getBytes(b)).as("[%d, +%d)", r[0], r[1])
                        .isEqualTo(Arrays.copyOfRange(bytes, (int) r[0], (int) (r[0] + r[1])));
            } finally {
                boolean freed = b.release(); // Netty's shared empty buffer is never freed
                assertThat(freed || r[1] == 0).as("the caller's is the only reference").isTrue();
            }
        }
        for (ByteRange r : List.of(ByteRange.of(8990, 11), ByteRange.of(9001, 0))) {
            assertThat(failure(store.getBuffer(name("buffers"), r)).code()).as("%s", r)
                    .isEqualTo(ErrorCode.RANGE_NOT_SATISFIABLE);
        }
        assertThat(failure(store.getBuffer(name("no-such"), ByteRange.of(0, 1))).code())
                .isEqualTo(ErrorCode.TARGET_MISSING);
    }

    @Test
    void putNew_emptyObject_isStoredAndListed() {
        StoredObject stored = await(store.putNew(name("zero"), ObjectContent.of()));

        assertThat(stored.size()).isZero();
        assertThat(await(store.get(name("zero"), ByteRange.of(0, 0)))).isEmpty();
        assertThat(failure(store.get(name("zero"), ByteRange.of(0, 1))).code())
                .isEqualTo(ErrorCode.RANGE_NOT_SATISFIABLE);
        assertThat(await(store.list("zero"))).extracting(ObjectInfo::size).containsExactly(0L);
    }

    @Test
    void get_missingObject_failsTargetMissing() {
        await(store.putNew(name("present"), ObjectContent.of(bytes(3, 5))));

        for (ByteRange r : List.of(ByteRange.of(0, 1), ByteRange.of(0, 0))) {
            NereusException e = failure(store.get(name("absent"), r));
            assertThat(e.code()).as("%s", r).isEqualTo(ErrorCode.TARGET_MISSING);
            assertThat(e.context()).containsEntry("name", name("absent"));
        }
        assertThat(failure(store.get(name("present/below"), ByteRange.of(0, 1))).code())
                .isEqualTo(ErrorCode.TARGET_MISSING);
    }

    // ---------------------------------------------------------------------------------------- no overwrite

    @Test
    void putNew_existingName_refusedObjectExists_oldContentIntact() {
        byte[] first = bytes(100, 6);
        await(store.putNew(name("once"), ObjectContent.of(first)));

        NereusException e = failure(store.putNew(name("once"), ObjectContent.of(bytes(50, 7))));

        assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_EXISTS);
        assertThat(e.retriable()).isFalse();
        assertThat(e.context()).containsEntry("name", name("once"));
        assertThat(await(store.get(name("once"), ByteRange.of(0, 100)))).isEqualTo(first);
        assertThat(await(store.list("once"))).extracting(ObjectInfo::size).containsExactly(100L);
    }

    @Test
    void putNew_concurrentPutsOfOneName_exactlyOneWins_andItsContentIsStored() throws Exception {
        int writers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<CompletableFuture<StoredObject>>> puts = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                byte[] content = bytes(2000 + i, 10 + i);
                puts.add(CompletableFuture.supplyAsync(() -> {
                    awaitLatch(go);
                    return store.putNew(name("raced"), ObjectContent.of(content));
                }, pool));
            }
            go.countDown();

            List<Integer> winners = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                CompletableFuture<StoredObject> put = await(puts.get(i));
                Throwable t = catchThrowable(() -> await(put));
                if (t == null) {
                    winners.add(i);
                } else {
                    assertThat(t).isInstanceOf(NereusException.class);
                    assertThat(((NereusException) t).code()).isEqualTo(ErrorCode.OBJECT_EXISTS);
                }
            }

            assertThat(winners).hasSize(1);
            int w = winners.get(0);
            assertThat(await(store.get(name("raced"), ByteRange.of(0, 2000 + w)))).isEqualTo(bytes(2000 + w, 10 + w));
            assertThat(await(store.list("raced"))).extracting(ObjectInfo::size).containsExactly(2000L + w);
        } finally {
            pool.shutdownNow();
        }
    }

    // --------------------------------------------------------------------------------------------- delete

    @Test
    void delete_removesTheObject_fromGetsAndListings() {
        await(store.putNew(name("d/gone"), ObjectContent.of(bytes(5, 8))));
        await(store.putNew(name("d/kept"), ObjectContent.of(bytes(6, 9))));

        await(store.delete(name("d/gone")));

        assertThat(failure(store.get(name("d/gone"), ByteRange.of(0, 1))).code()).isEqualTo(ErrorCode.TARGET_MISSING);
        assertThat(names(await(store.list("d/")))).containsExactly("d/kept");
    }

    @Test
    void delete_missingObject_succeeds_andRepeatingADeleteSucceeds() {
        await(store.putNew(name("twice"), ObjectContent.of(bytes(5, 8))));

        await(store.delete(name("never-put")));
        await(store.delete(name("twice")));
        await(store.delete(name("twice")));

        assertThat(await(store.list(""))).isEmpty();
    }

    @Test
    void putNew_afterDelete_createsTheNameAgain() {
        await(store.putNew(name("again"), ObjectContent.of(bytes(5, 1))));
        await(store.delete(name("again")));

        await(store.putNew(name("again"), ObjectContent.of(bytes(9, 2))));

        assertThat(await(store.get(name("again"), ByteRange.of(0, 9)))).isEqualTo(bytes(9, 2));
    }

    // -------------------------------------------------------------------------------------------- listing

    @Test
    void list_byPrefix_givesMatchingObjectsSortedWithSizesAndTimes() {
        Instant before = Instant.now();
        for (String n : List.of("s/2/b", "s/1/a", "s/10/c", "s/1/b", "t/1/a", "s-1")) {
            await(store.putNew(name(n), ObjectContent.of(bytes(n.length() * 10, n.hashCode()))));
        }
        Instant after = Instant.now();

        List<ObjectInfo> s1 = await(store.list("s/1"));

        assertThat(names(s1)).containsExactly("s/1/a", "s/1/b", "s/10/c");
        assertThat(s1).extracting(ObjectInfo::size).containsExactly(50L, 50L, 60L);
        assertThat(s1).allSatisfy(o -> assertThat(o.lastModified())
                .isBetween(before.minus(TIME_SLACK), after.plus(TIME_SLACK)));
        assertThat(names(await(store.list("s/1/")))).containsExactly("s/1/a", "s/1/b");
        assertThat(names(await(store.list("s")))).containsExactly("s-1", "s/1/a", "s/1/b", "s/10/c", "s/2/b");
        assertThat(names(await(store.list("")))).containsExactly("s-1", "s/1/a", "s/1/b", "s/10/c", "s/2/b", "t/1/a");
        assertThat(names(await(store.list("s/1/a")))).containsExactly("s/1/a");
        assertThat(await(store.list("u/"))).isEmpty();
        assertThat(await(store.list("s/3"))).isEmpty();
    }

    // ------------------------------------------------------------------------------------- large objects

    @Test
    void putNew_largeObject_storedWhole_andRangesAcrossPartBoundariesRead() {
        byte[] large = bytes(LARGE_BYTES, 42);

        StoredObject stored = await(store.putNew(name("large/one"), ObjectContent.of(
                Arrays.copyOfRange(large, 0, 3_000_000), Arrays.copyOfRange(large, 3_000_000, LARGE_BYTES))));

        assertThat(stored.size()).isEqualTo(LARGE_BYTES);
        assertThat(await(store.get(name("large/one"), ByteRange.of(0, LARGE_BYTES)))).isEqualTo(large);
        ByteRange acrossParts = ByteRange.of(PART_BYTES - 10, PART_BYTES + 20);
        assertThat(await(store.get(name("large/one"), acrossParts)))
                .isEqualTo(Arrays.copyOfRange(large, PART_BYTES - 10, 2 * PART_BYTES + 10));
        assertThat(await(store.get(name("large/one"), ByteRange.of(LARGE_BYTES - 1, 1))))
                .containsExactly(large[LARGE_BYTES - 1]);
        assertThat(await(store.list("large/"))).extracting(ObjectInfo::size).containsExactly((long) LARGE_BYTES);
    }

    @Test
    void putNew_largeObjectUnderAnExistingName_refused_oldContentIntact() {
        byte[] first = bytes(1000, 3);
        await(store.putNew(name("large/taken"), ObjectContent.of(first)));

        NereusException e = failure(store.putNew(name("large/taken"), ObjectContent.of(bytes(LARGE_BYTES, 4))));

        assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_EXISTS);
        assertThat(await(store.get(name("large/taken"), ByteRange.of(0, 1000)))).isEqualTo(first);
        assertThat(await(store.list("large/"))).extracting(ObjectInfo::size).containsExactly(1000L);
    }

    // ---------------------------------------------------------------------------------- a file's content

    @Test
    void putNew_fileContent_storesTheFilesFirstLengthBytes() throws IOException {
        byte[] bytes = bytes(1500, 5);
        Path file = files.resolve("small.spill");
        Files.write(file, bytes);

        StoredObject stored = await(store.putNew(name("file/small"), ObjectContent.ofFile(file, 1000)));

        assertThat(stored.size()).isEqualTo(1000);
        assertThat(await(store.get(name("file/small"), ByteRange.of(0, 1000))))
                .isEqualTo(Arrays.copyOf(bytes, 1000));
        assertThat(await(store.list("file/"))).extracting(ObjectInfo::size).containsExactly(1000L);
        assertThat(file).as("the file is the caller's").exists();
    }

    @Test
    void putNew_largeFileContent_storedWhole_andRangesAcrossPartBoundariesRead() throws IOException {
        byte[] large = bytes(LARGE_BYTES, 43);
        Path file = files.resolve("large.spill");
        Files.write(file, large);

        StoredObject stored = await(store.putNew(name("file/large"), ObjectContent.ofFile(file, LARGE_BYTES)));

        assertThat(stored.size()).isEqualTo(LARGE_BYTES);
        assertThat(await(store.get(name("file/large"), ByteRange.of(0, LARGE_BYTES)))).isEqualTo(large);
        assertThat(await(store.get(name("file/large"), ByteRange.of(2 * PART_BYTES - 7, 20))))
                .isEqualTo(Arrays.copyOfRange(large, 2 * PART_BYTES - 7, 2 * PART_BYTES + 13));
    }

    @Test
    void putNew_fileContentUnderAnExistingName_refused_oldContentIntact() throws IOException {
        byte[] first = bytes(100, 6);
        await(store.putNew(name("file/taken"), ObjectContent.of(first)));
        Path file = files.resolve("taken.spill");
        Files.write(file, bytes(200, 7));

        NereusException e = failure(store.putNew(name("file/taken"), ObjectContent.ofFile(file, 200)));

        assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_EXISTS);
        assertThat(await(store.get(name("file/taken"), ByteRange.of(0, 100)))).isEqualTo(first);
    }

    // ------------------------------------------------------------------------------------ bad arguments

    @Test
    void calls_withNullOrBadArguments_failTheirFuture_withoutThrowing() {
        assertThat(failed(store.putNew(null, ObjectContent.of()))).isInstanceOf(NullPointerException.class);
        assertThat(failed(store.putNew(name("x"), null))).isInstanceOf(NullPointerException.class);
        assertThat(failed(store.get(null, ByteRange.of(0, 1)))).isInstanceOf(NullPointerException.class);
        assertThat(failed(store.get(name("x"), null))).isInstanceOf(NullPointerException.class);
        assertThat(failed(store.get(name("x"), ByteRange.of(0, ObjectStore.MAX_GET_LENGTH + 1))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(failed(store.delete(null))).isInstanceOf(NullPointerException.class);
        assertThat(failed(store.list(null))).isInstanceOf(NullPointerException.class);
        for (String prefix : List.of("/a", "a//", "a/.", "A", "a b", "../x")) {
            assertThat(failed(store.list(prefix))).as(prefix).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void close_laterCallsFailClosed_andCloseIsIdempotent() {
        await(store.putNew(name("before-close"), ObjectContent.of(bytes(3, 1))));

        store.close();
        store.close();

        assertThat(failure(store.putNew(name("after"), ObjectContent.of())).code()).isEqualTo(ErrorCode.CLOSED);
        assertThat(failure(store.get(name("before-close"), ByteRange.of(0, 1))).code()).isEqualTo(ErrorCode.CLOSED);
        assertThat(failure(store.delete(name("before-close"))).code()).isEqualTo(ErrorCode.CLOSED);
        assertThat(failure(store.list("")).code()).isEqualTo(ErrorCode.CLOSED);
    }

    // ---------------------------------------------------------------------------------------------- helpers

    static ObjectName name(String n) {
        return ObjectName.of(n);
    }

    static List<String> names(List<ObjectInfo> listing) {
        return listing.stream().map(o -> o.name().value()).toList();
    }

    /** {@code length} pseudo-random bytes from {@code seed}: the same arguments give the same bytes. */
    static byte[] bytes(int length, int seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** What {@code f} failed with, unwrapped; fails the test when it succeeds or does not finish in 30 s. */
    static Throwable failed(CompletableFuture<?> f) {
        Throwable t = catchThrowable(() -> f.get(30, TimeUnit.SECONDS));
        assertThat(t).as("the future's failure").isNotNull();
        return Failures.unwrap(t);
    }

    /** The {@link NereusException} {@code f} failed with. */
    static NereusException failure(CompletableFuture<?> f) {
        Throwable t = failed(f);
        assertThat(t).isInstanceOf(NereusException.class);
        return (NereusException) t;
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
