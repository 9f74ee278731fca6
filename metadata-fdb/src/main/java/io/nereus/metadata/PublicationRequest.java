package io.nereus.metadata;

import java.util.List;
import java.util.Objects;

/**
 * A request to publish a materialized representation of {@code range}: the source records the materializer
 * read (with the metadata versions it saw) and the exact identity of what it wrote.
 *
 * @param stream     the stream
 * @param view       the view the new record belongs to
 * @param range      the offsets materialized; non-empty
 * @param sources    the COMMITTED-view records read, in offset order; they must exactly cover {@code range}
 * @param target     the object written and verified
 * @param checksum   checksum of the object's bytes for the range
 * @param entryCount entries in the object for the range
 * @param bytes      payload bytes in the object for the range
 */
public record PublicationRequest(
        StreamId stream,
        ReadView view,
        OffsetRange range,
        List<SourceRef> sources,
        ObjectTarget target,
        Checksum checksum,
        long entryCount,
        long bytes) {

    /**
     * Most source records one publication may name: its transaction reads each and moves it (about 300 bytes of
     * keys and values each), which keeps it far inside FoundationDB's 10 MB transaction limit.
     */
    public static final int MAX_SOURCES = 4096;

    public PublicationRequest {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(view, "view");
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(checksum, "checksum");
        sources = List.copyOf(sources);
        if (range.isEmpty()) {
            throw new IllegalArgumentException("publication range must not be empty");
        }
        if (sources.isEmpty()) {
            throw new IllegalArgumentException("publication needs at least one source record");
        }
        if (sources.size() > MAX_SOURCES) {
            throw new IllegalArgumentException("publication has " + sources.size() + " source records, more than "
                    + MAX_SOURCES + " (the transaction reads and moves each)");
        }
        for (SourceRef s : sources) {
            if (!s.key().stream().equals(stream) || s.key().view() != ReadView.COMMITTED) {
                throw new IllegalArgumentException("publication source " + s.key()
                        + " is not a COMMITTED-view record of " + stream);
            }
        }
    }

    /**
     * A source record as the materializer saw it, named by its key under its own end offset ({@link IndexKey#atEnd}):
     * a stream's open run, which the stream's next append into a later slice closes under that end, stays the same
     * source whichever of the two keys holds it when the publication commits.
     */
    public record SourceRef(IndexKey key, long metadataVersion) {
        public SourceRef {
            Objects.requireNonNull(key, "key");
            if (metadataVersion < 0) {
                throw new IllegalArgumentException("metadata version must be >= 0: " + metadataVersion);
            }
        }

        public static SourceRef of(IndexRecord r) {
            return new SourceRef(IndexKey.atEnd(r), r.metadataVersion());
        }
    }
}
