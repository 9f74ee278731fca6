package io.nereus.generation;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.Checksum;
import io.nereus.metadata.GenerationId;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.IndexRecordState;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSectionRef;
import io.nereus.metadata.WalTarget;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The materializer's plan of a slice lists every section of the records it is given, grouped by entry in entry order,
 * each entry's sections in the order given; compared with a map of lists built the obvious way.
 */
class SlicePlanTest {
    private static final long SLICE = 9;

    /** A section as the plan or the model lists it: the record (by identity), the section and its place in the run. */
    private record Listed(IndexRecord record, WalSectionRef section, boolean first, boolean last) {
    }

    /** A generation-0 run of {@code stream} from {@code start} over {@code entries} (one offset per section). */
    private static IndexRecord run(StreamId stream, long start, List<Long> entries) {
        List<WalTarget.Section> earlier = new ArrayList<>();
        for (int i = 0; i < entries.size() - 1; i++) {
            earlier.add(new WalTarget.Section(entries.get(i), i % 3, start + i + 1, Checksum.crc32c(i)));
        }
        long last = entries.get(entries.size() - 1);
        return new IndexRecord(stream, ReadView.COMMITTED, OffsetRange.of(start, start + entries.size()),
                GenerationId.APPEND, IndexRecordState.COMMITTED, new WalTarget(SLICE, last, 1, earlier),
                Checksum.crc32c(77), entries.size(), 100L * entries.size(), 0);
    }

    @Test
    void listsEverySectionByEntry_inTheOrderGiven() {
        Random random = new Random(42);
        for (int round = 0; round < 50; round++) {
            List<IndexRecord> records = new ArrayList<>();
            int streams = 1 + random.nextInt(6);
            for (int s = 0; s < streams; s++) {
                StreamId stream = StreamId.of(s + 1);
                long entry = random.nextInt(5);
                long offset = 0;
                int runs = random.nextInt(8);
                for (int r = 0; r < runs; r++) {
                    int sections = 1 + random.nextInt(random.nextBoolean() ? 3 : WalTarget.MAX_SECTIONS);
                    List<Long> entries = new ArrayList<>();
                    for (int i = 0; i < sections; i++) {
                        entries.add(entry);
                        entry += 1 + random.nextInt(4);
                    }
                    // the next run may start in the entry where this one ended: two appends of one stream in a batch
                    if (random.nextInt(4) == 0) {
                        entry = entries.get(entries.size() - 1);
                    }
                    records.add(run(stream, offset, entries));
                    offset += sections;
                }
            }
            check(records);
        }
    }

    @Test
    void anEmptyPlanNeedsNothing() {
        SlicePlan plan = SlicePlan.of(List.of());
        assertThat(plan.isEmpty()).isTrue();
        assertThat(plan.size()).isZero();
        assertThat(plan.needs(0)).isFalse();
        assertThat(plan.entryAfter(-1)).isEqualTo(-1);
        assertThat(plan.from(3)).isEqualTo(plan.to(3));
        assertThat(plan.streamCount()).isZero();
    }

    private static void check(List<IndexRecord> records) {
        TreeMap<Long, List<Listed>> model = new TreeMap<>();
        int total = 0;
        for (IndexRecord r : records) {
            List<WalSectionRef> sections = r.walSections();
            for (int i = 0; i < sections.size(); i++) {
                model.computeIfAbsent(sections.get(i).entryId(), k -> new ArrayList<>())
                        .add(new Listed(r, sections.get(i), i == 0, i == sections.size() - 1));
                total++;
            }
        }
        SlicePlan plan = SlicePlan.of(records);
        assertThat(plan.size()).isEqualTo(total);
        // streams numbered in the order their first records come
        List<StreamId> firstMet = records.stream().map(IndexRecord::stream).distinct().toList();
        assertThat(plan.streamCount()).isEqualTo(firstMet.size());
        for (int n = 0; n < firstMet.size(); n++) {
            assertThat(plan.stream(n)).isEqualTo(firstMet.get(n));
        }
        assertThat(plan.isEmpty()).isEqualTo(model.isEmpty());
        if (!model.isEmpty()) {
            assertThat(plan.firstEntry()).isEqualTo(model.firstKey());
        }
        long highest = model.isEmpty() ? 0 : model.lastKey();
        for (long e = -1; e <= highest + 2; e++) {
            List<Listed> expected = model.getOrDefault(e, List.of());
            assertThat(plan.needs(e)).as("entry %s needed", e).isEqualTo(!expected.isEmpty());
            Map.Entry<Long, List<Listed>> after = model.higherEntry(e);
            assertThat(plan.entryAfter(e)).as("entry after %s", e).isEqualTo(after == null ? -1 : after.getKey());
            List<Listed> listed = new ArrayList<>();
            for (int i = plan.from(e); i < plan.to(e); i++) {
                listed.add(new Listed(plan.recordAt(i), plan.sectionAt(i), plan.firstOfRecord(i),
                        plan.lastOfRecord(i)));
                assertThat(plan.stream(plan.streamAt(i))).isEqualTo(plan.recordAt(i).stream());
            }
            assertThat(listed).as("sections of entry %s", e).hasSize(expected.size());
            for (int i = 0; i < expected.size(); i++) {
                assertThat(listed.get(i).record()).as("entry %s, section %s: record", e, i)
                        .isSameAs(expected.get(i).record());
                assertThat(listed.get(i)).as("entry %s, section %s", e, i).isEqualTo(expected.get(i));
            }
        }
    }
}
