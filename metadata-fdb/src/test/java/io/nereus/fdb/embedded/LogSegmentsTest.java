package io.nereus.fdb.embedded;

import static io.nereus.fdb.embedded.DurableLogFormat.SEGMENT_HEADER_BYTES;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LogSegments}: a segment is covered by a snapshot at V exactly when the next segment starts at or below
 * V + 1, the active segment never is, and sizes follow the flusher's writes.
 */
class LogSegmentsTest {
    @TempDir
    Path dir;

    private LogSegments segments;

    private Path file(long firstVersion) {
        return dir.resolve(DurableLogFormat.segmentName(firstVersion));
    }

    /** Segments starting at 1 (holding 1..10, 100 bytes), 11 (11..20, 50 bytes) and 21 (active, header only). */
    @BeforeEach
    void threeSegments() throws IOException {
        DurableLogFormat.createSegment(dir, 1).close();
        segments = new LogSegments(dir, List.of(new DurableLogRecovery.Segment(file(1), 1, 100)));
        segments.roll(11).close();
        segments.activeGrew(50 - SEGMENT_HEADER_BYTES);
        segments.roll(21).close();
    }

    @Test
    void roll_createsTheSegmentFile_andMakesItActive() {
        assertThat(file(11)).exists();
        assertThat(file(21)).exists().hasSize(SEGMENT_HEADER_BYTES);
        assertThat(segments.activeBytes()).isEqualTo(SEGMENT_HEADER_BYTES);
        assertThat(segments.totalBytes()).isEqualTo(100 + 50 + SEGMENT_HEADER_BYTES);
    }

    @Test
    void activeGrew_addsToTheActiveSegmentOnly() {
        segments.activeGrew(30);

        assertThat(segments.activeBytes()).isEqualTo(SEGMENT_HEADER_BYTES + 30);
        assertThat(segments.totalBytes()).isEqualTo(100 + 50 + SEGMENT_HEADER_BYTES + 30);
    }

    @Test
    void deleteCovered_belowASegmentsLastVersion_keepsIt() throws IOException {
        assertThat(segments.deleteCovered(9)).isZero();

        assertThat(file(1)).exists();
        assertThat(segments.totalBytes()).isEqualTo(100 + 50 + SEGMENT_HEADER_BYTES);
    }

    @Test
    void deleteCovered_atASegmentsLastVersion_deletesItAndNothingAfter() throws IOException {
        assertThat(segments.deleteCovered(10)).isEqualTo(100);

        assertThat(file(1)).doesNotExist();
        assertThat(file(11)).exists();
        assertThat(segments.totalBytes()).isEqualTo(50 + SEGMENT_HEADER_BYTES);
    }

    @Test
    void deleteCovered_pastTheActiveSegmentsFirstVersion_neverDeletesTheActiveSegment() throws IOException {
        assertThat(segments.deleteCovered(1_000)).isEqualTo(100 + 50);

        assertThat(file(1)).doesNotExist();
        assertThat(file(11)).doesNotExist();
        assertThat(file(21)).exists();
        assertThat(segments.totalBytes()).isEqualTo(SEGMENT_HEADER_BYTES);
    }
}
