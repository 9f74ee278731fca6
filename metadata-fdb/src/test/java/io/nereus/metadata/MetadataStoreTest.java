package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import io.nereus.fdb.embedded.CommitFault;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class MetadataStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final CatalogStore catalog = f.catalog;
    private final StreamCommitStore streams = f.streams;
    private final GenerationIndexStore index = f.index;

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void open_writesFormatAndRefusesUnknownLayout() {
        byte[] stored = f.db.read(tr -> tr.get(f.ks.formatKey()).join());
        assertThat(FormatVersion.check(stored)).isEqualTo(FormatVersion.CURRENT);
        assertThat(await(MetadataStore.open(f.db, f.ks, f.executor()))).isNotNull();
        f.db.run(tr -> {
            tr.set(f.ks.formatKey(), FormatVersion.encode(FormatVersion.CURRENT + 1));
            return null;
        });
        assertThatThrownBy(() -> await(MetadataStore.open(f.db, f.ks, f.executor())))
                .isInstanceOf(FormatVersion.UnsupportedFormatVersionException.class)
                .hasMessageContaining("layout version 2 is not supported");
    }

    @Test
    void open_worksOnADirectoryLayerRoot() {
        List<String> path = List.of("nereus-test-dir", java.util.UUID.randomUUID().toString());
        DirectorySubspace dir = await(DirectoryLayer.getDefault().createOrOpen(f.db, path));
        try {
            MetadataStore onDir = await(MetadataStore.open(f.db, new NereusKeyspace(dir), f.executor()));
            assertThat(await(onDir.catalog().openStream("t")).streamId()).isEqualTo(StreamId.of(1));
        } finally {
            await(DirectoryLayer.getDefault().removeIfExists(f.db, path));
        }
    }

    @Test
    void openStream_createsOnceAndAllocatesReservedLedgerIds() {
        CatalogEntry a = await(catalog.openStream("tenant/ns/persistent/a"));
        CatalogEntry again = await(catalog.openStream("tenant/ns/persistent/a"));
        CatalogEntry b = await(catalog.openStream("tenant/ns/persistent/b"));
        assertThat(again).isEqualTo(a);
        assertThat(a.incarnation()).isEqualTo(1);
        assertThat(a.virtualLedgerId()).isEqualTo(CatalogEntry.MIN_VIRTUAL_LEDGER_ID);
        assertThat(b.streamId()).isNotEqualTo(a.streamId());
        assertThat(b.virtualLedgerId()).isEqualTo(a.virtualLedgerId() + 1);
        assertThat(await(streams.head(a.streamId()))).contains(StreamHead.initial());
    }

    @Test
    void deleteStream_thenRecreate_getsNewIncarnationAndIds() {
        CatalogEntry a = await(catalog.openStream("t"));
        Optional<CatalogEntry> deleted = await(catalog.deleteStream("t"));
        assertThat(deleted).map(CatalogEntry::state).contains(CatalogState.DELETED);
        assertThat(await(catalog.deleteStream("t"))).isEqualTo(deleted);
        assertThat(await(streams.head(a.streamId()))).map(StreamHead::state).contains(StreamState.DELETING);
        CatalogEntry again = await(catalog.openStream("t"));
        assertThat(again.incarnation()).isEqualTo(2);
        assertThat(again.state()).isEqualTo(CatalogState.ACTIVE);
        assertThat(again.streamId()).isNotEqualTo(a.streamId());
        assertThat(again.virtualLedgerId()).isNotEqualTo(a.virtualLedgerId());
        assertThat(await(catalog.deleteStream("never"))).isEmpty();
    }

    @Test
    void concurrentOpens_ofManyNames_allocateDistinctIds() {
        List<CompletableFuture<CatalogEntry>> fs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            fs.add(catalog.openStream("t" + i));
        }
        List<CatalogEntry> entries = fs.stream().map(StoreFixture::await).toList();
        assertThat(entries.stream().map(CatalogEntry::streamId).distinct()).hasSize(20);
        assertThat(entries.stream().map(CatalogEntry::virtualLedgerId).distinct()).hasSize(20);
    }

    @Test
    void commit_manyStreamsInOneTransaction_advancesHeadsWritesRecordsAndIntents() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long e1 = f.acquire(s1);
        long e2 = f.acquire(s2);
        CommitResult r = await(streams.commit(List.of(append(s1, e1, 0, 3, 50, 0, 0), append(s2, e2, 0, 1, 50, 0, 1))));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);
        assertThat(((CommitResult.Committed) r).heads()).extracting(StreamHead::committedEnd).containsExactly(3L, 1L);
        await(streams.commit(List.of(append(s1, e1, 3, 5, 50, 1, 0))));
        StreamHead h1 = await(streams.head(s1)).orElseThrow();
        assertThat(h1.committedEnd()).isEqualTo(5);
        assertThat(h1.commitVersion()).isEqualTo(2);
        assertThat(h1.cumulativeBytes()).isEqualTo(50);
        assertThat(await(streams.intent(s1, 50))).contains(new WalIntent(0, e1));
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 3), OffsetRange.of(3, 5));
        await(streams.commit(List.of(append(s1, e1, 5, 6, 51, 0, 0))));
        assertThat(await(streams.intent(s1, 51))).contains(new WalIntent(5, e1));
    }

    @Test
    void commit_fencedWriter_isRejectedAndWritesNothing() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long old = f.acquire(s1);
        long e2 = f.acquire(s2);
        long fresh = f.acquire(s1);
        assertThat(fresh).isGreaterThan(old);
        CommitResult r = await(streams.commit(List.of(append(s2, e2, 0, 1, 1, 0, 0), append(s1, old, 0, 1, 1, 0, 1))));
        assertThat(r).isInstanceOf(CommitResult.Rejected.class);
        assertThat(((CommitResult.Rejected) r).outcome()).isEqualTo(new AppendOutcome.Fenced(fresh, old));
        assertThat(await(streams.head(s2)).orElseThrow().committedEnd()).as("all or nothing").isZero();
    }

    @Test
    void commit_wrongExpectedStart_isRejected() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        await(streams.commit(List.of(append(s, e, 0, 2, 1, 0, 0))));
        CommitResult r = await(streams.commit(List.of(append(s, e, 1, 3, 1, 1, 0))));
        assertThat(r).isEqualTo(new CommitResult.Rejected(append(s, e, 1, 3, 1, 1, 0), new AppendOutcome.UnexpectedStart(2, 1)));
        assertThat(await(streams.commit(List.of(append(StreamId.of(999), 1, 0, 1, 1, 0, 0)))))
                .isEqualTo(new CommitResult.UnknownStream(StreamId.of(999)));
    }

    @Test
    void commit_severalAppendsOfOneStream_advanceThroughAllWithOwnRecords() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long e1 = f.acquire(s1);
        long e2 = f.acquire(s2);
        List<StreamAppend> coalesced = List.of(
                append(s1, e1, 0, 3, 50, 0, 0), append(s2, e2, 0, 1, 50, 0, 1),
                append(s1, e1, 3, 4, 50, 1, 0),
                append(s1, e1, 4, 6, 51, 0, 1), append(s2, e2, 1, 2, 51, 0, 0));
        CommitResult r = await(streams.commit(coalesced));
        assertThat(((CommitResult.Committed) r).heads()).extracting(StreamHead::committedEnd)
                .containsExactly(3L, 1L, 4L, 6L, 2L);
        StreamHead h1 = await(streams.head(s1)).orElseThrow();
        assertThat(h1.committedEnd()).isEqualTo(6);
        assertThat(h1.commitVersion()).isEqualTo(3);
        assertThat(h1.cumulativeBytes()).isEqualTo(60);
        assertThat(await(streams.head(s2)).orElseThrow().committedEnd()).isEqualTo(2);
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).extracting(IndexRecord::range, IndexRecord::target)
                .containsExactly(tuple(OffsetRange.of(0, 3), new WalTarget(50, 0, 0)),
                        tuple(OffsetRange.of(3, 4), new WalTarget(50, 1, 0)),
                        tuple(OffsetRange.of(4, 6), new WalTarget(51, 0, 1)));
        assertThat(await(streams.intent(s1, 50))).as("first append into the slice").contains(new WalIntent(0, e1));
        assertThat(await(streams.intent(s1, 51))).contains(new WalIntent(4, e1));
        assertThat(await(streams.intent(s2, 51))).contains(new WalIntent(1, e2));
    }

    @Test
    void commit_severalAppendsOfOneStream_notChained_isRejectedAndWritesNothing() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long e1 = f.acquire(s1);
        long e2 = f.acquire(s2);
        StreamAppend gap = append(s1, e1, 4, 5, 50, 1, 0);
        CommitResult r = await(streams.commit(List.of(
                append(s1, e1, 0, 3, 50, 0, 0), append(s2, e2, 0, 1, 50, 0, 1), gap)));
        assertThat(r).isEqualTo(new CommitResult.Rejected(gap, new AppendOutcome.UnexpectedStart(3, 4)));
        StreamAppend outOfOrder = append(s1, e1, 0, 3, 50, 0, 0);
        assertThat(await(streams.commit(List.of(append(s1, e1, 3, 4, 50, 1, 0), outOfOrder))))
                .isEqualTo(new CommitResult.Rejected(append(s1, e1, 3, 4, 50, 1, 0),
                        new AppendOutcome.UnexpectedStart(0, 3)));
        StreamAppend staleEpoch = append(s1, e1 + 1, 3, 4, 50, 1, 0);
        assertThat(await(streams.commit(List.of(append(s1, e1, 0, 3, 50, 0, 0), staleEpoch))))
                .isEqualTo(new CommitResult.Rejected(staleEpoch, new AppendOutcome.Fenced(e1, e1 + 1)));
        assertThat(await(streams.head(s1)).orElseThrow().committedEnd()).as("all or nothing").isZero();
        assertThat(await(streams.head(s2)).orElseThrow().committedEnd()).isZero();
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).isEmpty();
        assertThat(await(streams.intent(s1, 50))).isEmpty();
    }

    @Test
    void commit_severalAppendsOfOneStream_retriedAfterUnknownResult_advancesOnce() {
        StreamId s1 = f.newStream("a");
        StreamId s2 = f.newStream("b");
        long e1 = f.acquire(s1);
        long e2 = f.acquire(s2);
        List<StreamAppend> coalesced = List.of(
                append(s1, e1, 0, 2, 50, 0, 0), append(s2, e2, 0, 1, 50, 0, 1),
                append(s1, e1, 2, 5, 50, 1, 0), append(s1, e1, 5, 6, 50, 2, 0));
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        CommitResult r = await(streams.commit(coalesced));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);
        StreamHead h1 = await(streams.head(s1)).orElseThrow();
        assertThat(h1.committedEnd()).isEqualTo(6);
        assertThat(h1.commitVersion()).as("advanced once per append, not again on retry").isEqualTo(3);
        assertThat(h1.cumulativeBytes()).isEqualTo(60);
        assertThat(((CommitResult.Committed) r).heads()).as("the retry reports the stored heads")
                .containsExactly(h1, await(streams.head(s2)).orElseThrow(), h1, h1);
        assertThat(await(streams.head(s2)).orElseThrow().commitVersion()).isEqualTo(1);
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).hasSize(3);
        assertThat(await(streams.commit(coalesced))).as("a late duplicate changes nothing")
                .isInstanceOf(CommitResult.Committed.class);
        assertThat(await(streams.head(s1)).orElseThrow()).isEqualTo(h1);
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);
        await(streams.commit(List.of(append(s1, e1, 6, 7, 50, 3, 0), append(s1, e1, 7, 8, 50, 4, 0))));
        assertThat(await(streams.head(s1)).orElseThrow().commitVersion()).isEqualTo(5);
        assertThat(await(index.indexRecords(s1, ReadView.COMMITTED))).hasSize(5);
    }

    @Test
    void commit_retriedAfterUnknownResult_advancesOnce() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        CommitResult r = await(streams.commit(List.of(append(s, e, 0, 4, 1, 0, 0))));
        assertThat(r).isInstanceOf(CommitResult.Committed.class);
        StreamHead h = await(streams.head(s)).orElseThrow();
        assertThat(h.committedEnd()).isEqualTo(4);
        assertThat(h.commitVersion()).isEqualTo(1);
        assertThat(h.cumulativeBytes()).isEqualTo(40);
        f.embedded().injectCommitFaults(CommitFault.UNKNOWN_RESULT_NOT_APPLIED, 1);
        await(streams.commit(List.of(append(s, e, 4, 5, 1, 1, 0))));
        assertThat(await(streams.head(s)).orElseThrow().commitVersion()).isEqualTo(2);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).hasSize(2);
    }

    @Test
    void lookup_resolvesTrimsAndWaits() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        for (int i = 0; i < 10; i++) {
            await(streams.commit(List.of(append(s, e, 2L * i, 2L * i + 2, 1, i, 0))));
        }
        IndexLookup l = await(index.lookup(s, ReadView.COMMITTED, 7));
        assertThat(l).isInstanceOf(IndexLookup.Resolved.class);
        assertThat(((IndexLookup.Resolved) l).preferred().range()).isEqualTo(OffsetRange.of(6, 8));
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 20))).isEqualTo(new IndexLookup.NotYetCommitted(20));
        assertThat(await(index.lookup(s, ReadView.TOPIC_COMPACTED, 7))).isEqualTo(new IndexLookup.Unindexed(7));
        await(streams.trim(s, 5));
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 4))).isEqualTo(new IndexLookup.Trimmed(5));
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 5))).isInstanceOf(IndexLookup.Resolved.class);
        assertThatThrownBy(() -> await(index.lookup(StreamId.of(77), ReadView.COMMITTED, 0)))
                .isInstanceOf(UnknownStreamException.class);
    }

    @Test
    void trim_movesRecordsWhollyBelowToRetiredAndKeepsStraddling() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        for (int i = 0; i < 5; i++) {
            await(streams.commit(List.of(append(s, e, 3L * i, 3L * i + 3, 1, i, 0))));
        }
        StreamHead h = await(streams.trim(s, 7));
        assertThat(h.trimOffset()).isEqualTo(7);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(6, 9), OffsetRange.of(9, 12), OffsetRange.of(12, 15));
        assertThat(await(index.retiredRecords(s, 100))).extracting(IndexRecord::state).containsOnly(IndexRecordState.RETIRED);
        assertThat(await(index.retiredRecords(s, 100))).extracting(IndexRecord::target)
                .containsExactly(new WalTarget(1, 0, 0), new WalTarget(1, 1, 0));
        assertThat(await(streams.trim(s, 3)).trimOffset()).as("never lowered").isEqualTo(7);
        assertThatThrownBy(() -> await(streams.trim(s, 16))).hasMessageContaining("beyond committedEnd");
    }

    @Test
    void trim_ofManyRecords_runsInBatches() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        int n = StreamCommitStore.TRIM_BATCH + 50;
        List<StreamAppend> none = List.of();
        for (int i = 0; i < n; i++) {
            await(streams.commit(List.of(append(s, e, i, i + 1L, 1, i, 0))));
        }
        assertThat(none).isEmpty();
        await(streams.trim(s, n));
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).isEmpty();
        assertThat(await(index.retiredRecords(s, 10_000))).hasSize(n);
    }

    @Test
    void quarantineAndRetire_followTheStateMachine() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        await(streams.commit(List.of(append(s, e, 0, 2, 1, 0, 0))));
        IndexKey k = new IndexKey(s, ReadView.COMMITTED, 2, GenerationId.APPEND);
        assertThat(await(index.quarantine(k))).map(IndexRecord::state).contains(IndexRecordState.QUARANTINED);
        assertThat(await(index.quarantine(k))).map(IndexRecord::metadataVersion).contains(1L);
        assertThat(await(index.lookup(s, ReadView.COMMITTED, 1))).isEqualTo(new IndexLookup.Unindexed(1));
        assertThat(await(index.retire(k))).map(IndexRecord::state).contains(IndexRecordState.RETIRED);
        assertThat(await(index.retire(k))).map(IndexRecord::metadataVersion).contains(2L);
        assertThat(await(index.indexRecords(s, ReadView.COMMITTED))).isEmpty();
        assertThat(await(index.quarantine(k))).isEmpty();
        assertThat(await(index.retire(new IndexKey(s, ReadView.COMMITTED, 9, GenerationId.APPEND)))).isEmpty();
    }

    @Test
    void deletedStream_isPurgedOnlyAfterItsRetiredRecordsAreForgotten() {
        StreamId s = f.newStream("gone");
        long e = f.acquire(s);
        assertThat(await(streams.commit(List.of(append(s, e, 0, 2, 1, 0, 0))))).isInstanceOf(CommitResult.Committed.class);
        await(f.cursors.saveCursor(s, "c", e, CursorState.at(1)));
        assertThat(await(index.purgeStream(s))).as("not deleted yet").isFalse();
        await(catalog.deleteStream("gone"));
        await(streams.trim(s, 2));
        assertThat(await(index.purgeStream(s))).as("retired records not yet collected").isFalse();
        List<IndexKey> retired = await(index.retiredRecords(s, 100)).stream().map(IndexKey::of).toList();
        await(index.forgetRetired(retired));
        assertThat(await(index.retiredRecords(s, 100))).isEmpty();
        assertThat(await(index.purgeStream(s))).isTrue();
        assertThat(await(streams.head(s))).isEmpty();
        assertThat(await(f.cursors.loadCursor(s, "c"))).isEmpty();
        assertThat(await(index.purgeStream(s))).as("idempotent").isTrue();
    }

    @Test
    void seal_stopsCommits() {
        StreamId s = f.newStream("a");
        long e = f.acquire(s);
        await(streams.seal(s, e));
        CommitResult r = await(streams.commit(List.of(append(s, e, 0, 1, 1, 0, 0))));
        assertThat(((CommitResult.Rejected) r).outcome()).isEqualTo(new AppendOutcome.NotAccepting(StreamState.SEALED));
    }

    @Test
    void seal_byAFencedWriter_isRefusedAndLeavesTheStreamOpen() {
        StreamId s = f.newStream("a");
        long old = f.acquire(s);
        long current = f.acquire(s);
        assertThatThrownBy(() -> await(streams.seal(s, old))).isInstanceOf(WriterFencedException.class)
                .hasMessageContaining("head writer epoch " + current);
        assertThat(await(streams.head(s)).orElseThrow().state()).isEqualTo(StreamState.OPEN);
    }
}
