package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.nereus.fdb.embedded.CommitFault;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A stream's consecutive appends into one WAL slice share one generation-0 record, a run ({@link WalTarget}): the
 * index holds a key per run, and every append's section stays addressable through it.
 */
@Timeout(120)
class GenerationZeroRunsTest {
    private final StoreFixture f = new StoreFixture();
    private final StreamCommitStore streams = f.streams;
    private final GenerationIndexStore index = f.index;

    @AfterEach
    void close() {
        f.close();
    }

    @BeforeEach
    void openSlices() {
        f.openSlices(50, 51);
    }

    private List<IndexRecord> records(StreamId s) {
        return await(index.indexRecords(s, ReadView.COMMITTED));
    }

    @Test
    void commits_ofOneStreamIntoOneSlice_extendOneRecord_whoseSectionsAreEachAppend() {
        StreamId a = f.newStream("a");
        StreamId b = f.newStream("b");
        long ea = f.acquire(a);
        long eb = f.acquire(b);
        await(streams.commit(List.of(append(a, ea, 0, 3, 50, 0, 0), append(b, eb, 0, 1, 50, 0, 1))));
        await(streams.commit(List.of(append(b, eb, 1, 2, 50, 1, 0))));
        await(streams.commit(List.of(append(a, ea, 3, 4, 50, 2, 1), append(b, eb, 2, 4, 50, 2, 0))));
        await(streams.commit(List.of(append(a, ea, 4, 6, 50, 3, 0))));

        List<IndexRecord> ra = records(a);
        assertThat(ra).as("one key for the run").hasSize(1);
        IndexRecord run = ra.get(0);
        assertThat(run.range()).isEqualTo(OffsetRange.of(0, 6));
        assertThat(run.entryCount()).isEqualTo(6);
        assertThat(run.bytes()).isEqualTo(60);
        assertThat(run.metadataVersion()).isZero();
        assertThat(run.walSections()).extracting(WalSectionRef::entryId, WalSectionRef::positionInBatch,
                WalSectionRef::range, WalSectionRef::checksum).containsExactly(
                tuple(0L, 0, OffsetRange.of(0, 3), append(a, ea, 0, 3, 50, 0, 0).checksum()),
                tuple(2L, 1, OffsetRange.of(3, 4), append(a, ea, 3, 4, 50, 2, 1).checksum()),
                tuple(3L, 0, OffsetRange.of(4, 6), append(a, ea, 4, 6, 50, 3, 0).checksum()));
        assertThat(records(b)).extracting(IndexRecord::range).containsExactly(OffsetRange.of(0, 4));
        assertThat(records(b).get(0).walSections()).hasSize(3);
        // a lookup anywhere in the run finds it
        for (long o = 0; o < 6; o++) {
            IndexLookup l = await(index.lookup(a, ReadView.COMMITTED, o));
            assertThat(((IndexLookup.Resolved) l).candidates()).containsExactly(run);
        }
        StreamHead head = await(streams.head(a)).orElseThrow();
        assertThat(head.committedEnd()).isEqualTo(6);
        assertThat(head.commitVersion()).isEqualTo(3);
        assertThat(await(streams.intent(a, 50))).contains(new WalIntent(0, ea));
    }

    @Test
    void aRun_endsAtItsSectionLimit_andAtANewSlice() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        for (int i = 0; i < 7; i++) {
            await(streams.commit(List.of(append(a, e, i, i + 1, 50, i, 0)), 3));
        }
        await(streams.commit(List.of(append(a, e, 7, 8, 51, 0, 0)), 3));
        await(streams.commit(List.of(append(a, e, 8, 9, 51, 1, 0)), 3));
        assertThat(records(a)).extracting(IndexRecord::range, r -> r.walSections().size(),
                r -> ((WalTarget) r.target()).sliceId()).containsExactly(
                tuple(OffsetRange.of(0, 3), 3, 50L),
                tuple(OffsetRange.of(3, 6), 3, 50L),
                tuple(OffsetRange.of(6, 7), 1, 50L),
                tuple(OffsetRange.of(7, 9), 2, 51L));
    }

    @Test
    void coalescedAppends_retriedAfterAnUnknownResult_advanceOnce_andALateDuplicateChangesNothing() {
        StreamId a = f.newStream("a");
        StreamId b = f.newStream("b");
        long ea = f.acquire(a);
        long eb = f.acquire(b);
        await(streams.commit(List.of(append(a, ea, 0, 1, 50, 0, 0))));
        List<StreamAppend> coalesced = List.of(
                append(a, ea, 1, 2, 50, 1, 0), append(b, eb, 0, 1, 50, 1, 1),
                append(a, ea, 2, 5, 50, 2, 0), append(a, ea, 5, 6, 50, 3, 0));
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        CommitResult r = await(streams.commit(coalesced));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);
        StreamHead h = await(streams.head(a)).orElseThrow();
        assertThat(h.committedEnd()).isEqualTo(6);
        assertThat(h.commitVersion()).as("advanced once per append, not again on retry").isEqualTo(4);
        assertThat(records(a)).extracting(IndexRecord::range, r2 -> r2.walSections().size())
                .containsExactly(tuple(OffsetRange.of(0, 6), 4));
        assertThat(await(streams.commit(coalesced))).as("a late duplicate changes nothing")
                .isEqualTo(new CommitResult.Committed(List.of(h, await(streams.head(b)).orElseThrow(), h, h)));
        assertThat(await(streams.head(a)).orElseThrow()).isEqualTo(h);
        assertThat(records(a)).hasSize(1);
        // an append that is not the one the run lists, at offsets the head covers, is no duplicate
        CommitResult other = await(streams.commit(List.of(append(a, ea, 2, 5, 50, 9, 0))));
        assertThat(other).isEqualTo(new CommitResult.Rejected(append(a, ea, 2, 5, 50, 9, 0),
                new AppendOutcome.UnexpectedStart(6, 2)));
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);
        await(streams.commit(List.of(append(a, ea, 6, 7, 50, 4, 0))));
        assertThat(records(a)).extracting(IndexRecord::range).containsExactly(OffsetRange.of(0, 7));
    }

    @Test
    void aRunBelowTheTrimOffset_isRetired_andTheNextAppendStartsANewRecord() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        await(streams.commit(List.of(append(a, e, 0, 2, 50, 0, 0))));
        await(streams.commit(List.of(append(a, e, 2, 4, 50, 1, 0))));
        await(streams.trim(a, 4, e));
        await(streams.commit(List.of(append(a, e, 4, 5, 50, 2, 0))));
        assertThat(records(a)).extracting(IndexRecord::range).containsExactly(OffsetRange.of(4, 5));
        assertThat(await(index.retiredRecords(a, 100))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 4));
    }

    @Test
    void aQuarantinedRun_isNotContinued() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        await(streams.commit(List.of(append(a, e, 0, 2, 50, 0, 0))));
        await(streams.commit(List.of(append(a, e, 2, 4, 50, 1, 0))));
        await(index.quarantine(IndexKey.openRun(a)));
        await(streams.commit(List.of(append(a, e, 4, 5, 50, 2, 0))));
        assertThat(records(a)).extracting(IndexRecord::range, IndexRecord::state).containsExactly(
                tuple(OffsetRange.of(0, 4), IndexRecordState.QUARANTINED),
                tuple(OffsetRange.of(4, 5), IndexRecordState.COMMITTED));
    }

    @Test
    void manyAppends_leaveOneKeyPerRun() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        List<StreamAppend> batch = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            batch.add(append(a, e, i, i + 1, 50, i, 0));
            if (batch.size() == 8) {
                await(streams.commit(batch));
                batch.clear();
            }
        }
        await(streams.commit(batch));
        List<IndexRecord> rs = records(a);
        assertThat(rs).extracting(IndexRecord::range).containsExactly(OffsetRange.of(0, 32), OffsetRange.of(32, 64),
                OffsetRange.of(64, 96), OffsetRange.of(96, 100));
        long entry = 0;
        for (IndexRecord r : rs) {
            for (WalSectionRef s : r.walSections()) {
                assertThat(s.entryId()).isEqualTo(entry);
                assertThat(s.range()).isEqualTo(OffsetRange.of(entry, entry + 1));
                entry++;
            }
        }
    }

    /** A publication of an object holding exactly {@code source}'s range, as the materializer would request it. */
    private static PublicationRequest publicationOf(IndexRecord source) {
        long n = source.range().length();
        return new PublicationRequest(source.stream(), ReadView.COMMITTED, source.range(),
                List.of(PublicationRequest.SourceRef.of(source)), new ObjectTarget("obj", 0, 10 * n, 10 * n, "v"),
                Checksum.crc32c(1), n, 10 * n);
    }

    /** The index keys of {@code s} in the lookup space, as stored. */
    private List<IndexKey> keys(StreamId s) {
        return f.db.read(tr -> tr.getRange(f.ks.indexViewRange(s, ReadView.COMMITTED)).asList()).join().stream()
                .map(kv -> f.ks.unpackIndexKey(kv.getKey())).toList();
    }

    @Test
    void theOpenRun_staysAtOneKey_andIsClosedUnderItsEndByAnAppendIntoAnotherSlice() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        await(streams.commit(List.of(append(a, e, 0, 2, 50, 0, 0))));
        assertThat(keys(a)).containsExactly(IndexKey.openRun(a));
        await(streams.commit(List.of(append(a, e, 2, 3, 50, 1, 0))));
        await(streams.commit(List.of(append(a, e, 3, 5, 50, 2, 0))));
        assertThat(keys(a)).as("extending the open run adds no key").containsExactly(IndexKey.openRun(a));
        IndexRecord open = records(a).get(0);
        assertThat(open.open()).isTrue();
        assertThat(open.range()).isEqualTo(OffsetRange.of(0, 5));
        assertThat(IndexKey.of(open)).isEqualTo(IndexKey.openRun(a));
        // a scan of records ending above an offset meets the open run's key from anywhere; it keeps it below its end
        assertThat(await(index.indexRecords(a, ReadView.COMMITTED, 4, 10))).containsExactly(open);
        assertThat(await(index.indexRecords(a, ReadView.COMMITTED, 5, 10))).isEmpty();
        assertThat(await(index.indexRecords(a, ReadView.COMMITTED, 90, 10))).isEmpty();

        // an append into another slice closes the run under its end, 5, and opens the next; in one commit, twice
        await(streams.commit(List.of(append(a, e, 5, 6, 51, 0, 0), append(a, e, 6, 7, 51, 1, 0))));
        assertThat(keys(a)).containsExactly(new IndexKey(a, ReadView.COMMITTED, 5, GenerationId.APPEND),
                IndexKey.openRun(a));
        List<IndexRecord> rs = records(a);
        assertThat(rs).extracting(IndexRecord::range, IndexRecord::open).containsExactly(
                tuple(OffsetRange.of(0, 5), false), tuple(OffsetRange.of(5, 7), true));
        assertThat(rs.get(0)).as("closed as it was").isEqualTo(open);
        // lookups meet both, in the order of their ends
        assertThat(((IndexLookup.Resolved) await(index.lookup(a, ReadView.COMMITTED, 4))).preferred().range())
                .isEqualTo(OffsetRange.of(0, 5));
        assertThat(((IndexLookup.Resolved) await(index.lookup(a, ReadView.COMMITTED, 6))).preferred().range())
                .isEqualTo(OffsetRange.of(5, 7));
    }

    @Test
    void anOpenRunPublished_movesToFallbackUnderItsEnd_andTheNextAppendOpensANewRun() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        await(streams.commit(List.of(append(a, e, 0, 2, 50, 0, 0))));
        await(streams.commit(List.of(append(a, e, 2, 4, 50, 1, 0))));
        await(f.slices.seal(50));
        IndexRecord open = records(a).get(0);
        PublicationRequest req = publicationOf(open);
        assertThat(await(index.publish(req))).isInstanceOf(PublicationOutcome.Publish.class);
        assertThat(keys(a)).as("the object's record only").containsExactly(
                new IndexKey(a, ReadView.COMMITTED, 4, GenerationId.of(1)));
        assertThat(await(index.fallbackRecords(a, ReadView.COMMITTED))).extracting(IndexRecord::range,
                IndexRecord::open).containsExactly(tuple(OffsetRange.of(0, 4), false));

        await(streams.commit(List.of(append(a, e, 4, 5, 51, 0, 0))));
        assertThat(records(a)).extracting(IndexRecord::range, IndexRecord::open).containsExactly(
                tuple(OffsetRange.of(0, 4), false), tuple(OffsetRange.of(4, 5), true));
    }

    @Test
    void aPublicationWhoseOpenRunSourceWasClosedMeanwhile_publishesItUnderItsEnd() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        await(streams.commit(List.of(append(a, e, 0, 2, 50, 0, 0), append(a, e, 2, 4, 50, 1, 0))));
        IndexRecord open = records(a).get(0);
        await(f.slices.seal(50));
        // the stream's next append, into the next slice, closes that run under its end and opens another
        await(streams.commit(List.of(append(a, e, 4, 5, 51, 0, 0))));
        PublicationRequest req = publicationOf(open);
        assertThat(await(index.publish(req))).isInstanceOf(PublicationOutcome.Publish.class);
        assertThat(records(a)).extracting(IndexRecord::range, IndexRecord::generation, IndexRecord::open)
                .containsExactly(tuple(OffsetRange.of(0, 4), GenerationId.of(1), false),
                        tuple(OffsetRange.of(4, 5), GenerationId.APPEND, true));
        assertThat(await(index.fallbackRecords(a, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 4));
    }

    @Test
    void aPublicationWhoseOpenRunSourceIsAnotherRunNow_isRefused() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        await(streams.commit(List.of(append(a, e, 0, 2, 50, 0, 0))));
        IndexRecord open = records(a).get(0);
        // a later append extends the run: the source [0, 2) as read is gone, the open key holds [0, 3)
        await(streams.commit(List.of(append(a, e, 2, 3, 50, 1, 0))));
        PublicationRequest req = publicationOf(open);
        PublicationOutcome o = await(index.publish(req));
        assertThat(o).isInstanceOf(PublicationOutcome.SourceChanged.class);
        assertThat(((PublicationOutcome.SourceChanged) o).reason()).isEqualTo("gone from the lookup space");
        assertThat(keys(a)).containsExactly(IndexKey.openRun(a));
    }

    @Test
    void aTrimToTheCommittedEnd_retiresTheOpenRun() {
        StreamId a = f.newStream("a");
        long e = f.acquire(a);
        await(streams.commit(List.of(append(a, e, 0, 3, 50, 0, 0))));
        await(streams.trim(a, 2, e));
        assertThat(records(a)).as("straddling the trim offset: stays").extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 3));
        await(streams.trim(a, 3, e));
        assertThat(keys(a)).isEmpty();
        assertThat(await(index.retiredRecords(a, 10))).extracting(IndexRecord::range, IndexRecord::state,
                IndexRecord::open).containsExactly(tuple(OffsetRange.of(0, 3), IndexRecordState.RETIRED, false));
    }
}
