package io.nereus.generation;

import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WalSectionRef;
import io.nereus.metadata.WalTarget;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The WAL sections one pass of the {@link Materializer} copies out of a slice, in entry order: for each, the
 * generation-0 record listing it and its place in the record's run. A 1 GiB slice written by a thousand streams lists
 * some 800,000 sections; held as an object per section (with its range, checksum and map entry) they were four
 * million objects that the collector marked again and again for as long as the copy ran. Here a section is a record
 * number and a section number in two arrays, and its {@link WalSectionRef} is built when the copy reaches it.
 *
 * <p>Sections of one entry keep the order the records were given in (streams in the given order, each stream's
 * records and sections in offset order). Immutable; built once per pass, read by the materializer's thread.
 */
final class SlicePlan {
    private final IndexRecord[] records;
    /** The entries holding a needed section, increasing. */
    private final long[] entries;
    /** Where entry {@code entries[e]}'s sections start in {@link #record} and {@link #section}; one more at the end. */
    private final int[] firstOf;
    /** Per section, in entry order: the index of its record in {@link #records}. */
    private final int[] record;
    /** Per section, in entry order: its index in its record's run ({@link IndexRecord#walSection}). */
    private final byte[] section;
    /** Per record: the number of its stream ({@link #streamAt}). */
    private final int[] streamOf;
    /** The streams by number. */
    private final StreamId[] streams;

    private SlicePlan(IndexRecord[] records, long[] entries, int[] firstOf, int[] record, byte[] section,
            int[] streamOf, StreamId[] streams) {
        this.records = records;
        this.entries = entries;
        this.firstOf = firstOf;
        this.record = record;
        this.section = section;
        this.streamOf = streamOf;
        this.streams = streams;
    }

    /**
     * The plan of every section of {@code records}, generation-0 records targeting one WAL slice, each stream's in
     * offset order.
     *
     * @throws ClassCastException when a record's target is not in the WAL
     */
    static SlicePlan of(List<IndexRecord> records) {
        IndexRecord[] recs = records.toArray(new IndexRecord[0]);
        int total = 0;
        for (IndexRecord r : recs) {
            total = Math.addExact(total, r.walSectionCount());
        }
        // each section's entry, in the given order, then the distinct entries
        long[] entryOf = new long[total];
        int k = 0;
        for (IndexRecord r : recs) {
            WalTarget wal = (WalTarget) r.target();
            for (int s = 0; s < wal.sectionCount(); s++) {
                entryOf[k++] = wal.sectionEntryId(s);
            }
        }
        long[] sorted = entryOf.clone();
        Arrays.sort(sorted);
        int distinct = 0;
        for (int i = 0; i < sorted.length; i++) {
            if (i == 0 || sorted[i] != sorted[i - 1]) {
                sorted[distinct++] = sorted[i];
            }
        }
        long[] entries = Arrays.copyOf(sorted, distinct);
        // a counting sort by entry: stable, so each entry's sections keep the given order
        int[] firstOf = new int[distinct + 1];
        int[] bucket = new int[total];
        for (int i = 0; i < total; i++) {
            bucket[i] = Arrays.binarySearch(entries, entryOf[i]);
            firstOf[bucket[i] + 1]++;
        }
        for (int e = 0; e < distinct; e++) {
            firstOf[e + 1] += firstOf[e];
        }
        int[] next = Arrays.copyOf(firstOf, distinct);
        int[] record = new int[total];
        byte[] section = new byte[total];
        k = 0;
        for (int r = 0; r < recs.length; r++) {
            for (int s = 0; s < recs[r].walSectionCount(); s++) {
                int at = next[bucket[k++]]++;
                record[at] = r;
                section[at] = (byte) s;
            }
        }
        // the streams numbered in the order first met, so that a copy keeps its per-stream state in arrays
        int[] streamOf = new int[recs.length];
        Map<StreamId, Integer> numbers = new HashMap<>();
        List<StreamId> streams = new ArrayList<>();
        for (int r = 0; r < recs.length; r++) {
            Integer n = numbers.get(recs[r].stream());
            if (n == null) {
                n = streams.size();
                numbers.put(recs[r].stream(), n);
                streams.add(recs[r].stream());
            }
            streamOf[r] = n;
        }
        return new SlicePlan(recs, entries, firstOf, record, section, streamOf,
                streams.toArray(new StreamId[0]));
    }

    boolean isEmpty() {
        return entries.length == 0;
    }

    /** The first entry holding a needed section; the plan must not be empty. */
    long firstEntry() {
        return entries[0];
    }

    /** Whether entry {@code entryId} holds a needed section. */
    boolean needs(long entryId) {
        return Arrays.binarySearch(entries, entryId) >= 0;
    }

    /** The first entry after {@code entryId} holding a needed section; -1 when there is none. */
    long entryAfter(long entryId) {
        int at = Arrays.binarySearch(entries, entryId);
        int next = at >= 0 ? at + 1 : -at - 1;
        return next < entries.length ? entries[next] : -1;
    }

    /** Where the sections of {@code entryId} start in plan order ({@link #recordAt}); {@link #to} when none. */
    int from(long entryId) {
        int at = Arrays.binarySearch(entries, entryId);
        return at >= 0 ? firstOf[at] : 0;
    }

    /** Where the sections of {@code entryId} end in plan order (exclusive); {@link #from} when none. */
    int to(long entryId) {
        int at = Arrays.binarySearch(entries, entryId);
        return at >= 0 ? firstOf[at + 1] : 0;
    }

    /** The record listing the {@code i}-th section in plan order. */
    IndexRecord recordAt(int i) {
        return records[record[i]];
    }

    /**
     * The number of the stream of the {@code i}-th section in plan order: streams are numbered from 0, in the order
     * their first records were given, below {@link #streamCount}.
     */
    int streamAt(int i) {
        return streamOf[record[i]];
    }

    /** How many streams the plan's records are of. */
    int streamCount() {
        return streams.length;
    }

    /** The stream numbered {@code n}. */
    StreamId stream(int n) {
        return streams[n];
    }

    /** The {@code i}-th section in plan order. */
    WalSectionRef sectionAt(int i) {
        return recordAt(i).walSection(section[i]);
    }

    /** Whether the {@code i}-th section in plan order is its record's first. */
    boolean firstOfRecord(int i) {
        return section[i] == 0;
    }

    /** Whether the {@code i}-th section in plan order is its record's last. */
    boolean lastOfRecord(int i) {
        return section[i] == recordAt(i).walSectionCount() - 1;
    }

    /** How many sections the plan lists. */
    int size() {
        return record.length;
    }
}
