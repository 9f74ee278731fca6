package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogTestModel.b;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Damage that is not a torn final write must stop {@link DurableLog#open} with a {@link CorruptLogException}. */
class DurableLogCorruptionTest {
    @TempDir
    Path dir;

    private final Random random = new Random(3);

    private List<LogRecord> records(int n, long firstVersion) {
        List<LogRecord> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(DurableLogTestModel.randomRecord(random, firstVersion + i, 20, 150));
        }
        return out;
    }

    private DurableLogTestModel writeLog(DurableLogOptions options, List<LogRecord> records, boolean snapshots)
            throws Exception {
        DurableLogTestModel model = new DurableLogTestModel(snapshots);
        try (DurableLog log = DurableLog.open(dir, options, model)) {
            if (snapshots) {
                log.setSnapshotSource(model);
            }
            for (LogRecord r : records) { // one at a time, so that rolls happen where the threshold says
                model.appendAll(log, List.of(r));
            }
            log.awaitCompaction(30, TimeUnit.SECONDS);
        }
        return model;
    }

    private static void flip(Path file, long offset) throws Exception {
        byte[] bytes = Files.readAllBytes(file);
        bytes[(int) offset] ^= 0x5A;
        Files.write(file, bytes);
    }

    private CorruptLogException openFails() {
        CorruptLogException e = catchThrowableOfType(CorruptLogException.class,
                () -> DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel()).close());
        assertThat(e).as("open must refuse the damaged log").isNotNull();
        return e;
    }

    private void assertNames(CorruptLogException e, Path file, long offset) {
        assertThat(e.file().getFileName()).isEqualTo(file.getFileName());
        assertThat(e.offset()).isEqualTo(offset);
        assertThat(e.getMessage()).contains(file.getFileName().toString()).contains("byte offset " + offset);
    }

    @Test
    void aDamagedRecordFollowedByValidRecordsIsCorruption() throws Exception {
        writeLog(DurableLogOptions.defaults(), records(100, 1), false);
        Path segment = DurableLogTestModel.files(dir, "wal-*.log").get(0);
        byte[] original = Files.readAllBytes(segment);
        List<Long> boundaries = DurableLogTestModel.recordBoundaries(original);
        long start = boundaries.get(10);
        long end = boundaries.get(11);
        // the length field, the checksum field, the version, the effect count, the effects, the last byte
        for (long at : new long[] {start, start + 3, start + 4, start + 7, start + 8, start + 17, start + 20, end - 1}) {
            Files.write(segment, original);
            flip(segment, at);
            assertNames(openFails(), segment, start);
        }
        // the damaged file is left as it was: nothing was truncated
        assertThat(Files.size(segment)).isEqualTo(original.length);
    }

    @Test
    void aDamagedRecordInAnEarlierSegmentIsCorruptionEvenAtItsEnd() throws Exception {
        writeLog(new DurableLogOptions(4096, Duration.ZERO), records(120, 1), false);
        List<Path> segments = DurableLogTestModel.files(dir, "wal-*.log");
        assertThat(segments).hasSizeGreaterThan(2);
        Path first = segments.get(0);
        byte[] original = Files.readAllBytes(first);
        List<Long> boundaries = DurableLogTestModel.recordBoundaries(original);
        long last = boundaries.get(boundaries.size() - 2);

        flip(first, original.length - 1);
        assertNames(openFails(), first, last);

        Files.write(first, Arrays.copyOf(original, original.length - 3)); // truncated, as a torn write would
        assertNames(openFails(), first, last);

        Files.write(first, original);
        DurableLog.open(dir, DurableLogOptions.defaults(), new DurableLogTestModel()).close();
    }

    @Test
    void aMissingSegmentIsCorruption() throws Exception {
        writeLog(new DurableLogOptions(4096, Duration.ZERO), records(120, 1), false);
        List<Path> segments = DurableLogTestModel.files(dir, "wal-*.log");
        assertThat(segments).hasSizeGreaterThan(2);
        Files.delete(segments.get(1));
        CorruptLogException e = openFails();
        assertNames(e, segments.get(2), 0);
        assertThat(e.getMessage()).contains("missing");

        Files.delete(segments.get(0)); // the log must start at version 1 when there is no snapshot
        assertThat(openFails().getMessage()).contains("missing");
    }

    @Test
    void damagedSegmentHeadersAreCorruptionEvenInTheLastSegment() throws Exception {
        writeLog(DurableLogOptions.defaults(), records(5, 1), false);
        Path segment = DurableLogTestModel.files(dir, "wal-*.log").get(0);
        byte[] original = Files.readAllBytes(segment);

        flip(segment, 1);
        assertThat(openFails().getMessage()).contains("bad magic");

        byte[] v2 = original.clone();
        ByteBuffer.wrap(v2).putInt(4, 2);
        Files.write(segment, v2);
        CorruptLogException e = openFails();
        assertNames(e, segment, 4);
        assertThat(e.getMessage()).contains("unsupported log format version 2");

        Files.write(segment, original);
        flip(segment, 12);
        assertThat(openFails().getMessage()).contains("checksum");

        Files.write(segment, Arrays.copyOf(original, 10));
        assertThat(openFails().getMessage()).contains("truncated");

        Files.write(segment, original);
        Files.move(segment, dir.resolve(DurableLogFormat.segmentName(2)));
        assertThat(openFails().getMessage()).contains("missing"); // versions 1..1 would be gone
        Files.move(dir.resolve(DurableLogFormat.segmentName(2)), dir.resolve(DurableLogFormat.segmentName(0)));
        assertThat(openFails().getMessage()).contains("file name says 0");
    }

    @Test
    void aChecksummedButMalformedOrOutOfOrderLastRecordIsCorruptionNotATornWrite() throws Exception {
        writeLog(DurableLogOptions.defaults(), records(5, 1), false);
        Path segment = DurableLogTestModel.files(dir, "wal-*.log").get(0);
        byte[] original = Files.readAllBytes(segment);

        // unknown effect kind, with a matching checksum
        ByteBuffer bad = encode(new LogRecord(6, List.of(Effect.set(b("k"), b("v")))));
        bad.put(DurableLogFormat.FRAME_BYTES + 12, (byte) 9);
        resum(bad);
        Files.write(segment, concat(original, bad));
        CorruptLogException e = openFails();
        assertNames(e, segment, original.length);
        assertThat(e.getMessage()).contains("unknown kind");

        // a version that does not increase
        Files.write(segment, concat(original, encode(new LogRecord(5, List.of()))));
        assertThat(openFails().getMessage()).contains("does not follow");
    }

    @Test
    void aDamagedSnapshotIsRefused() throws Exception {
        DurableLogTestModel model = writeLog(new DurableLogOptions(4096, Duration.ZERO), records(150, 1), true);
        List<Path> snapshots = DurableLogTestModel.files(dir, "snapshot-*.snap");
        assertThat(snapshots).hasSize(1);
        Path snapshot = snapshots.get(0);
        byte[] original = Files.readAllBytes(snapshot);

        DurableLogTestModel intact = new DurableLogTestModel();
        DurableLog.open(dir, DurableLogOptions.defaults(), intact).close();
        assertThat(intact.snapshot()).isEqualTo(model.snapshot());

        flip(snapshot, original.length - 20); // inside the last value: only the checksum notices
        assertNames(openFails(), snapshot, original.length - 4);

        Files.write(snapshot, original);
        flip(snapshot, DurableLogFormat.SNAPSHOT_HEADER_BYTES + 1); // the first key length
        CorruptLogException e = openFails();
        assertThat(e.file().getFileName()).isEqualTo(snapshot.getFileName());
        assertThat(e.getMessage()).contains(snapshot.getFileName().toString()).contains("byte offset " + e.offset());

        byte[] v7 = original.clone();
        ByteBuffer.wrap(v7).putInt(4, 7);
        Files.write(snapshot, v7);
        assertThat(openFails().getMessage()).contains("unsupported snapshot format version 7");

        Files.write(snapshot, Arrays.copyOf(original, original.length - 1));
        assertThat(openFails().file().getFileName()).isEqualTo(snapshot.getFileName());

        Files.write(snapshot, original);
        DurableLogTestModel restored = new DurableLogTestModel();
        DurableLog.open(dir, DurableLogOptions.defaults(), restored).close();
        assertThat(restored.snapshot()).isEqualTo(model.snapshot());
    }

    private static ByteBuffer encode(LogRecord r) {
        int payload = (int) DurableLogFormat.payloadBytes(r);
        ByteBuffer buf = ByteBuffer.allocate(DurableLogFormat.FRAME_BYTES + payload);
        DurableLogFormat.encodeRecord(r, payload, buf, new CRC32C());
        return buf.flip();
    }

    private static void resum(ByteBuffer record) {
        CRC32C crc = new CRC32C();
        crc.update(record.array(), DurableLogFormat.FRAME_BYTES, record.limit() - DurableLogFormat.FRAME_BYTES);
        record.putInt(4, (int) crc.getValue());
    }

    private static byte[] concat(byte[] a, ByteBuffer b) {
        byte[] out = Arrays.copyOf(a, a.length + b.remaining());
        b.get(out, a.length, b.remaining());
        return out;
    }
}
