package io.nereus.metadata;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * A location inside the multi-stream WAL: the BookKeeper ledger that is the WAL slice, the entry holding the WAL
 * batch, and this stream's position in the batch's per-stream directory; for a generation-0 record that covers a
 * run of the stream's appends into one slice, also the sections of the run before that one ({@code earlier}).
 *
 * <p>{@code entryId} and {@code positionInBatch} always name the run's <em>last</em> section, the one ending at the
 * record's end offset and carrying the record's checksum; a record of one append has no earlier sections. Each
 * earlier section names its batch entry, its position there, the offset its range ends at (it starts where the one
 * before it ends, the first at the record's start) and the checksum of its payload, so that a read of any offset of
 * the run goes to one section without reading the others ({@link IndexRecord#walSections()}).
 *
 * @param sliceId         the BookKeeper ledger id of the WAL slice, {@code >= 0}
 * @param entryId         the BookKeeper entry id of the WAL batch holding the last section, {@code >= 0}
 * @param positionInBatch index of the last section in that batch's directory, {@code >= 0}
 * @param earlier         the run's sections before the last, in offset and entry order; entry ids strictly
 *                        increasing and below {@code entryId}, end offsets strictly increasing; held as numbers
 *                        (an immutable list that builds each {@link Section} when asked for it), since the records of
 *                        a slice being materialized or of the read path's cache list hundreds of thousands of them
 */
public record WalTarget(long sliceId, long entryId, int positionInBatch, List<Section> earlier)
        implements ReadTarget {

    /** The most sections one generation-0 record lists: the commit starts a new record after that many. */
    public static final int MAX_SECTIONS = 32;

    public WalTarget {
        if (sliceId < 0) {
            throw new IllegalArgumentException("WAL slice id must be >= 0: " + sliceId);
        }
        if (entryId < 0) {
            throw new IllegalArgumentException("WAL entry id must be >= 0: " + entryId);
        }
        if (positionInBatch < 0) {
            throw new IllegalArgumentException("position in WAL batch must be >= 0: " + positionInBatch);
        }
        earlier = Sections.copyOf(Objects.requireNonNull(earlier, "earlier"));
        if (earlier.size() >= MAX_SECTIONS) {
            throw new IllegalArgumentException("a WAL target lists at most " + MAX_SECTIONS + " sections, not "
                    + (earlier.size() + 1));
        }
        Sections held = (Sections) earlier;
        for (int i = 0; i < held.size(); i++) {
            long sectionEntry = held.entryId(i);
            long nextEntry = i + 1 < held.size() ? held.entryId(i + 1) : entryId;
            if (sectionEntry >= nextEntry) {
                throw new IllegalArgumentException("WAL target sections must be in increasing entry order: entry "
                        + sectionEntry + " before entry " + nextEntry);
            }
            if (i + 1 < held.size() && held.end(i) >= held.end(i + 1)) {
                throw new IllegalArgumentException("WAL target sections must be in increasing offset order: end "
                        + held.end(i) + " before end " + held.end(i + 1));
            }
        }
    }

    /** The target of one append's section. */
    public WalTarget(long sliceId, long entryId, int positionInBatch) {
        this(sliceId, entryId, positionInBatch, List.of());
    }

    /** How many sections the target lists, the last one included. */
    public int sectionCount() {
        return earlier.size() + 1;
    }

    /**
     * This run followed by one more section, {@code next}, of the same slice: the current last section (ending at
     * {@code currentEnd} with checksum {@code currentChecksum}) becomes an earlier one.
     *
     * @throws IllegalArgumentException when {@code next} is of another slice, or the run would list more than
     *         {@link #MAX_SECTIONS}
     */
    public WalTarget followedBy(long currentEnd, Checksum currentChecksum, WalTarget next) {
        if (next.sliceId != sliceId || !next.earlier.isEmpty()) {
            throw new IllegalArgumentException("a run continues with one section of its own slice " + sliceId
                    + ": " + next);
        }
        List<Section> more = new ArrayList<>(earlier.size() + 1);
        more.addAll(earlier);
        more.add(new Section(entryId, positionInBatch, currentEnd, currentChecksum));
        return new WalTarget(sliceId, next.entryId, next.positionInBatch, more);
    }

    /**
     * The entry id of section {@code i} of the run, in offset order: an earlier section's for {@code i} below
     * {@code earlier().size()}, this target's own {@link #entryId} for the last; without building a section.
     *
     * @throws IndexOutOfBoundsException when {@code i} is not in {@code [0, sectionCount())}
     */
    public long sectionEntryId(int i) {
        Objects.checkIndex(i, sectionCount());
        return i < earlier.size() ? ((Sections) earlier).entryId(i) : entryId;
    }

    /** The end offset of earlier section {@code i}, without building the section. */
    public long earlierEnd(int i) {
        return ((Sections) earlier).end(i);
    }

    /** The position in its batch of earlier section {@code i}, without building the section. */
    public int earlierPosition(int i) {
        return ((Sections) earlier).position(i);
    }

    /** The checksum type of earlier section {@code i}, without building the section. */
    public ChecksumType earlierChecksumType(int i) {
        return ((Sections) earlier).type(i);
    }

    /** The checksum value of earlier section {@code i}, without building the section. */
    public long earlierChecksumValue(int i) {
        return ((Sections) earlier).value(i);
    }

    /**
     * A run's earlier sections added one at a time straight into the arrays a target holds them in, checked as
     * {@link Section} checks them, with no {@link Section} or {@link Checksum} built: for the decoder of stored runs,
     * which reads the generation-0 records of whole slices (a materializer's pass, a collection) and whose section
     * objects were otherwise garbage as soon as the target copied them.
     */
    public static final class EarlierSections {
        private final Sections sections;
        private int added;

        /** Room for exactly {@code count} sections ({@code 0 <= count < MAX_SECTIONS}), all to be added. */
        public EarlierSections(int count) {
            if (count < 0 || count >= MAX_SECTIONS) {
                throw new IllegalArgumentException("a WAL target lists at most " + MAX_SECTIONS + " sections, not "
                        + (count + 1));
            }
            sections = count == 0 ? Sections.EMPTY : new Sections(count);
        }

        /** Adds the next section, as {@code new Section(entryId, positionInBatch, endOffset, new Checksum(...))}. */
        public EarlierSections add(long entryId, int positionInBatch, long endOffset, ChecksumType type,
                long checksumValue) {
            Checksum.check(type, checksumValue);
            Section.check(entryId, positionInBatch, endOffset);
            sections.put(Objects.checkIndex(added, sections.size()), entryId, positionInBatch, endOffset, type,
                    checksumValue);
            added++;
            return this;
        }

        /** The sections added, for {@link WalTarget#WalTarget}'s {@code earlier}; all of them must have been. */
        public List<Section> toList() {
            if (added != sections.size()) {
                throw new IllegalStateException(added + " of " + sections.size() + " earlier sections added");
            }
            return sections;
        }
    }

    /**
     * Earlier sections as five arrays: an immutable list (nulls refused, as {@link List#copyOf}) that builds each
     * {@link Section} when asked for it, and equals any list of the same sections. Every target's {@code earlier} is
     * one.
     */
    private static final class Sections extends AbstractList<Section> implements RandomAccess {
        private final long[] entryIds;
        private final int[] positions;
        private final long[] ends;
        private final ChecksumType[] types;
        private final long[] values;

        private static final Sections EMPTY = new Sections(0);

        private Sections(int n) {
            entryIds = new long[n];
            positions = new int[n];
            ends = new long[n];
            types = new ChecksumType[n];
            values = new long[n];
        }

        static List<Section> copyOf(List<Section> sections) {
            if (sections instanceof Sections s) {
                return s;
            }
            if (sections.isEmpty()) {
                return EMPTY;
            }
            Sections out = new Sections(sections.size());
            int i = 0;
            for (Section s : sections) {
                Objects.requireNonNull(s, "section");
                out.put(i++, s.entryId(), s.positionInBatch(), s.endOffset(), s.checksum().type(),
                        s.checksum().value());
            }
            return out;
        }

        /** Writes section {@code i}; only while the list is being built, before any target holds it. */
        private void put(int i, long entryId, int position, long end, ChecksumType type, long value) {
            entryIds[i] = entryId;
            positions[i] = position;
            ends[i] = end;
            types[i] = type;
            values[i] = value;
        }

        long entryId(int i) {
            return entryIds[i];
        }

        long end(int i) {
            return ends[i];
        }

        int position(int i) {
            return positions[i];
        }

        ChecksumType type(int i) {
            return types[i];
        }

        long value(int i) {
            return values[i];
        }

        @Override
        public Section get(int i) {
            Objects.checkIndex(i, entryIds.length);
            return new Section(entryIds[i], positions[i], ends[i], new Checksum(types[i], values[i]));
        }

        @Override
        public int size() {
            return entryIds.length;
        }
    }

    /**
     * An earlier section of a run.
     *
     * @param entryId         the BookKeeper entry id of the WAL batch holding it, {@code >= 0}
     * @param positionInBatch its index in that batch's directory, {@code >= 0}
     * @param endOffset       the first offset after its range, {@code > 0}
     * @param checksum        the checksum of its payload
     */
    public record Section(long entryId, int positionInBatch, long endOffset, Checksum checksum) {
        public Section {
            Objects.requireNonNull(checksum, "checksum");
            check(entryId, positionInBatch, endOffset);
        }

        /** Refuses what a section may not hold. */
        static void check(long entryId, int positionInBatch, long endOffset) {
            if (entryId < 0) {
                throw new IllegalArgumentException("WAL entry id must be >= 0: " + entryId);
            }
            if (positionInBatch < 0) {
                throw new IllegalArgumentException("position in WAL batch must be >= 0: " + positionInBatch);
            }
            if (endOffset <= 0) {
                throw new IllegalArgumentException("WAL section end offset must be > 0: " + endOffset);
            }
        }
    }
}
