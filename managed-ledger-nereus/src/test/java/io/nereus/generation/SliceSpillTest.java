package io.nereus.generation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.StreamEntry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The materializer's spill file: entries written in extents come back exactly, and the file goes with the spill. */
class SliceSpillTest {
    @TempDir
    Path dir;

    private static List<StreamEntry> entries(long first, int n, String tag) {
        List<StreamEntry> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            // an entry may cover several offsets (a batch of messages), and a payload may be empty
            byte[] payload = (i % 5 == 4 ? "" : tag + "-" + i + "-" + "y".repeat(i * 37)).getBytes(StandardCharsets.UTF_8);
            out.add(new StreamEntry(new OffsetRange(first + 2L * i, first + 2L * i + 2), payload));
        }
        return out;
    }

    private static List<String> describe(List<StreamEntry> entries) {
        return entries.stream().map(SliceSpillTest::describe).toList();
    }

    private static String describe(StreamEntry e) {
        return e.range() + "=" + new String(e.bytes(), StandardCharsets.UTF_8);
    }

    /** The entries of {@code extent} as read back, described while they are valid. */
    private static List<String> read(SliceSpill spill, SliceSpill.Extent extent) throws IOException {
        List<String> out = new ArrayList<>();
        spill.read(extent, e -> out.add(describe(e)));
        return out;
    }

    @Test
    void extentsReadBackExactly_inAnyOrder_andCloseDeletesTheFile() throws IOException {
        SliceSpill spill = SliceSpill.create(dir);
        assertThat(spill.file().getFileName().toString())
                .startsWith(SpillFiles.MATERIALIZER_PREFIX + ProcessHandle.current().pid() + "-");
        List<StreamEntry> a = entries(0, 12, "a");
        List<StreamEntry> b = entries(1000, 3, "b");
        // a payload read from the middle of a larger buffer: only its readable bytes are spilled
        ByteBuf wide = Unpooled.wrappedBuffer("xxpayloadxx".getBytes(StandardCharsets.UTF_8)).slice(2, 7);
        List<StreamEntry> c = List.of(new StreamEntry(new OffsetRange(7, 8), wide));
        SliceSpill.Extent xa = spill.write(a);
        SliceSpill.Extent xb = spill.write(b);
        SliceSpill.Extent xc = spill.write(c);
        assertThat(xb.position()).isEqualTo(xa.length());
        assertThat(spill.size()).isEqualTo(xa.length() + xb.length() + xc.length());
        assertThat(read(spill, xc)).containsExactly("[7, 8)=payload");
        assertThat(Files.size(spill.file())).as("a read wanting pending bytes writes them").isEqualTo(spill.size());
        assertThat(read(spill, xa)).containsExactlyElementsOf(describe(a));
        assertThat(read(spill, xb)).containsExactlyElementsOf(describe(b));
        assertThat(wide.readerIndex()).as("the payload is read, not consumed").isZero();
        // an extent larger than the buffer the spill started with, and the smaller ones again after it
        List<StreamEntry> d = List.of(new StreamEntry(new OffsetRange(9, 10), "z".repeat(200_000)
                .getBytes(StandardCharsets.UTF_8)));
        SliceSpill.Extent xd = spill.write(d);
        assertThat(read(spill, xd)).containsExactlyElementsOf(describe(d));
        assertThat(read(spill, xa)).containsExactlyElementsOf(describe(a));
        assertThat(read(spill, xc)).containsExactly("[7, 8)=payload");

        assertThatThrownBy(() -> read(spill, new SliceSpill.Extent(xd.position(), xd.length() + 1, xd.count())))
                .isInstanceOf(IOException.class).hasMessageContaining("no such extent");
        assertThatThrownBy(() -> read(spill, new SliceSpill.Extent(xa.position(), xa.length(), xa.count() - 1)))
                .isInstanceOf(IOException.class).hasMessageContaining("more bytes than the entries");
        assertThatThrownBy(() -> read(spill, new SliceSpill.Extent(xa.position(), xa.length(), xa.count() + 1)))
                .isInstanceOf(IOException.class).hasMessageContaining("fewer entries");

        Path file = spill.file();
        spill.close();
        assertThat(file).doesNotExist();
    }

    @Test
    void extentsReadBackExactly_acrossTheWriteBehindBuffer_readsOfPendingBytesAmongWrites() throws IOException {
        java.util.Random random = new java.util.Random(5);
        try (SliceSpill spill = SliceSpill.create(dir)) {
            List<SliceSpill.Extent> extents = new ArrayList<>();
            List<List<String>> written = new ArrayList<>();
            long offset = 0;
            while (spill.size() < 3L * SliceSpill.WRITE_BEHIND) {
                // mostly a section's few entries; now and then one larger than the whole write-behind buffer
                List<StreamEntry> e = random.nextInt(200) == 0
                        ? List.of(new StreamEntry(new OffsetRange(offset, offset + 1),
                                new byte[SliceSpill.WRITE_BEHIND + random.nextInt(1000)]))
                        : entries(offset, 1 + random.nextInt(4), "e" + extents.size());
                offset += 1000;
                extents.add(spill.write(e));
                written.add(describe(e));
                if (random.nextInt(10) == 0) {
                    // the latest extent (still pending) or any earlier one
                    int i = random.nextBoolean() ? extents.size() - 1 : random.nextInt(extents.size());
                    assertThat(read(spill, extents.get(i))).as("extent %s", i).containsExactlyElementsOf(written.get(i));
                }
            }
            for (int i = 0; i < extents.size(); i++) {
                assertThat(read(spill, extents.get(i))).as("extent %s", i).containsExactlyElementsOf(written.get(i));
            }
            assertThat(Files.size(spill.file())).isEqualTo(spill.size());
        }
    }

    @Test
    void filesOfDeadProcessesAreRemoved_thoseOfLiveOnesAndOtherPrefixesStay() throws IOException {
        long dead = ProcessHandle.allProcesses().mapToLong(ProcessHandle::pid).max().orElse(1) + 1000;
        Path abandoned = Files.writeString(dir.resolve(SpillFiles.MATERIALIZER_PREFIX + dead + "-1.object"), "x");
        SliceSpill ours = SliceSpill.create(dir);
        Path compaction = Files.writeString(dir.resolve(SpillFiles.PREFIX + dead + "-2.object"), "x");
        assertThat(SpillFiles.removeAbandoned(dir, SpillFiles.MATERIALIZER_PREFIX)).isEqualTo(1);
        assertThat(abandoned).doesNotExist();
        assertThat(ours.file()).exists();
        assertThat(compaction).as("a compaction's file is the compactor's to remove").exists();
        ours.close();
    }

    @Test
    void extentsHoldWhatWasAddedInOrder_throughGrowthAndClear() {
        SliceSpill.Extents xs = new SliceSpill.Extents();
        List<SliceSpill.Extent> model = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            SliceSpill.Extent x = new SliceSpill.Extent(1000L * i + 3, 17L + i, i % 7 + 1);
            xs.add(x);
            model.add(x);
        }
        SliceSpill.Extents more = new SliceSpill.Extents();
        more.add(new SliceSpill.Extent(5L << 40, Integer.MAX_VALUE, 1));
        xs.addAll(more);
        model.add(new SliceSpill.Extent(5L << 40, Integer.MAX_VALUE, 1));
        assertThat(xs.size()).isEqualTo(101);
        for (int i = 0; i < model.size(); i++) {
            assertThat(xs.get(i)).as("extent %s", i).isEqualTo(model.get(i));
        }
        assertThatThrownBy(() -> xs.get(101)).isInstanceOf(IndexOutOfBoundsException.class);
        xs.clear();
        assertThat(xs.size()).isZero();
        assertThatThrownBy(() -> xs.get(0)).isInstanceOf(IndexOutOfBoundsException.class);
        xs.add(model.get(4));
        assertThat(xs.get(0)).isEqualTo(model.get(4));
    }
}
