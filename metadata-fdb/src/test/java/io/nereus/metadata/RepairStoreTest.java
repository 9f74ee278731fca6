package io.nereus.metadata;

import static io.nereus.error.ErrorAssertions.thrown;
import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.fdb.embedded.CommitFault;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Intent listing and the conditional generation-0 repair write of {@link MetadataStore}. */
@Timeout(120)
class RepairStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final StreamCommitStore streams = f.streams;
    private final GenerationIndexStore index = f.index;

    @AfterEach
    void close() {
        f.close();
    }

    /** The WAL writer registers a slice before committing into it. */
    @BeforeEach
    void openSlices() {
        f.openSlices(1, 3, 7, 9);
    }

    private static RepairRequest requestFor(StreamAppend a) {
        return new RepairRequest(a.stream(), a.range(), a.target(), a.checksum(), a.entryCount(), a.bytes());
    }

    /** Clears the stored record equal to {@code r}, where it is (under its end, or as its stream's open run). */
    private void clearRecord(IndexRecord r) {
        IndexRecord stored = await(index.indexRecords(r.stream(), r.view())).stream().filter(r::equals).findFirst()
                .orElseThrow();
        byte[] key = f.ks.indexKey(IndexKey.of(stored));
        f.db.run(tr -> {
            tr.clear(key);
            return null;
        });
    }

    @Test
    void intents_listEverySliceOfTheStreamOnly() {
        StreamId s = f.newStream("a");
        StreamId other = f.newStream("b");
        long e = f.acquire(s);
        long eo = f.acquire(other);
        await(streams.commit(List.of(append(s, e, 0, 2, 3, 0, 0), append(other, eo, 0, 1, 3, 0, 1)), 1));
        await(streams.commit(List.of(append(s, e, 2, 4, 3, 1, 0)), 1));
        await(streams.commit(List.of(append(s, e, 4, 6, 7, 0, 0)), 1));
        assertThat(await(streams.intents(s))).containsExactly(
                Map.entry(3L, new WalIntent(0, e)), Map.entry(7L, new WalIntent(4, e)));
        assertThat(await(streams.intents(other))).containsOnlyKeys(3L);
        assertThat(await(streams.intents(StreamId.of(99)))).isEmpty();
    }

    @Test
    void repair_missingRecord_writesItBackAndLookupResolves() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        StreamId b = f.newStream("b");
        StreamAppend a = append(s, e, 0, 4, 1, 0, 0);
        await(streams.commit(List.of(a, append(b, f.acquire(b), 0, 1, 1, 0, 1)), 1));
        await(streams.commit(List.of(append(s, e, 4, 6, 1, 1, 0)), 1));
        clearRecord(a.generationZeroRecord());
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 2))).isEqualTo(new IndexLookup.Unindexed(2));

        RepairOutcome o = await(index.repairGenerationZero(requestFor(a)));

        assertThat(o).isEqualTo(new RepairOutcome.Repaired(a.generationZeroRecord()));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 4), OffsetRange.of(4, 6));
        IndexLookup l = await(index.lookup(s, ReadView.COMMITTED, 2));
        assertThat(((IndexLookup.Resolved) l).preferred()).isEqualTo(a.generationZeroRecord());
    }

    @Test
    void repair_ofAPresentRecord_isRepairedWithoutChange_andAnotherTargetIsAlreadyCovered() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        StreamAppend a = append(s, e, 0, 4, 1, 0, 0);
        await(streams.commit(List.of(a), 1));
        await(streams.commit(List.of(append(s, e, 4, 8, 1, 1, 0)), 1));

        assertThat(await(index.repairGenerationZero(requestFor(a))))
                .isEqualTo(new RepairOutcome.Repaired(a.generationZeroRecord()));
        RepairRequest elsewhere = new RepairRequest(s, OffsetRange.of(2, 6), new WalTarget(9, 9, 0),
                Checksum.crc32c(5), 1, 1);
        RepairOutcome o = await(index.repairGenerationZero(elsewhere));

        assertThat(o).isInstanceOf(RepairOutcome.AlreadyCovered.class);
        assertThat(((RepairOutcome.AlreadyCovered) o).covering()).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 4), OffsetRange.of(4, 8));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).hasSize(2);
    }

    @Test
    void repair_whollyTrimmedRange_isTrimmed_straddlingRangeIsRepaired() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        StreamAppend first = append(s, e, 0, 4, 1, 0, 0);
        StreamAppend second = append(s, e, 4, 8, 1, 1, 0);
        await(streams.commit(List.of(first), 1));
        await(streams.commit(List.of(second), 1));
        await(streams.commit(List.of(append(s, e, 8, 9, 1, 2, 0)), 1));
        clearRecord(second.generationZeroRecord());
        await(streams.trim(s, 6, e));

        assertThat(await(index.repairGenerationZero(requestFor(first)))).isEqualTo(new RepairOutcome.Trimmed(6));
        assertThat(await(index.repairGenerationZero(requestFor(second))))
                .isEqualTo(new RepairOutcome.Repaired(second.generationZeroRecord()));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(4, 8), OffsetRange.of(8, 9));
    }

    @Test
    void repair_beyondCommittedEnd_isNotCommittedAndWritesNothing() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        await(streams.commit(List.of(append(s, e, 0, 4, 1, 0, 0)), 1));
        RepairRequest ahead = requestFor(append(s, e, 4, 6, 1, 1, 0));

        assertThat(await(index.repairGenerationZero(ahead))).isEqualTo(new RepairOutcome.NotCommitted(4));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).hasSize(1);
    }

    @Test
    void repair_retriedAfterUnknownResult_writesOneRecord() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        StreamAppend a = append(s, e, 0, 4, 1, 0, 0);
        await(streams.commit(List.of(a), 1));
        clearRecord(a.generationZeroRecord());
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);

        assertThat(await(index.repairGenerationZero(requestFor(a))))
                .isEqualTo(new RepairOutcome.Repaired(a.generationZeroRecord()));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).containsExactly(a.generationZeroRecord());
    }

    @Test
    void repair_overAQuarantinedRecordOfTheSameKey_isRefused() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        StreamAppend a = append(s, e, 0, 4, 1, 0, 0);
        await(streams.commit(List.of(a), 1));
        // the stream's open run, named by its end: repair would write the record under that end, 4
        IndexRecord q = await(index.quarantine(IndexKey.of(a.generationZeroRecord()))).orElseThrow();
        assertThat(q.open()).isTrue();

        assertThat(await(index.repairGenerationZero(requestFor(a)))).isEqualTo(new RepairOutcome.KeyOccupied(q));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).containsExactly(q);
    }

    @Test
    void repair_ofUnknownStream_fails() {
        RepairRequest r = requestFor(append(StreamId.of(42), 1, 0, 1, 1, 0, 0));
        assertThat(thrown(ErrorCode.NOT_FOUND, () -> await(index.repairGenerationZero(r))).context())
                .containsEntry("stream", StreamId.of(42));
    }
}
