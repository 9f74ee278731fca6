package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.append;
import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The garbage collector's metadata steps ({@link CollectionStore}). */
@Timeout(120)
class CollectionStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final StreamCommitStore streams = f.streams;
    private final GenerationIndexStore index = f.index;
    private final CollectionStore collection = f.store.collection();
    private StreamId a;
    private StreamId b;
    private long ea;
    private long eb;

    /** Streams a and b each commit [0, 4) and [4, 8) into slice 1, then [8, 12) into slice 2; slice 1 is sealed. */
    @BeforeEach
    void twoStreamsInTwoSlices() {
        f.openSlices(1, 2);
        a = f.newStream("a");
        b = f.newStream("b");
        ea = f.acquire(a);
        eb = f.acquire(b);
        await(streams.commit(List.of(append(a, ea, 0, 4, 1, 0, 0), append(b, eb, 0, 4, 1, 0, 1)), 1));
        await(streams.commit(List.of(append(a, ea, 4, 8, 1, 1, 0), append(b, eb, 4, 8, 1, 1, 1)), 1));
        await(streams.commit(List.of(append(a, ea, 8, 12, 2, 0, 0), append(b, eb, 8, 12, 2, 0, 1)), 1));
        await(f.slices.seal(1));
    }

    @AfterEach
    void close() {
        f.close();
    }

    private IndexRecord publish(StreamId s, String object, long start, long end) {
        List<IndexRecord> sources = await(index.indexRecords(s, ReadView.COMMITTED)).stream()
                .filter(r -> r.range().start() >= start && r.range().end() <= end).toList();
        PublicationRequest req = new PublicationRequest(s, ReadView.COMMITTED, OffsetRange.of(start, end),
                sources.stream().map(PublicationRequest.SourceRef::of).toList(),
                new ObjectTarget(object, 0, 100, 100, "v"), Checksum.crc32c(object.hashCode()), end - start, 100);
        return ((PublicationOutcome.Publish) await(index.publish(req))).record();
    }

    private Optional<SliceHold> retire(long slice, StreamId s) {
        OffsetRange range = await(f.slices.ranges(slice)).get(s);
        return await(collection.retireSliceRecords(slice, s, range));
    }

    @Test
    void materializedSlice_isRetiredMarkedAndForgotten() {
        publish(a, "obj-a", 0, 8);
        publish(b, "obj-b", 0, 8);
        assertThat(await(collection.markCollecting(1))).as("FALLBACK records still target it")
                .isInstanceOf(SliceCollection.Held.class);
        assertThat(retire(1, a)).isEmpty();
        assertThat(retire(1, b)).isEmpty();
        assertThat(await(index.fallbackRecords(a, ReadView.COMMITTED))).isEmpty();
        assertThat(await(index.retiredRecords(a, 10))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 4), OffsetRange.of(4, 8));
        // reads of [0, 8) are served by the object alone now
        assertThat(((IndexLookup.Resolved) await(index.lookup(a, ReadView.COMMITTED, 5))).candidates())
                .extracting(IndexRecord::generation).containsExactly(GenerationId.of(1));

        SliceCollection marked = await(collection.markCollecting(1));
        assertThat(marked).isInstanceOf(SliceCollection.Collecting.class);
        assertThat(await(f.slices.slice(1))).map(WalSlice::state).contains(WalSliceState.COLLECTING);
        assertThat(await(collection.markCollecting(1))).as("idempotent").isEqualTo(marked);
        // generation-0 repair refuses a COLLECTING slice
        RepairRequest repair = new RepairRequest(a, OffsetRange.of(0, 4), new WalTarget(1, 0, 0),
                Checksum.crc32c(4), 4, 40);
        assertThat(await(index.repairGenerationZero(repair))).isEqualTo(new RepairOutcome.SliceCollected(1));

        await(collection.forgetSlice(1));
        assertThat(await(f.slices.slice(1))).isEmpty();
        assertThat(await(f.slices.ranges(1))).isEmpty();
        assertThat(await(f.slices.slices(WalSliceState.COLLECTING, 0, 10))).isEmpty();
        assertThat(await(streams.intents(a))).containsOnlyKeys(2L);
        assertThat(await(index.retiredRecords(a, 10))).as("generation-0 records of slice 1 forgotten").isEmpty();
        assertThat(await(index.indexRecords(a, ReadView.COMMITTED))).extracting(IndexRecord::range)
                .containsExactly(OffsetRange.of(0, 8), OffsetRange.of(8, 12));
        await(collection.forgetSlice(1)); // a slice that is gone: nothing to do
    }

    @Test
    void unmaterializedRange_holdsTheSlice() {
        publish(a, "obj-a", 0, 8);
        assertThat(retire(1, a)).isEmpty();
        Optional<SliceHold> hold = retire(1, b);
        assertThat(hold).isPresent();
        assertThat(hold.get().stream()).isEqualTo(b);
        assertThat(hold.get().range()).isEqualTo(OffsetRange.of(0, 4));
        assertThat(await(collection.markCollecting(1))).isInstanceOf(SliceCollection.Held.class);
        assertThat(await(f.slices.slice(1))).map(WalSlice::state).contains(WalSliceState.SEALED);
        assertThat(await(index.indexRecords(b, ReadView.COMMITTED))).hasSize(3);
    }

    @Test
    void theOpenRunsOfIdleStreams_holdTheirSlice_andNameItsLastEntry() {
        // slice 2 holds only a's and b's open runs ([8, 12), entry 0): no record under an end offset names it
        await(f.slices.seal(2));
        assertThat(await(f.slices.lastNamedEntry(2))).hasValue(0);
        assertThat(await(collection.markCollecting(2))).isInstanceOf(SliceCollection.Held.class);
        assertThat(retire(2, a)).isPresent();
        assertThat(await(f.slices.slice(2))).map(WalSlice::state).contains(WalSliceState.SEALED);

        // once an object covers them, the runs leave the open-run key for FALLBACK; then they retire and it is marked
        publish(a, "obj-a", 0, 12);
        publish(b, "obj-b", 0, 12);
        assertThat(retire(2, a)).isEmpty();
        assertThat(retire(2, b)).isEmpty();
        assertThat(await(index.retiredRecords(a, 10))).extracting(IndexRecord::range)
                .contains(OffsetRange.of(8, 12));
        assertThat(await(collection.markCollecting(2))).isInstanceOf(SliceCollection.Collecting.class);
    }

    @Test
    void openSlice_isNotMarked() {
        assertThat(await(collection.markCollecting(2))).isInstanceOf(SliceCollection.NotSealed.class);
        assertThat(await(collection.markCollecting(99))).isInstanceOf(SliceCollection.Gone.class);
        assertThatThrownBy(() -> await(collection.forgetSlice(1))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("SEALED, not COLLECTING");
    }

    @Test
    void quarantinedObject_holdsTheSliceAndKeepsItsFallback() {
        IndexRecord object = publish(a, "obj-a", 0, 8);
        publish(b, "obj-b", 0, 8);
        await(index.quarantine(IndexKey.of(object)));
        Optional<SliceHold> hold = retire(1, a);
        assertThat(hold).isPresent();
        assertThat(hold.get().why()).contains("no COMMITTED higher generation covers offsets [0, 4)");
        assertThat(await(index.fallbackRecords(a, ReadView.COMMITTED))).hasSize(2);
        assertThat(await(collection.markCollecting(1))).isInstanceOf(SliceCollection.Held.class);
    }

    @Test
    void trimmedAndDeletedStreams_holdNothing() {
        await(streams.trim(a, 8, ea));
        await(f.catalog.deleteStream("b"));
        assertThat(retire(1, a)).isEmpty();
        assertThat(retire(1, b)).isEmpty();
        assertThat(await(collection.markCollecting(1))).isInstanceOf(SliceCollection.Collecting.class);
        await(collection.forgetSlice(1));
        assertThat(await(index.retiredRecords(a, 10))).isEmpty();
        assertThat(await(f.slices.ranges(1))).isEmpty();
    }

    @Test
    void objectReference_tellsLiveRetiredAndNone() {
        IndexRecord first = publish(a, "obj-1", 0, 4);
        assertThat(await(collection.objectReference(a, ReadView.COMMITTED, 4, "obj-1")))
                .isEqualTo(ObjectReference.LIVE);
        assertThat(await(collection.objectReference(a, ReadView.COMMITTED, 4, "obj-other")))
                .isEqualTo(ObjectReference.NONE);
        await(index.retire(IndexKey.of(first)));
        assertThat(await(collection.objectReference(a, ReadView.COMMITTED, 4, "obj-1")))
                .isEqualTo(ObjectReference.RETIRED);
        assertThat(await(collection.retiredObjectRecords(a))).extracting(IndexRecord::target)
                .containsExactly(first.target());
        await(collection.forgetRetired(List.of(IndexKey.of(first))));
        assertThat(await(collection.objectReference(a, ReadView.COMMITTED, 4, "obj-1")))
                .isEqualTo(ObjectReference.NONE);
        assertThat(await(collection.retiredObjectRecords(a))).isEmpty();
        assertThat(await(collection.objectReference(StreamId.of(999), ReadView.COMMITTED, 4, "obj-1")))
                .isEqualTo(ObjectReference.NONE);
    }

    @Test
    void deletedStream_isPurgedToZeroKeys() {
        IndexRecord object = publish(a, "obj-a", 0, 8);
        await(f.cursors.saveCursor(a, "c", ea, CursorState.at(1)));
        assertThat(await(collection.purgeStream(a))).as("not deleted").isFalse();
        assertThat(await(collection.purges(10))).isEmpty();
        await(f.catalog.deleteStream("a"));
        assertThat(await(collection.purges(10))).containsExactly(a);
        assertThat(await(collection.objectRecords(a))).containsExactly(object);
        assertThat(await(collection.purgeStream(a))).isTrue();
        assertThat(await(streams.head(a))).isEmpty();
        assertThat(await(f.cursors.loadCursor(a, "c"))).isEmpty();
        assertThat(await(collection.purges(10))).isEmpty();
        int left = f.db.read(tr -> tr.getRange(f.ks.streamRange(a)).asList().join().size());
        assertThat(left).isZero();
        assertThat(await(collection.purgeStream(a))).as("idempotent").isTrue();
        // the name is free at once: a new incarnation with a new stream
        assertThat(f.newStream("a")).isNotEqualTo(a);
    }

    @Test
    void census_countsKeysByKind() {
        MetadataCensus before = await(collection.census());
        assertThat(before.byKind()).containsEntry("catalog", 2L).containsEntry("head", 2L)
                .containsEntry("index", 6L).containsEntry("walSlice", 2L).containsEntry("walStream", 4L)
                .containsEntry("intent", 4L);
        assertThat(before.keys()).isEqualTo(before.byKind().values().stream().mapToLong(Long::longValue).sum());
        assertThat(before.bytes()).isPositive();
        assertThat(before.toString()).startsWith("keys=" + before.keys() + " bytes=" + before.bytes() + " ")
                .contains(" index=6");
        await(streams.trim(a, 8, ea));
        MetadataCensus after = await(collection.census());
        assertThat(after.byKind()).containsEntry("index", 4L).containsEntry("retired", 2L);
        assertThat(Map.copyOf(after.byKind())).isNotEqualTo(before.byKind());
    }
}
