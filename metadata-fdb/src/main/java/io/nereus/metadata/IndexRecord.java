package io.nereus.metadata;

import java.util.Objects;

/**
 * One generation-index record: the statement that offsets {@code range} of {@code stream} in {@code view}
 * have a representation of generation {@code generation} at {@code target}.
 *
 * <p>Stored under {@code (STREAM, stream, INDEX, view, range.end, generation)} (see {@link NereusKeyspace});
 * the value holds the remaining fields (see {@link io.nereus.metadata.codec.IndexRecordCodec}). Records are
 * immutable except for their state; every state change increments {@code metadataVersion}, which conditional
 * updates compare.
 *
 * @param stream          the stream
 * @param view            the read view this representation belongs to
 * @param range           the offsets covered; never empty
 * @param generation      the representation number; generation 0 of {@link ReadView#COMMITTED} is the WAL
 * @param state           lifecycle state; only {@link IndexRecordState#COMMITTED} serves reads
 * @param target          exact physical location
 * @param checksum        checksum of the physical bytes at {@code target}
 * @param entryCount      entries stored for the range: {@code 1..range.length()} in COMMITTED (dense),
 *                        {@code 0..range.length()} in TOPIC_COMPACTED (sparse)
 * @param bytes           payload bytes of those entries, {@code >= 0}
 * @param metadataVersion version of this record, {@code >= 0}, incremented by each state change
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
        long metadataVersion) {

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
        if (view == ReadView.COMMITTED && generation.isAppend() && !(target instanceof WalTarget)) {
            throw new IllegalArgumentException("generation 0 of the COMMITTED view must target the WAL: " + target);
        }
    }

    /** The first offset after the range; part of the record's key. */
    public long endOffset() {
        return range.end();
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
                Math.addExact(metadataVersion, 1));
    }
}
