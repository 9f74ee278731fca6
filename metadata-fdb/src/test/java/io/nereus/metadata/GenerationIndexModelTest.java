package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.fdb.embedded.CommitFault;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Seeded random walk over appends, publications (both views), quarantines, trims and unknown-result retries,
 * checked after every step against a simple model: generation ids strictly increase and are never reused
 * per (stream, view); every committed, untrimmed offset resolves in COMMITTED (unless its only record was
 * quarantined and awaits repair, when it is reported unindexed, never served); views never mix; nothing
 * resolves at or beyond the head, nor below the trim point in COMMITTED (TOPIC_COMPACTED outlives trims). A
 * failing seed is reproducible by its value.
 */
@Timeout(120)
class GenerationIndexModelTest {
    private static final int STEPS = 150;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1L, 42L, 20261130L})
    void randomWalk_keepsTheSeedsInvariants(long seed) {
        Random rnd = new Random(seed);
        try (StoreFixture f = new StoreFixture()) {
            MetadataStore store = f.store;
            f.openSlices(java.util.stream.LongStream.rangeClosed(1, 1 + 2 * STEPS / 20).toArray());
            StreamId s = f.newStream("model");
            long epoch = f.acquire(s);
            long committedEnd = 0;
            long trim = 0;
            long nextEntry = 0;
            Map<ReadView, List<Long>> allocated = new EnumMap<>(ReadView.class);
            for (ReadView v : ReadView.values()) {
                allocated.put(v, new ArrayList<>());
            }
            Set<Long> awaitingRepair = new HashSet<>();
            for (int step = 0; step < STEPS; step++) {
                String where = "seed " + seed + " step " + step;
                int action = rnd.nextInt(100);
                if (action < 45) {
                    long len = 1 + rnd.nextInt(4);
                    if (rnd.nextInt(10) == 0) {
                        injectUnknownResult(f);
                    }
                    StreamAppend a = StoreFixture.append(s, epoch, committedEnd, committedEnd + len, 1 + nextEntry / 20,
                            nextEntry, 0);
                    nextEntry++;
                    assertThat(await(store.streams().commit(List.of(a)))).as(where).isInstanceOf(CommitResult.Committed.class);
                    committedEnd += len;
                    if (rnd.nextInt(8) == 0) {
                        StreamAppend stale = StoreFixture.append(s, epoch, committedEnd - 1, committedEnd + 1, 1, nextEntry++, 0);
                        assertThat(await(store.streams().commit(List.of(stale)))).as(where).isInstanceOf(CommitResult.Rejected.class);
                    }
                } else if (action < 70) {
                    ReadView view = rnd.nextInt(3) == 0 ? ReadView.TOPIC_COMPACTED : ReadView.COMMITTED;
                    List<IndexRecord> readable = await(store.index().indexRecords(s, ReadView.COMMITTED)).stream()
                            .filter(r -> r.state() == IndexRecordState.COMMITTED).toList();
                    if (readable.isEmpty()) {
                        continue;
                    }
                    int from = rnd.nextInt(readable.size());
                    int to = from;
                    while (to + 1 < readable.size() && to - from < 3
                            && readable.get(to + 1).range().start() == readable.get(to).range().end()) {
                        to++;
                    }
                    List<IndexRecord> sources = readable.subList(from, to + 1);
                    OffsetRange range = OffsetRange.of(sources.get(0).range().start(), sources.get(sources.size() - 1).range().end());
                    if (view == ReadView.TOPIC_COMPACTED && existsCompactedOverlapping(store, s, range)) {
                        continue;
                    }
                    if (rnd.nextInt(10) == 0 && range.start() >= trim) {
                        injectUnknownResult(f);
                    }
                    PublicationRequest req = new PublicationRequest(s, view, range,
                            sources.stream().map(PublicationRequest.SourceRef::of).toList(),
                            new ObjectTarget("obj-" + step, 0, 64, 64, "v" + step), Checksum.crc32c(step),
                            sources.stream().mapToLong(IndexRecord::entryCount).sum(), 64);
                    PublicationOutcome o = await(store.index().publish(req));
                    if (range.start() < trim) {
                        assertThat(o).as(where + ": a range straddling the trim point is not published")
                                .isEqualTo(new PublicationOutcome.Trimmed(trim));
                        continue;
                    }
                    IndexRecord published = o instanceof PublicationOutcome.Publish p ? p.record()
                            : ((PublicationOutcome.AlreadyPublished) o).record();
                    List<Long> gens = allocated.get(view);
                    long g = published.generation().value();
                    assertThat(g).as(where + ": generation ids increase, never reused").isGreaterThan(
                            gens.isEmpty() ? 0 : gens.get(gens.size() - 1));
                    gens.add(g);
                } else if (action < 78) {
                    List<IndexRecord> readable = await(store.index().indexRecords(s, ReadView.COMMITTED)).stream()
                            .filter(r -> r.state() == IndexRecordState.COMMITTED).toList();
                    if (!readable.isEmpty()) {
                        IndexRecord victim = readable.get(rnd.nextInt(readable.size()));
                        await(store.index().quarantine(IndexKey.of(victim)));
                        for (long o = victim.range().start(); o < victim.range().end(); o++) {
                            awaitingRepair.add(o);
                        }
                    }
                } else if (action < 88) {
                    if (committedEnd > trim) {
                        trim += rnd.nextInt((int) Math.min(8, committedEnd - trim) + 1);
                        assertThat(await(store.streams().trim(s, trim, epoch)).trimOffset()).as(where).isEqualTo(trim);
                    }
                } else {
                    IndexRecord beyond = new IndexRecord(s, ReadView.COMMITTED, OffsetRange.of(committedEnd, committedEnd + 5),
                            GenerationId.APPEND, IndexRecordState.COMMITTED, new WalTarget(1, 0, 0), Checksum.crc32c(0), 1, 1, 0);
                    PublicationRequest ahead = new PublicationRequest(s, ReadView.COMMITTED, beyond.range(),
                            List.of(PublicationRequest.SourceRef.of(beyond)), new ObjectTarget("ahead", 0, 1, 1, "v"),
                            Checksum.crc32c(1), 1, 1);
                    assertThat(await(store.index().publish(ahead))).as(where + ": nothing published beyond the head")
                            .isEqualTo(new PublicationOutcome.NotCommitted(committedEnd));
                }
                checkInvariants(store, s, rnd, committedEnd, trim, awaitingRepair, where);
            }
        }
    }

    /** Makes the next commit apply and report 1021 on EmbeddedFdb; on a real cluster, a no-op. */
    private static void injectUnknownResult(StoreFixture f) {
        if (f.db instanceof EmbeddedFdb e) {
            e.injectCommitFaults(CommitFault.UNKNOWN_RESULT_APPLIED, 1);
        }
    }

    private static boolean existsCompactedOverlapping(MetadataStore store, StreamId s, OffsetRange range) {
        return await(store.index().indexRecords(s, ReadView.TOPIC_COMPACTED)).stream().anyMatch(r -> r.range().overlaps(range));
    }

    private static void checkInvariants(MetadataStore store, StreamId s, Random rnd, long committedEnd, long trim,
            Set<Long> awaitingRepair, String where) {
        List<Long> offsets = new ArrayList<>(List.of(0L, trim, Math.max(0, trim - 1), committedEnd,
                Math.max(0, committedEnd - 1), committedEnd + 3));
        for (int i = 0; i < 12; i++) {
            offsets.add((long) rnd.nextInt((int) committedEnd + 3));
        }
        for (long o : offsets) {
            IndexLookup committed = await(store.index().lookup(s, ReadView.COMMITTED, o));
            IndexLookup compacted = await(store.index().lookup(s, ReadView.TOPIC_COMPACTED, o));
            String at = where + " offset " + o;
            if (o < trim) {
                assertThat(committed).as(at).isEqualTo(new IndexLookup.Trimmed(trim));
                // the compacted view outlives the trim: below it, a compacted record serves or none covers
                if (compacted instanceof IndexLookup.Resolved r) {
                    assertThat(r.candidates()).as(at).allSatisfy(c -> {
                        assertThat(c.view()).isEqualTo(ReadView.TOPIC_COMPACTED);
                        assertThat(c.serves(o)).isTrue();
                    });
                } else {
                    assertThat(compacted).as(at).isEqualTo(new IndexLookup.Unindexed(o));
                }
            } else if (o >= committedEnd) {
                assertThat(committed).as(at).isEqualTo(new IndexLookup.NotYetCommitted(committedEnd));
                assertThat(compacted).as(at).isEqualTo(new IndexLookup.NotYetCommitted(committedEnd));
            } else {
                if (committed instanceof IndexLookup.Resolved r) {
                    assertThat(r.candidates()).as(at).allSatisfy(c -> {
                        assertThat(c.view()).isEqualTo(ReadView.COMMITTED);
                        assertThat(c.serves(o)).isTrue();
                    });
                } else {
                    assertThat(committed).as(at + ": committed offsets resolve unless awaiting repair")
                            .isEqualTo(new IndexLookup.Unindexed(o));
                    assertThat(awaitingRepair).as(at).contains(o);
                }
                if (compacted instanceof IndexLookup.Resolved r) {
                    assertThat(r.candidates()).as(at).allSatisfy(c -> assertThat(c.view()).isEqualTo(ReadView.TOPIC_COMPACTED));
                }
            }
        }
    }
}
