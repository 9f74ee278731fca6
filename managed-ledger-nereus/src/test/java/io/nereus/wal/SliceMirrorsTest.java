package io.nereus.wal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.nereus.testing.StreamTesting.mirrorReadable;
import static org.awaitility.Awaitility.await;

import io.nereus.runtime.EngineRuntime;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local mirrors of WAL slices on the real filesystem: what the writer's thread appends reads back byte for byte
 * once the slice is finished (batches across the staging buffers' boundaries, composite buffers, any range of
 * entries), nothing before; batches that find every staging buffer waiting for the disk are skipped, and only reads
 * of them refused; a slice whose reserve does not fit is not mirrored; a mirror whose entry ids went wrong,
 * that outgrows its reserve or that is released serves nothing more and its file is deleted; files of dead processes
 * are deleted at open.
 */
class SliceMirrorsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;
    private final List<SliceMirrors> opened = new ArrayList<>();
    private final Random random = new Random(42);
    /** Staging buffers of the mirrors these tests open: 32, as the skip test's arithmetic counts them. */
    private static final long STAGING = 32L * SliceMirrors.STAGING_BYTES;

    @AfterEach
    void closeAll() {
        opened.forEach(SliceMirrors::close);
    }

    private SliceMirrors open(long maxBytes) {
        SliceMirrors m = SliceMirrors.open(dir, maxBytes, STAGING, EngineRuntime.THREADS);
        assertThat(m).as("direct I/O in the test's temporary directory").isNotSameAs(SliceMirrors.NONE);
        opened.add(m);
        return m;
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** {@code data} as a composite of two parts, as a WAL batch is (header, payloads), read from a nonzero index. */
    private static ByteBuf batch(byte[] data) {
        CompositeByteBuf c = Unpooled.compositeBuffer();
        ByteBuf front = Unpooled.buffer().writeZero(3).writeBytes(data, 0, data.length / 2);
        front.readerIndex(3);
        c.addComponents(true, front, Unpooled.wrappedBuffer(data, data.length / 2, data.length - data.length / 2));
        return c;
    }

    private static List<byte[]> read(SliceMirrors mirrors, long slice, long first, long last) {
        CompletableFuture<List<ByteBuf>> f = mirrors.read(slice, first, last);
        assertThat(f).as("slice %d entries %d..%d readable", slice, first, last).isNotNull();
        List<byte[]> out = new ArrayList<>();
        for (ByteBuf b : f.join()) {
            out.add(ByteBufUtil.getBytes(b));
            b.release();
        }
        return out;
    }

    private List<Path> files() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }

    @Test
    void batchesAcrossStagingBuffers_readBackByteForByte_onlyOnceFinished() throws Exception {
        SliceMirrors mirrors = open(64L << 20);
        SliceMirrors.Mirror m = mirrors.start(7, 16L << 20);
        int mib = SliceMirrors.STAGING_BYTES;
        List<byte[]> batches = List.of(bytes(100), bytes(mib + 7), bytes(3), bytes(2 * mib), bytes(500_000), bytes(1),
                bytes(mib - 104 - 7));
        for (int i = 0; i < batches.size(); i++) {
            ByteBuf b = batch(batches.get(i));
            int readerIndex = b.readerIndex();
            assertThat(m.append(b)).isEqualTo(i);
            assertThat(b.readerIndex()).as("the batch is not consumed").isEqualTo(readerIndex);
            m.acked(i, i);
            b.release();
        }
        assertThat(mirrors.read(7, 0, 0)).as("nothing is read before the slice is finished").isNull();
        m.finish();
        await().atMost(WAIT).until(() -> mirrorReadable(mirrors, 7));

        assertThat(read(mirrors, 7, 0, batches.size() - 1)).containsExactlyElementsOf(batches);
        assertThat(read(mirrors, 7, 3, 4)).containsExactly(batches.get(3), batches.get(4));
        assertThat(read(mirrors, 7, 6, 6)).containsExactly(batches.get(6));
        assertThat(mirrors.read(7, 6, 7)).as("past the last entry").isNull();
        assertThat(mirrors.read(8, 0, 0)).as("a slice without a mirror").isNull();
        long total = batches.stream().mapToLong(b -> b.length).sum();
        assertThat(mirrors.bytes()).isEqualTo(total);
        assertThat(mirrors.bytesRead()).as("the three reads above and the one that found it readable")
                .isEqualTo(total + batches.get(3).length + batches.get(4).length + batches.get(6).length
                        + batches.get(0).length);
        assertThat(files()).singleElement().satisfies(f -> assertThat(f.getFileName().toString())
                .startsWith(SliceMirrors.PREFIX + ProcessHandle.current().pid() + "-"));

        mirrors.release(7);
        assertThat(mirrors.read(7, 0, 0)).isNull();
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(mirrors.bytes()).isZero();
            assertThat(files()).as("the released mirror's file is deleted").isEmpty();
        });
        assertThat(mirrors.droppedMirrors()).as("a release is not a drop").isZero();
    }

    @Test
    void batchAcknowledgedUnderAnotherEntryId_mirrorDroppedAndDeleted_theOtherSliceStillServed() throws Exception {
        SliceMirrors mirrors = open(64L << 20);
        SliceMirrors.Mirror wrong = mirrors.start(1, 16L << 20);
        SliceMirrors.Mirror right = mirrors.start(2, 16L << 20);
        byte[] a = bytes(5000);
        byte[] b = bytes(6000);
        assertThat(wrong.append(Unpooled.wrappedBuffer(a))).isZero();
        assertThat(right.append(Unpooled.wrappedBuffer(b))).isZero();
        wrong.acked(0, 1);
        right.acked(0, 0);
        assertThat(wrong.append(Unpooled.wrappedBuffer(a))).as("a dropped mirror takes nothing more").isEqualTo(-1);
        wrong.finish();
        right.finish();
        await().atMost(WAIT).until(() -> mirrorReadable(mirrors, 2));
        assertThat(mirrors.read(1, 0, 0)).isNull();
        assertThat(read(mirrors, 2, 0, 0)).containsExactly(b);
        assertThat(mirrors.droppedMirrors()).isEqualTo(1);
        await().atMost(WAIT).untilAsserted(() -> assertThat(mirrors.bytes()).isEqualTo(b.length));
        assertThat(files()).hasSize(1);
    }

    @Test
    void disk_behind_batchesSkippedUntilABufferIsFree_theRestServed_readsOfSkippedOnesRefused() throws Exception {
        // the mirror's I/O thread, held by the test: its staging buffers wait for it as they would for a slow disk
        ExecutorService io = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "nereus-wal-mirror-held");
            t.setDaemon(true);
            return t;
        });
        CountDownLatch disk = new CountDownLatch(1);
        io.execute(() -> {
            try {
                disk.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        EngineRuntime slowDisk = new EngineRuntime() {
            @Override
            public ExecutorService executor(String threadName) {
                return io;
            }

            @Override
            public ScheduledExecutorService scheduler(String threadName) {
                return EngineRuntime.THREADS.scheduler(threadName);
            }

            @Override
            public String uniqueId() {
                return EngineRuntime.THREADS.uniqueId();
            }
        };
        SliceMirrors mirrors = SliceMirrors.open(dir, 1L << 30, STAGING, slowDisk);
        opened.add(mirrors);
        try {
            skipWhileTheDiskIsBehind(mirrors, disk);
        } finally {
            disk.countDown();
        }
    }

    private void skipWhileTheDiskIsBehind(SliceMirrors mirrors, CountDownLatch disk) throws Exception {
        SliceMirrors.Mirror m = mirrors.start(5, 256L << 20);
        // 33 batches fill 31.5 of the 32 buffers; the 34th fills the last and finds none for its rest
        List<byte[]> batches = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            batches.add(bytes(1_000_000));
        }
        for (int i = 0; i < batches.size(); i++) {
            assertThat(m.append(Unpooled.wrappedBuffer(batches.get(i)))).as("entry ids go on").isEqualTo(i);
        }
        assertThat(mirrors.skippedBatches()).as("the 34th, part of which is in the file, and the six after it")
                .isEqualTo(7);
        disk.countDown();
        await().atMost(WAIT).untilAsserted(() -> assertThat(files()).singleElement()
                .satisfies(f -> assertThat(Files.size(f)).isEqualTo(32L * SliceMirrors.STAGING_BYTES)));
        assertThat(m.append(Unpooled.wrappedBuffer(batches.get(0)))).as("the buffers are free again").isEqualTo(40);
        batches.add(batches.get(0));
        for (int i = 0; i < 3; i++) {
            batches.add(bytes(700_000 + i));
            assertThat(m.append(Unpooled.wrappedBuffer(batches.get(batches.size() - 1)))).isEqualTo(41 + i);
        }
        for (int i = 0; i < batches.size(); i++) {
            m.acked(i, i);
        }
        m.finish();
        await().atMost(WAIT).until(() -> mirrorReadable(mirrors, 5));

        assertThat(read(mirrors, 5, 0, 32)).containsExactlyElementsOf(batches.subList(0, 33));
        assertThat(mirrors.read(5, 33, 33)).as("the batch only part of which was written").isNull();
        assertThat(mirrors.read(5, 30, 35)).as("a range over skipped batches").isNull();
        assertThat(mirrors.read(5, 39, 40)).isNull();
        assertThat(read(mirrors, 5, 40, 43)).as("the batches after the skipped ones, where the file goes on")
                .containsExactlyElementsOf(batches.subList(40, 44));
        assertThat(mirrors.skippedBatches()).isEqualTo(7);
        assertThat(mirrors.droppedMirrors()).as("skipping is not dropping").isZero();
        assertThat(mirrors.bytes()).as("the file: the 32 buffers (33 batches and the skipped one's first part), and"
                + " the four after").isEqualTo(32L * SliceMirrors.STAGING_BYTES + 1_000_000L + 3 * 700_000L + 3);
    }

    @Test
    void sliceWhoseReserveDoesNotFit_notMirrored_oneThatOutgrowsItsReserve_dropped() throws Exception {
        SliceMirrors mirrors = open(1 << 20);
        SliceMirrors.Mirror first = mirrors.start(1, 600_000);
        assertThat(mirrors.start(2, 600_000)).as("1.2 MB reserved would pass 1 MiB").isNull();
        assertThat(mirrors.droppedMirrors()).isEqualTo(1);
        SliceMirrors.Mirror third = mirrors.start(3, 300_000);
        byte[] a = bytes(400_000);
        byte[] b = bytes(250_000);
        assertThat(first.append(Unpooled.wrappedBuffer(a))).isZero();
        assertThat(first.append(Unpooled.wrappedBuffer(b))).as("taken: the mirror held less than its reserve")
                .isEqualTo(1);
        assertThat(third.append(Unpooled.wrappedBuffer(bytes(300_000)))).isZero();
        assertThat(third.append(Unpooled.wrappedBuffer(bytes(10)))).as("past its reserve").isEqualTo(-1);
        first.finish();
        third.finish();
        await().atMost(WAIT).until(() -> mirrorReadable(mirrors, 1));
        assertThat(read(mirrors, 1, 0, 1)).containsExactly(a, b);
        assertThat(mirrors.read(3, 0, 0)).isNull();
        assertThat(mirrors.droppedMirrors()).isEqualTo(2);
        await().atMost(WAIT).untilAsserted(() -> assertThat(mirrors.bytes()).isEqualTo(a.length + b.length));
        assertThat(mirrors.start(4, 400_000)).as("the dropped mirror's reserve is free again").isNotNull();
    }

    @Test
    void open_deletesTheFilesOfDeadProcesses_close_deletesItsOwn() throws Exception {
        long dead = 999_999_999L;
        assertThat(ProcessHandle.of(dead)).isEmpty();
        Path abandoned = Files.writeString(dir.resolve(SliceMirrors.PREFIX + dead + "-1" + SliceMirrors.SUFFIX), "x");
        Path other = Files.writeString(dir.resolve("nereus-materializer-" + dead + "-2.object"), "x");
        SliceMirrors mirrors = open(64L << 20);
        assertThat(abandoned).doesNotExist();
        assertThat(other).as("another kind of file").exists();

        SliceMirrors.Mirror m = mirrors.start(3, 16L << 20);
        m.append(Unpooled.wrappedBuffer(bytes(2 * SliceMirrors.STAGING_BYTES + 5)));
        m.finish();
        await().atMost(WAIT).until(() -> mirrorReadable(mirrors, 3));
        assertThat(files()).hasSize(2);
        CompletableFuture<Void> closed = mirrors.closeAsync();
        assertThat(mirrors.start(4, 16L << 20)).as("closed: nothing more is mirrored").isNull();
        closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(files()).as("deleted when the close completes").containsExactly(other);
        assertThat(mirrors.closeAsync()).as("a second close").isCompleted();
    }

    @Test
    void zeroBytes_mirrorsNothing() {
        SliceMirrors none = SliceMirrors.open(dir, 0, STAGING, EngineRuntime.THREADS);
        assertThat(none).isSameAs(SliceMirrors.NONE);
        assertThat(none.start(1, 1)).isNull();
        assertThat(none.read(1, 0, 0)).isNull();
    }

    @Test
    void stagingBytesNotAWholeNumberOfBuffers_refusedNamingThem() {
        for (long staging : new long[] {0, SliceMirrors.STAGING_BYTES - 1, SliceMirrors.STAGING_BYTES + 4096}) {
            assertThatThrownBy(() -> SliceMirrors.open(dir, 1L << 30, staging, EngineRuntime.THREADS))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("WAL slice mirror staging bytes must be a positive multiple of 1048576: " + staging);
        }
    }
}
