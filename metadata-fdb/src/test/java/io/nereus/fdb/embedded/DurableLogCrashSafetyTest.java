package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogTestModel.b;
import static io.nereus.fdb.embedded.DurableLogTestModel.next;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cuts the log at many byte positions, as a crash in the middle of a write would, and checks that recovery
 * returns exactly the records wholly before the cut (never fewer) and that the log keeps working afterwards.
 */
class DurableLogCrashSafetyTest {
    private static final int RECORDS = 300;

    @TempDir
    Path tmp;

    private final List<LogRecord> records = new ArrayList<>();
    /** expected.get(i): the state after the first i records. */
    private final List<Map<String, String>> expected = new ArrayList<>();
    private byte[] segment;
    private String segmentName;
    private List<Long> boundaries;

    @BeforeEach
    void writeAcknowledgedLog() throws Exception {
        Random random = new Random(42);
        Path dir = tmp.resolve("source");
        DurableLogTestModel model = new DurableLogTestModel();
        TreeMap<byte[], byte[]> state = new TreeMap<>(DurableLogTestModel.UNSIGNED);
        expected.add(Map.of());
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), model)) {
            long version = 0;
            for (int i = 0; i < RECORDS; i++) {
                version += 1 + random.nextInt(1000);
                List<Effect> effects = new ArrayList<>();
                int n = random.nextInt(4); // some records have no effects at all
                for (int e = 0; e < n; e++) {
                    byte[] key = b(String.format("k%02d", random.nextInt(40)));
                    int kind = random.nextInt(10);
                    if (kind < 7) {
                        int size = random.nextInt(10) == 0 ? 1000 + random.nextInt(3000) : random.nextInt(120);
                        byte[] value = new byte[size];
                        random.nextBytes(value);
                        effects.add(Effect.set(key, value));
                    } else if (kind < 9) {
                        effects.add(Effect.clearRange(key, next(key)));
                    } else {
                        effects.add(Effect.clearRange(key, b(String.format("k%02d", random.nextInt(40)))));
                    }
                }
                LogRecord record = new LogRecord(version, effects);
                records.add(record);
                DurableLogTestModel.applyTo(state, record);
                expected.add(DurableLogTestModel.hex(state));
                futures.add(DurableLogTestModel.appendAndWrite(log, record));
                if (random.nextInt(20) == 0) { // vary the batch sizes
                    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
                }
            }
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        }
        List<Path> segments = DurableLogTestModel.files(dir, "wal-*.log");
        assertThat(segments).hasSize(1);
        segment = Files.readAllBytes(segments.get(0));
        segmentName = segments.get(0).getFileName().toString();
        boundaries = DurableLogTestModel.recordBoundaries(segment);
        assertThat(boundaries).hasSize(RECORDS + 1);
    }

    /** How many records lie wholly within the first {@code cut} bytes. */
    private int recordsBefore(long cut) {
        int n = 0;
        while (n < RECORDS && boundaries.get(n + 1) <= cut) {
            n++;
        }
        return n;
    }

    private Path layOut(byte[] bytes) throws Exception {
        Path dir = tmp.resolve("crashed");
        if (Files.exists(dir)) {
            for (Path p : DurableLogTestModel.files(dir, "*")) {
                Files.delete(p);
            }
        }
        Files.createDirectories(dir);
        Files.write(dir.resolve(segmentName), bytes);
        return dir;
    }

    private void checkRecovers(byte[] bytes, int wholeRecords, boolean appendAfterwards) throws Exception {
        Path dir = layOut(bytes);
        DurableLogTestModel recovered = new DurableLogTestModel();
        long expectedVersion = wholeRecords == 0 ? 0 : records.get(wholeRecords - 1).version();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), recovered)) {
            assertThat(log.recoveredVersion()).as("recovered version, %d whole records", wholeRecords)
                    .isEqualTo(expectedVersion);
            assertThat(recovered.snapshot()).as("state after %d whole records", wholeRecords)
                    .isEqualTo(expected.get(wholeRecords));
            if (!appendAfterwards) {
                return;
            }
            LogRecord extra = new LogRecord(expectedVersion + 7, List.of(Effect.set(b("extra"), b("x"))));
            recovered.apply(extra);
            DurableLogTestModel.appendAndWrite(log, extra).get(10, TimeUnit.SECONDS);
        }
        DurableLogTestModel again = new DurableLogTestModel();
        try (DurableLog log = DurableLog.open(dir, DurableLogOptions.defaults(), again)) {
            assertThat(log.recoveredVersion()).isEqualTo(expectedVersion + 7);
            assertThat(again.snapshot()).isEqualTo(recovered.snapshot());
        }
    }

    @Test
    void everyCutAtOrNearARecordBoundaryRecoversExactlyThePrefix() throws Exception {
        // every boundary, plus one nearby position per boundary (rotating through -1, +1, +4 inside the frame
        // header, +9 just into the payload), plus random positions: about 700 reopens
        TreeSet<Long> cuts = new TreeSet<>();
        long[] deltas = {-1, 1, 4, 9};
        for (int i = 0; i < boundaries.size(); i++) {
            for (long cut : new long[] {boundaries.get(i), boundaries.get(i) + deltas[i % deltas.length]}) {
                if (cut >= DurableLogFormat.SEGMENT_HEADER_BYTES && cut <= segment.length) {
                    cuts.add(cut);
                }
            }
        }
        Random random = new Random(7);
        for (int i = 0; i < 100; i++) {
            cuts.add(DurableLogFormat.SEGMENT_HEADER_BYTES + (long) random.nextInt(segment.length - DurableLogFormat.SEGMENT_HEADER_BYTES + 1));
        }
        int n = 0;
        for (long cut : cuts) {
            // append-and-reopen after recovery on a sample, to keep the test fast
            checkRecovers(Arrays.copyOf(segment, (int) cut), recordsBefore(cut), n++ % 8 == 0);
        }
        assertThat(n).isGreaterThan(650);
    }

    @Test
    void aZeroFilledTailIsATornWrite() throws Exception {
        // a crash after the file grew but before the data reached the disk leaves zeros
        for (int r : new int[] {0, 1, 150, RECORDS - 1, RECORDS}) {
            for (int extra : new int[] {0, 3, 4000}) {
                long cut = Math.min(boundaries.get(r) + extra, segment.length);
                byte[] bytes = new byte[(int) cut + 3000];
                System.arraycopy(segment, 0, bytes, 0, (int) cut);
                checkRecovers(bytes, recordsBefore(cut), true);
            }
        }
    }

    @Test
    void aGarbledLastRecordIsATornWrite() throws Exception {
        // a crash in the middle of the last batch can leave any bytes in its unacknowledged part
        long last = boundaries.get(RECORDS - 1);
        for (long at = last; at < segment.length; at += Math.max(1, (segment.length - last) / 40)) {
            byte[] bytes = segment.clone();
            bytes[(int) at] ^= 0x5A;
            checkRecovers(bytes, RECORDS - 1, at % 3 == 0);
        }
    }
}
