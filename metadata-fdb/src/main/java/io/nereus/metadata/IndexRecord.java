package io.nereus.metadata;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One generation-index record: the statement that offsets {@code range} of {@code stream} in {@code view}
 * have a representation of generation {@code generation} at {@code target}.
 *
 * <p>Stored under {@code (STREAM, stream, INDEX, view, range.end, generation)} (see {@link NereusKeyspace});
 * the value holds the remaining fields (see {@link io.nereus.metadata.codec.IndexRecordCodec}). The one exception
 * is a stream's <b>open run</b>: its last generation-0 record, which the stream's next append into the same WAL
 * slice extends, is stored under the fixed key {@link IndexKey#openRun} (end offset {@link IndexKey#OPEN_RUN_END})
 * with its end in the value, so that the commit of every append rewrites one key instead of moving the record to a
 * new one; {@link #open} says so, and {@link IndexKey#of} gives the key either way. Records are immutable except
 * for their state; every state change increments {@code metadataVersion}, which conditional updates compare.
 * Equality compares what a record states, not where it is stored: {@link #open} takes no part in it.
 *
 * @param stream          the stream
 * @param view            the read view this representation belongs to
 * @param range           the offsets covered; never empty
 * @param generation      the representation number; generation 0 of {@link ReadView#COMMITTED} is the WAL
 * @param state           lifecycle state; only {@link IndexRecordState#COMMITTED} serves reads
 * @param target          exact physical location
 * @param checksum        checksum of the physical bytes at {@code target}; for a WAL target, of its last section
 *                        (each earlier section of a run carries its own)
 * @param entryCount      entries stored for the range: {@code 1..range.length()} in COMMITTED (dense),
 *                        {@code 0..range.length()} in TOPIC_COMPACTED (sparse)
 * @param bytes           payload bytes of those entries, {@code >= 0}
 * @param metadataVersion version of this record, {@code >= 0}, incremented by each state change
 * @param open            true for a stream's open run, stored at {@link IndexKey#openRun}: only a generation-0
 *                        record of the COMMITTED view in the lookup space
 */
public record IndexRecord(
        StreamId stream,
        ReadView view,
        OffsetRange range,
        GenerationId generation,
        IndexRecordState state,
        ReadTarget target,
        Checksum checksum,
        long entryCount,
        long bytes,
        long metadataVersion,
        boolean open) {

    /** A record stored under its own end offset (not an open run). */
    public IndexRecord(StreamId stream, ReadView view, OffsetRange range, GenerationId generation,
            IndexRecordState state, ReadTarget target, Checksum checksum, long entryCount, long bytes,
            long metadataVersion) {
        this(stream, view, range, generation, state, target, checksum, entryCount, bytes, metadataVersion, false);
    }

    public IndexRecord {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(view, "view");
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(generation, "generation");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(checksum, "checksum");
        if (range.isEmpty()) {
            throw new IllegalArgumentException("index record range must not be empty: " + range);
        }
        long minEntries = view == ReadView.COMMITTED ? 1 : 0;
        if (entryCount < minEntries || entryCount > range.length()) {
            throw new IllegalArgumentException("index record entry count " + entryCount + " must be in "
                    + minEntries + ".." + range.length() + " for range " + range + " in " + view);
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("index record bytes must be >= 0: " + bytes);
        }
        if (metadataVersion < 0) {
            throw new IllegalArgumentException("index record metadata version must be >= 0: " + metadataVersion);
        }
        if (open && !(view == ReadView.COMMITTED && generation.isAppend())) {
            throw new IllegalArgumentException("only a generation-0 record of the COMMITTED view is an open run: "
                    + generation + " of " + view);
        }
        if (view == ReadView.COMMITTED && generation.isAppend() && !(target instanceof WalTarget)) {
            throw new IllegalArgumentException("generation 0 of the COMMITTED view must target the WAL: " + target);
        }
        if (target instanceof WalTarget wal && !wal.earlier().isEmpty()) {
            long firstEnd = wal.earlierEnd(0);
            long lastEnd = wal.earlierEnd(wal.earlier().size() - 1);
            if (firstEnd <= range.start() || lastEnd >= range.end()) {
                throw new IllegalArgumentException("the sections of a WAL run must end inside " + range + ": "
                        + target);
            }
            if (entryCount < wal.sectionCount()) {
                throw new IllegalArgumentException("a WAL run of " + wal.sectionCount() + " sections holds at least as"
                        + " many entries, not " + entryCount);
            }
        }
    }

    /** The first offset after the range; part of the record's key unless it is an open run ({@link #open}). */
    public long endOffset() {
        return range.end();
    }

    /**
     * The WAL sections this record lists, in offset order: one for the record of one append, the run's sections
     * for a record that covers several appends of the stream into one slice ({@link WalTarget}).
     *
     * @throws IllegalStateException when the target is not in the WAL
     */
    public List<WalSectionRef> walSections() {
        int count = walSectionCount();
        List<WalSectionRef> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(walSection(i));
        }
        return out;
    }

    /**
     * How many WAL sections this record lists: 1 for the record of one append, the run's length for a run.
     *
     * @throws IllegalStateException when the target is not in the WAL
     */
    public int walSectionCount() {
        return wal().sectionCount();
    }

    /**
     * Section {@code i} of {@link #walSections()} (in offset order), built alone: a caller going through the sections
     * of many records one at a time holds none of them longer than it needs.
     *
     * @throws IllegalStateException when the target is not in the WAL
     * @throws IndexOutOfBoundsException when {@code i} is not in {@code [0, walSectionCount())}
     */
    public WalSectionRef walSection(int i) {
        WalTarget wal = wal();
        List<WalTarget.Section> earlier = wal.earlier();
        Objects.checkIndex(i, earlier.size() + 1);
        long start = i == 0 ? range.start() : wal.earlierEnd(i - 1);
        if (i < earlier.size()) {
            WalTarget.Section s = earlier.get(i);
            return new WalSectionRef(wal.sliceId(), s.entryId(), s.positionInBatch(),
                    new OffsetRange(start, s.endOffset()), s.checksum());
        }
        return new WalSectionRef(wal.sliceId(), wal.entryId(), wal.positionInBatch(),
                new OffsetRange(start, range.end()), checksum);
    }

    private WalTarget wal() {
        if (!(target instanceof WalTarget wal)) {
            throw new IllegalStateException("not a WAL target: " + target);
        }
        return wal;
    }

    /**
     * The WAL section this record lists that holds {@code offset}; its first when the record does not cover it. One
     * section of {@link #walSections()}, without building the others (a read of a run wants one).
     *
     * @throws IllegalStateException when the target is not in the WAL
     */
    public WalSectionRef walSectionAt(long offset) {
        WalTarget wal = wal();
        int earlier = wal.earlier().size();
        int i = 0;
        while (i < earlier && offset >= wal.earlierEnd(i) && offset < range.end()) {
            i++;
        }
        return walSection(i);
    }

    /**
     * True when {@code next}, the generation-0 record of the stream's next append, may extend this record into a
     * longer run ({@link #followedBy}): both COMMITTED generation-0 records of the COMMITTED view of one stream, in
     * one WAL slice, {@code next} of one section starting where this one ends in a later batch, and this run
     * shorter than {@code maxSections} (at most {@link WalTarget#MAX_SECTIONS}).
     */
    public boolean continuesWith(IndexRecord next, int maxSections) {
        return view == ReadView.COMMITTED && generation.isAppend() && state == IndexRecordState.COMMITTED
                && next.view == ReadView.COMMITTED && next.generation.isAppend()
                && next.state == IndexRecordState.COMMITTED && stream.equals(next.stream)
                && range.end() == next.range.start() && checksum.type() == next.checksum.type()
                && target instanceof WalTarget run && next.target instanceof WalTarget one
                && run.sliceId() == one.sliceId() && one.earlier().isEmpty() && one.entryId() > run.entryId()
                && run.sectionCount() < Math.min(maxSections, WalTarget.MAX_SECTIONS);
    }

    /**
     * This run extended by {@code next}: one record over both ranges whose target lists this record's sections and
     * then {@code next}'s, with their entries and bytes; a new record (metadata version 0), an open run when this one
     * is one (stored at the same key), else stored under the new end.
     *
     * @throws IllegalArgumentException when {@link #continuesWith} says no for a run of any allowed length
     */
    public IndexRecord followedBy(IndexRecord next) {
        if (!continuesWith(next, WalTarget.MAX_SECTIONS)) {
            throw new IllegalArgumentException("record " + next + " does not continue the run " + this);
        }
        WalTarget run = ((WalTarget) target).followedBy(range.end(), checksum, (WalTarget) next.target);
        return new IndexRecord(stream, view, new OffsetRange(range.start(), next.range.end()), generation,
                IndexRecordState.COMMITTED, run, next.checksum, Math.addExact(entryCount, next.entryCount),
                Math.addExact(bytes, next.bytes), 0, open);
    }

    /** True when this record may serve a read of {@code offset}. */
    public boolean serves(long offset) {
        return state.isReadable() && range.contains(offset);
    }

    /**
     * This record in state {@code next} with the metadata version incremented.
     *
     * @throws IllegalStateException when {@link IndexRecordState#canTransitionTo} forbids the change
     */
    public IndexRecord withState(IndexRecordState next) {
        IndexRecordState s = state.transitionTo(next);
        return new IndexRecord(stream, view, range, generation, s, target, checksum, entryCount, bytes,
                Math.addExact(metadataVersion, 1), open);
    }

    /** This record stored as its stream's open run ({@link #open}), or under its own end offset; else the same. */
    public IndexRecord storedOpen(boolean asOpenRun) {
        return asOpenRun == open ? this : new IndexRecord(stream, view, range, generation, state, target, checksum,
                entryCount, bytes, metadataVersion, asOpenRun);
    }

    /** Equal when every field but {@link #open} is: two records state the same thing wherever they are stored. */
    @Override
    public boolean equals(Object o) {
        return o instanceof IndexRecord r && stream.equals(r.stream) && view == r.view && range.equals(r.range)
                && generation.equals(r.generation) && state == r.state && target.equals(r.target)
                && checksum.equals(r.checksum) && entryCount == r.entryCount && bytes == r.bytes
                && metadataVersion == r.metadataVersion;
    }

    @Override
    public int hashCode() {
        return Objects.hash(stream, view, range, generation, state, target, checksum, entryCount, bytes,
                metadataVersion);
    }
}
