package io.nereus.metadata;

import java.util.Objects;

/**
 * Why a WAL slice cannot be collected yet: a record of {@code stream} targeting the slice still serves reads, or
 * could not be shown not to ({@link CollectionStore#retireSliceRecords}, {@link CollectionStore#markCollecting}).
 * An expected outcome, not an error: the slice stays SEALED and a later pass tries again.
 *
 * @param sliceId the slice
 * @param stream  the stream whose record holds it
 * @param range   the offsets of that record
 * @param why     what the check found, for logs
 */
public record SliceHold(long sliceId, StreamId stream, OffsetRange range, String why) {
    public SliceHold {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(why, "why");
    }
}
