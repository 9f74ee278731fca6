package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.fdb.embedded.CommitFault;
import io.nereus.metadata.codec.CounterCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What a WAL batch commit records in and checks of the slices it writes into ({@link StreamCommitStore#commit}). */
@Timeout(120)
class CommitSliceRangesTest {
    private final StoreFixture f = new StoreFixture();
    private final StreamCommitStore streams = f.streams;
    private final WalSliceStore slices = f.slices;

    @BeforeEach
    void openSlices() {
        f.openSlices(50, 51);
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void commits_ofHundredStreams_recordEachStreamsRangeInEachSlice() {
        int n = 100;
        List<StreamId> ids = new ArrayList<>();
        List<Long> epochs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(f.newStream("s" + i));
            epochs.add(f.acquire(ids.get(i)));
        }
        long[] end = new long[n];
        SortedMap<StreamId, OffsetRange> in50 = new TreeMap<>();
        SortedMap<StreamId, OffsetRange> in51 = new TreeMap<>();
        for (int entry = 0; entry < 5; entry++) {
            long slice = entry < 3 ? 50 : 51;
            List<StreamAppend> batch = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                // streams skip batches now and then, and append 1 to 3 offsets
                if ((i + entry) % 4 == 3) {
                    continue;
                }
                long len = 1 + (i + entry) % 3;
                batch.add(append(ids.get(i), epochs.get(i), end[i], end[i] + len, slice, entry, batch.size()));
                SortedMap<StreamId, OffsetRange> ranges = slice == 50 ? in50 : in51;
                long first = ranges.containsKey(ids.get(i)) ? ranges.get(ids.get(i)).start() : end[i];
                end[i] += len;
                ranges.put(ids.get(i), OffsetRange.of(first, end[i]));
            }
            assertThat(await(streams.commit(batch))).isInstanceOf(CommitResult.Committed.class);
        }
        assertThat(await(slices.ranges(50))).isEqualTo(in50);
        assertThat(await(slices.ranges(51))).isEqualTo(in51);
        for (int i = 0; i < n; i++) {
            assertThat(await(streams.intent(ids.get(i), 50)).map(WalIntent::firstOffset))
                    .as("the range starts at the stream's intent").contains(in50.get(ids.get(i)).start());
        }
    }

    @Test
    void coalescedCommit_acrossTwoSlices_recordsOneRangePerStreamAndSlice() {
        StreamId a = f.newStream("a");
        StreamId b = f.newStream("b");
        long ea = f.acquire(a);
        long eb = f.acquire(b);
        await(streams.commit(List.of(append(a, ea, 0, 2, 50, 0, 0))));
        CommitResult r = await(streams.commit(List.of(
                append(a, ea, 2, 3, 50, 1, 0), append(b, eb, 0, 4, 50, 1, 1),
                append(a, ea, 3, 5, 51, 0, 0), append(a, ea, 5, 6, 51, 1, 0), append(b, eb, 4, 5, 51, 1, 1))));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);
        assertThat(await(slices.ranges(50))).containsExactly(Map.entry(a, OffsetRange.of(0, 3)),
                Map.entry(b, OffsetRange.of(0, 4)));
        assertThat(await(slices.ranges(51))).containsExactly(Map.entry(a, OffsetRange.of(3, 6)),
                Map.entry(b, OffsetRange.of(4, 5)));
    }

    @Test
    void commits_ofTwoStreamsWhoseKeysAreKeptInOnePlace_eachWriteTheirOwnKeys() {
        StreamId a = f.newStream("a");
        // the next stream id shares a's place in the kept keys, as if that many streams had been created between
        f.db.run(tr -> {
            tr.set(f.ks.counterKey(NereusKeyspace.STREAM_ID_COUNTER),
                    CounterCodec.INSTANCE.encode(a.value() + StreamCommitStore.KEPT_STREAM_KEYS));
            return null;
        });
        StreamId b = f.newStream("b");
        assertThat(b.value() - a.value()).isEqualTo(StreamCommitStore.KEPT_STREAM_KEYS);
        long ea = f.acquire(a);
        long eb = f.acquire(b);
        // each commit finds the other stream's keys, or its own of another slice, in the place
        assertThat(await(streams.commit(List.of(append(a, ea, 0, 1, 50, 0, 0)))))
                .isInstanceOf(CommitResult.Committed.class);
        assertThat(await(streams.commit(List.of(append(b, eb, 0, 2, 50, 1, 0)))))
                .isInstanceOf(CommitResult.Committed.class);
        assertThat(await(streams.commit(List.of(append(a, ea, 1, 3, 50, 2, 0), append(b, eb, 2, 3, 50, 2, 1),
                append(a, ea, 3, 4, 51, 0, 0))))).isInstanceOf(CommitResult.Committed.class);
        assertThat(await(streams.commit(List.of(append(b, eb, 3, 5, 51, 1, 0), append(a, ea, 4, 6, 51, 1, 1)))))
                .isInstanceOf(CommitResult.Committed.class);
        assertThat(await(streams.commit(List.of(append(a, ea, 6, 7, 50, 3, 0)))))
                .isInstanceOf(CommitResult.Committed.class);

        assertThat(await(streams.head(a)).orElseThrow().committedEnd()).isEqualTo(7);
        assertThat(await(streams.head(b)).orElseThrow().committedEnd()).isEqualTo(5);
        assertThat(await(slices.ranges(50))).containsExactly(Map.entry(a, OffsetRange.of(0, 7)),
                Map.entry(b, OffsetRange.of(0, 3)));
        assertThat(await(slices.ranges(51))).containsExactly(Map.entry(a, OffsetRange.of(3, 6)),
                Map.entry(b, OffsetRange.of(3, 5)));
        assertThat(await(streams.intent(a, 51)).map(WalIntent::firstOffset)).contains(3L);
        assertThat(await(streams.intent(b, 51)).map(WalIntent::firstOffset)).contains(3L);
        assertThat(((IndexLookup.Resolved) await(f.index.lookup(a, ReadView.COMMITTED, 6))).candidates().get(0)
                .target()).isEqualTo(new WalTarget(50, 3, 0));
        assertThat(((IndexLookup.Resolved) await(f.index.lookup(b, ReadView.COMMITTED, 4))).candidates().get(0)
                .target()).isEqualTo(new WalTarget(51, 1, 0));
    }

    @Test
    void commit_intoASealedOrUnregisteredSlice_isRefusedAndWritesNothing() {
        StreamId a = f.newStream("a");
        StreamId b = f.newStream("b");
        long ea = f.acquire(a);
        long eb = f.acquire(b);
        await(streams.commit(List.of(append(a, ea, 0, 2, 50, 0, 0))));
        await(slices.seal(50));

        CommitResult sealed = await(streams.commit(List.of(append(b, eb, 0, 1, 51, 0, 0), append(a, ea, 2, 3, 50, 1, 0))));
        assertThat(sealed).isEqualTo(new CommitResult.SliceNotOpen(50, Optional.of(WalSliceState.SEALED)));
        CommitResult unknown = await(streams.commit(List.of(append(b, eb, 0, 1, 99, 0, 0))));
        assertThat(unknown).isEqualTo(new CommitResult.SliceNotOpen(99, Optional.empty()));

        assertThat(await(streams.head(a)).orElseThrow().committedEnd()).isEqualTo(2);
        assertThat(await(streams.head(b)).orElseThrow().committedEnd()).as("all or nothing").isZero();
        assertThat(await(slices.ranges(50))).as("ranges of a sealed slice are final")
                .containsExactly(Map.entry(a, OffsetRange.of(0, 2)));
        assertThat(await(slices.ranges(51))).isEmpty();
        assertThat(await(slices.ranges(99))).isEmpty();
        assertThat(await(streams.intent(b, 51))).isEmpty();
    }

    @Test
    void commit_retriedAfterUnknownResult_recordsTheRangeOnce_andALateDuplicateAfterSealIsCommitted() {
        StreamId a = f.newStream("a");
        long ea = f.acquire(a);
        await(streams.commit(List.of(append(a, ea, 0, 2, 50, 0, 0))));
        List<StreamAppend> batch = List.of(append(a, ea, 2, 4, 50, 1, 0), append(a, ea, 4, 5, 50, 2, 0));
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        assertThat(await(streams.commit(batch))).isInstanceOf(CommitResult.Committed.class);
        assertThat(await(slices.ranges(50))).containsExactly(Map.entry(a, OffsetRange.of(0, 5)));

        await(slices.seal(50));
        assertThat(await(streams.commit(batch))).as("already applied before the seal: reported committed")
                .isInstanceOf(CommitResult.Committed.class);
        assertThat(await(slices.ranges(50))).containsExactly(Map.entry(a, OffsetRange.of(0, 5)));
        assertThat(await(streams.head(a)).orElseThrow().commitVersion()).isEqualTo(3);
    }

    @Test
    void refusedAppend_recordsNoRange() {
        StreamId a = f.newStream("a");
        StreamId b = f.newStream("b");
        long ea = f.acquire(a);
        long eb = f.acquire(b);
        CommitResult r = await(streams.commit(List.of(append(a, ea, 0, 1, 50, 0, 0), append(b, eb, 3, 4, 50, 0, 1))));
        assertThat(r).isInstanceOf(CommitResult.Rejected.class);
        assertThat(await(slices.ranges(50))).isEmpty();
    }
}
