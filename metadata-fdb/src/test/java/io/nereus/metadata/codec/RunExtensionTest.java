package io.nereus.metadata.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.error.NereusException;
import io.nereus.metadata.Checksum;
import io.nereus.metadata.GenerationId;
import io.nereus.metadata.IndexKey;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.IndexRecordState;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link IndexRecordCodec#extendRun}, the commit's way to lengthen a stored generation-0 run, against what it stands
 * for: {@code decode}, {@link IndexRecord#continuesWith}, {@link IndexRecord#followedBy} and {@code encode}, over
 * random runs, random next appends, and stored values damaged byte by byte; runs under their end offset and open
 * runs at the open-run key ({@link IndexKey#openRun}) alike.
 */
class RunExtensionTest {
    private static final StreamId S = StreamId.of(7);
    private static final IndexRecordCodec CODEC = IndexRecordCodec.INSTANCE;

    /** A random run of {@code sections} sections in slice {@code slice}, starting at {@code start}. */
    private static IndexRecord run(Random rnd, long slice, long start, int sections) {
        List<WalTarget.Section> earlier = new ArrayList<>();
        long end = start;
        long entry = rnd.nextInt(3) == 0 ? rnd.nextLong(1L << 40) : rnd.nextInt(100);
        long entries = 0;
        for (int i = 0; i < sections - 1; i++) {
            long n = 1 + (rnd.nextBoolean() ? rnd.nextInt(3) : rnd.nextInt(100_000));
            end += n;
            entries += 1 + rnd.nextLong(n);
            earlier.add(new WalTarget.Section(entry, rnd.nextInt(3) == 0 ? rnd.nextInt(1 << 20) : rnd.nextInt(50), end,
                    Checksum.crc32c(rnd.nextLong(1L << 32))));
            entry += 1 + (rnd.nextBoolean() ? 0 : rnd.nextInt(1000));
        }
        long n = 1 + rnd.nextInt(200);
        entries += 1 + rnd.nextLong(n);
        return new IndexRecord(S, ReadView.COMMITTED, OffsetRange.of(start, end + n), GenerationId.APPEND,
                IndexRecordState.COMMITTED, new WalTarget(slice, entry, rnd.nextInt(1000), earlier),
                Checksum.crc32c(rnd.nextLong(1L << 32)), entries, rnd.nextLong(1L << 30), 0);
    }

    /** The record of one append after {@code run}: continuing it, or differing in one of the ways that end a run. */
    private static IndexRecord next(Random rnd, IndexRecord run) {
        WalTarget t = (WalTarget) run.target();
        long start = run.range().end();
        long slice = t.sliceId();
        long entry = t.entryId() + 1 + rnd.nextInt(5);
        StreamId stream = S;
        IndexRecordState state = IndexRecordState.COMMITTED;
        switch (rnd.nextInt(12)) {
            case 0 -> slice++;
            case 1 -> start++;
            case 2 -> entry = t.entryId();
            case 3 -> stream = StreamId.of(8);
            case 4 -> state = IndexRecordState.QUARANTINED;
            default -> { }
        }
        long n = 1 + rnd.nextInt(10);
        return new IndexRecord(stream, ReadView.COMMITTED, OffsetRange.of(start, start + n), GenerationId.APPEND,
                state, new WalTarget(slice, entry, rnd.nextInt(100)), Checksum.crc32c(rnd.nextLong(1L << 32)),
                n, rnd.nextInt(1 << 20), 0);
    }

    @Test
    void extendingAStoredRun_isDecodingFollowingAndEncodingIt() {
        Random rnd = new Random(11);
        int continued = 0;
        for (int i = 0; i < 20_000; i++) {
            IndexRecord run = run(rnd, rnd.nextInt(3), rnd.nextInt(3) == 0 ? 0 : rnd.nextLong(1L << 50),
                    1 + rnd.nextInt(WalTarget.MAX_SECTIONS)).storedOpen(rnd.nextBoolean());
            IndexRecord next = next(rnd, run);
            int max = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(WalTarget.MAX_SECTIONS) : WalTarget.MAX_SECTIONS;
            byte[] extended = CODEC.extendRun(IndexKey.of(run), CODEC.encode(run), next, max);
            if (!run.continuesWith(next, max)) {
                assertThat(extended).as("run %s, next %s, max %s", run, next, max).isNull();
                continue;
            }
            continued++;
            IndexRecord longer = run.followedBy(next);
            assertThat(longer.open()).isEqualTo(run.open());
            assertThat(IndexKey.of(longer).isOpenRun()).isEqualTo(run.open());
            assertThat(extended).as("run %s, next %s", run, next).isEqualTo(CODEC.encode(longer));
            IndexRecord decoded = CODEC.decode(IndexKey.of(longer), extended);
            assertThat(decoded).isEqualTo(longer);
            assertThat(decoded.open()).isEqualTo(run.open());
        }
        assertThat(continued).as("runs that continued").isGreaterThan(5_000);
    }

    @Test
    void closingAnOpenRun_givesTheKeyUnderItsEndAndTheValueEncodingGivesTheClosedRecord() {
        Random rnd = new Random(12);
        for (int i = 0; i < 5_000; i++) {
            IndexRecord open = run(rnd, rnd.nextInt(3), rnd.nextInt(3) == 0 ? 0 : rnd.nextLong(1L << 50),
                    1 + rnd.nextInt(WalTarget.MAX_SECTIONS)).storedOpen(true);
            IndexRecord closed = open.storedOpen(false);
            Map.Entry<IndexKey, byte[]> c = CODEC.closeOpenRun(IndexKey.openRun(S), CODEC.encode(open));
            assertThat(c.getKey()).as("run %s", open).isEqualTo(IndexKey.atEnd(open)).isEqualTo(IndexKey.of(closed));
            assertThat(c.getValue()).as("run %s", open).isEqualTo(CODEC.encode(closed));
            assertThat(CODEC.decode(c.getKey(), c.getValue())).isEqualTo(closed);
        }
        IndexRecord open = run(rnd, 1, 10, 3).storedOpen(true);
        byte[] value = CODEC.encode(open);
        value[0] = IndexRecordCodec.FORMAT_V2;
        assertThatThrownBy(() -> CODEC.closeOpenRun(IndexKey.openRun(S), value)).isInstanceOf(NereusException.class);
        assertThatThrownBy(() -> CODEC.closeOpenRun(IndexKey.atEnd(open), CODEC.encode(open)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aDamagedStoredRun_isRefusedOrExtendedExactlyAsDecodingItWould() {
        Random rnd = new Random(12);
        int refused = 0;
        for (int i = 0; i < 60; i++) {
            IndexRecord run = run(rnd, 4, rnd.nextLong(1L << 30), 1 + rnd.nextInt(WalTarget.MAX_SECTIONS))
                    .storedOpen(i % 2 == 1);
            IndexRecord next = new IndexRecord(S, ReadView.COMMITTED, OffsetRange.of(run.range().end(),
                    run.range().end() + 3), GenerationId.APPEND, IndexRecordState.COMMITTED,
                    new WalTarget(4, (1L << 41) + i, 2), Checksum.crc32c(9), 3, 300, 0);
            byte[] valid = CODEC.encode(run);
            IndexKey key = IndexKey.of(run);
            List<byte[]> damaged = new ArrayList<>();
            for (int len = 0; len < valid.length; len++) {
                damaged.add(java.util.Arrays.copyOf(valid, len));
            }
            damaged.add(java.util.Arrays.copyOf(valid, valid.length + 1));
            for (int at = 0; at < valid.length; at++) {
                for (int b : new int[] {0, 1, 0x7F, 0x80, 0xFF, valid[at] + 1, valid[at] - 1}) {
                    byte[] d = valid.clone();
                    d[at] = (byte) b;
                    damaged.add(d);
                }
            }
            // the same run under keys that end it elsewhere
            for (long end : new long[] {run.range().start(), run.range().start() + 1, run.range().end() - 1,
                    run.range().end() + 1}) {
                assertSameOutcome(new IndexKey(S, ReadView.COMMITTED, end, GenerationId.APPEND), valid, next);
            }
            assertSameOutcome(new IndexKey(S, ReadView.COMMITTED, run.endOffset(), GenerationId.of(1)), valid, next);
            // an open run's value under its end, and a closed run's at the open-run key: both refused
            assertThat(assertSameOutcome(run.open() ? IndexKey.atEnd(run) : IndexKey.openRun(S), valid, next))
                    .isTrue();
            for (byte[] d : damaged) {
                refused += assertSameOutcome(key, d, next) ? 1 : 0;
            }
        }
        assertThat(refused).as("damaged values refused").isGreaterThan(2_000);
    }

    /** Whether the value was refused; asserts {@code extendRun} refuses it as decoding does, or agrees with it. */
    private static boolean assertSameOutcome(IndexKey key, byte[] stored, IndexRecord next) {
        Object expected;
        try {
            IndexRecord run = CODEC.decode(key, stored);
            expected = run.continuesWith(next, WalTarget.MAX_SECTIONS) ? run.followedBy(next) : "not continued";
        } catch (NereusException | ArithmeticException e) {
            expected = e instanceof NereusException n ? n.context() : e.getClass();
        }
        Object actual;
        try {
            byte[] extended = CODEC.extendRun(key, stored, next, WalTarget.MAX_SECTIONS);
            actual = extended == null ? "not continued" : CODEC.decode(key.isOpenRun() ? key
                    : new IndexKey(S, ReadView.COMMITTED, next.range().end(), GenerationId.APPEND), extended);
        } catch (NereusException | ArithmeticException e) {
            actual = e instanceof NereusException n ? n.context() : e.getClass();
        }
        assertThat(actual).as("stored %s under %s", java.util.HexFormat.of().formatHex(stored), key)
                .isEqualTo(expected);
        return !(expected instanceof IndexRecord) && !"not continued".equals(expected);
    }
}
