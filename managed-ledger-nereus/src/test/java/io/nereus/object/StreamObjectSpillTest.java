package io.nereus.object;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link StreamObjectSpill} writes sparse stream objects that the reader reads back exactly, holding a bounded buffer. */
class StreamObjectSpillTest {
    private static final StreamId STREAM = StreamId.of(7);

    @TempDir
    Path dir;

    /** Sparse entries from offset 10 with gaps; payloads of 0..maxPayload bytes. */
    private static List<StreamEntry> sparse(int n, int maxPayload, long seed) {
        Random random = new Random(seed);
        List<StreamEntry> out = new ArrayList<>();
        long offset = 10;
        for (int i = 0; i < n; i++) {
            offset += random.nextInt(4);
            int records = 1 + random.nextInt(3);
            byte[] payload = new byte[random.nextInt(maxPayload + 1)];
            random.nextBytes(payload);
            out.add(new StreamEntry(new OffsetRange(offset, offset + records), payload));
            offset += records;
        }
        return out;
    }

    private StreamObjectSpill.Spilled spill(String name, OffsetRange coverage, int blockBytes,
            List<StreamEntry> entries, long[] peak) throws IOException {
        Path file = Files.createFile(dir.resolve(name));
        try (StreamObjectSpill s = StreamObjectSpill.create(file, STREAM, ReadView.TOPIC_COMPACTED, coverage,
                blockBytes)) {
            for (StreamEntry e : entries) {
                s.add(e);
            }
            StreamObjectSpill.Spilled done = s.finish();
            peak[0] = s.peakBufferedBytes();
            return done;
        }
    }

    @Test
    void spill_readsBack_forSmallLargeAndNoEntries_andEveryBlockTarget() throws Exception {
        int[][] cases = { // {entries, max payload, block target}
            {0, 0, 1024}, {1, 10, 1024}, {500, 300, 1024}, {300, 40_000, 16 * 1024}, {20, 200_000, 64 * 1024},
            {50, 100, 1}};
        for (int i = 0; i < cases.length; i++) {
            List<StreamEntry> entries = sparse(cases[i][0], cases[i][1], i);
            long end = entries.isEmpty() ? 5 : entries.get(entries.size() - 1).range().end() + 3;
            OffsetRange coverage = new OffsetRange(0, end);

            StreamObjectSpill.Spilled spilled = spill("case-" + i, coverage, cases[i][2], entries, new long[1]);
            byte[] bytes = Files.readAllBytes(spilled.file());
            StreamObjectReader reader = StreamObjectReader.open("case-" + i, bytes.length, spilled.checksum(),
                    (position, length) -> CompletableFuture.completedFuture(
                            Arrays.copyOfRange(bytes, (int) position, (int) position + length)), new BlockCache(0))
                    .get(10, TimeUnit.SECONDS);
            List<StreamEntry> read = reader.read(0, Integer.MAX_VALUE, Long.MAX_VALUE).get(10, TimeUnit.SECONDS);

            assertThat(spilled.size()).as("case %s", i).isEqualTo(bytes.length);
            assertThat(spilled.entries()).as("case %s", i).isEqualTo(entries.size());
            assertThat(spilled.range()).isEqualTo(coverage);
            assertThat(reader.range()).isEqualTo(coverage);
            if (cases[i][2] == 1) {
                assertThat(spilled.blocks()).as("one block per entry").isEqualTo(entries.size());
            } else {
                assertThat(spilled.blocks()).isBetween(entries.isEmpty() ? 0 : 1, entries.size());
            }
            assertThat(read).as("case %s", i).hasSize(entries.size());
            for (int k = 0; k < read.size(); k++) {
                assertThat(read.get(k).range()).isEqualTo(entries.get(k).range());
                assertThat(read.get(k).bytes()).isEqualTo(entries.get(k).bytes());
            }
            StreamEntry.releaseAll(read);
        }
    }

    @Test
    void spill_readBackThroughTheReader_givesTheEntriesWritten() throws Exception {
        List<StreamEntry> entries = sparse(400, 5000, 99);
        OffsetRange coverage = new OffsetRange(0, entries.get(399).range().end());
        StreamObjectSpill.Spilled spilled = spill("read", coverage, 8 * 1024, entries, new long[1]);
        byte[] bytes = Files.readAllBytes(spilled.file());

        StreamObjectReader reader = StreamObjectReader.open("read", bytes.length, spilled.checksum(),
                (position, length) -> CompletableFuture.completedFuture(
                        Arrays.copyOfRange(bytes, (int) position, (int) position + length)), new BlockCache(0))
                .get(10, TimeUnit.SECONDS);
        List<StreamEntry> read = reader.read(0, Integer.MAX_VALUE, Long.MAX_VALUE).get(10, TimeUnit.SECONDS);

        assertThat(reader.sparse()).isTrue();
        assertThat(read).hasSize(entries.size());
        for (int i = 0; i < read.size(); i++) {
            assertThat(read.get(i).range()).isEqualTo(entries.get(i).range());
            assertThat(read.get(i).payload()).isEqualTo(entries.get(i).payload());
        }
    }

    @Test
    void spill_holdsItsWriteBufferAndIndex_notTheEntries() throws Exception {
        List<StreamEntry> entries = sparse(4000, 2000, 5); // about 4 MB of payload
        long payload = entries.stream().mapToLong(e -> e.size()).sum();
        OffsetRange coverage = new OffsetRange(0, entries.get(3999).range().end());
        long[] peak = new long[1];

        StreamObjectSpill.Spilled spilled = spill("bounded", coverage, 256 * 1024, entries, peak);

        long bound = StreamObjectSpill.WRITE_BUFFER_BYTES + 2000 + StreamObjectFormat.HEADER_BYTES
                + (long) spilled.blocks() * StreamObjectFormat.INDEX_ENTRY_BYTES;
        assertThat(peak[0]).isPositive().isLessThanOrEqualTo(bound);
        assertThat(payload).isGreaterThan(40 * bound);
    }

    @Test
    void add_outOfOrderOrOutsideTheCoverage_isRefused_andAFinishedSpillTakesNoMore() throws Exception {
        Path file = Files.createFile(dir.resolve("refused"));
        try (StreamObjectSpill s = StreamObjectSpill.create(file, STREAM, ReadView.TOPIC_COMPACTED,
                new OffsetRange(0, 10), 1024)) {
            s.add(new StreamEntry(new OffsetRange(2, 4), new byte[1]));
            assertThatThrownBy(() -> s.add(new StreamEntry(new OffsetRange(3, 5), new byte[1])))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> s.add(new StreamEntry(new OffsetRange(8, 11), new byte[1])))
                    .isInstanceOf(IllegalArgumentException.class);
            s.finish();
            assertThatThrownBy(() -> s.add(new StreamEntry(new OffsetRange(5, 6), new byte[1])))
                    .isInstanceOf(IllegalStateException.class);
        }
        assertThatThrownBy(() -> StreamObjectSpill.create(file, STREAM, ReadView.TOPIC_COMPACTED,
                new OffsetRange(3, 3), 1024)).isInstanceOf(IllegalArgumentException.class);
    }
}
