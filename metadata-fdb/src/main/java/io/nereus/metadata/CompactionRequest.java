package io.nereus.metadata;

import java.util.Objects;
import java.util.Optional;

/**
 * A request to publish a new generation of a stream's {@link ReadView#TOPIC_COMPACTED} view: the sparse object a
 * compaction wrote, covering {@code [0, horizon)}, and the compacted record it was made from.
 *
 * <p>The horizon is the record's range end: offsets below it are answered by the compacted view, offsets from it on
 * by the committed ones. Publishing the record is publishing the horizon (one key, one transaction), so the two can
 * never disagree, also across restarts and ownership changes.
 *
 * @param stream     the stream
 * @param previous   the TOPIC_COMPACTED record the compaction read (with the metadata version it saw), empty when it
 *                   started from no compacted generation; the publication is refused if the view changed since
 * @param horizon    the first offset the new generation does not cover, {@code > 0}; it covers {@code [0, horizon)}
 * @param target     the object written and verified
 * @param checksum   checksum of the object (its index CRC-32C)
 * @param entryCount entries kept in the object, {@code 0..horizon}
 * @param bytes      payload bytes of those entries, {@code >= 0}
 */
public record CompactionRequest(
        StreamId stream,
        Optional<PublicationRequest.SourceRef> previous,
        long horizon,
        ObjectTarget target,
        Checksum checksum,
        long entryCount,
        long bytes) {

    public CompactionRequest {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(previous, "previous");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(checksum, "checksum");
        if (horizon <= 0) {
            throw new IllegalArgumentException("compaction horizon must be > 0: " + horizon);
        }
        if (entryCount < 0 || entryCount > horizon) {
            throw new IllegalArgumentException("compacted entry count " + entryCount + " must be in 0.." + horizon);
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("compacted bytes must be >= 0: " + bytes);
        }
        previous.ifPresent(p -> {
            if (!p.key().stream().equals(stream) || p.key().view() != ReadView.TOPIC_COMPACTED) {
                throw new IllegalArgumentException("previous compacted record " + p.key()
                        + " is not a TOPIC_COMPACTED record of " + stream);
            }
        });
    }

    /** The offsets the new generation covers: {@code [0, horizon)}. */
    public OffsetRange coverage() {
        return new OffsetRange(0, horizon);
    }
}
