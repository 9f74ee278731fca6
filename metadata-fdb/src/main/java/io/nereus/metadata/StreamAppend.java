package io.nereus.metadata;

import java.util.Objects;

/**
 * One stream's part of a WAL batch commit: the offsets it appended, where they are in the WAL, and the
 * writer epoch the appending broker holds. The commit transaction turns it into the stream's new head
 * and its generation-0 index record (see {@link AppendOutcome#decide}).
 *
 * @param stream      the stream
 * @param writerEpoch the fencing token the writer acquired; must equal the head's epoch
 * @param range       the offsets appended; non-empty, must start at the head's {@code committedEnd}
 * @param target      the WAL batch entry and this stream's position in it
 * @param checksum    checksum of this stream's payload section in the batch
 * @param entryCount  entries appended, {@code 1..range.length()}
 * @param bytes       payload bytes appended, {@code >= 0}
 */
public record StreamAppend(
        StreamId stream,
        long writerEpoch,
        OffsetRange range,
        WalTarget target,
        Checksum checksum,
        long entryCount,
        long bytes) {

    public StreamAppend {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(range, "range");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(checksum, "checksum");
        if (writerEpoch <= 0) {
            throw new IllegalArgumentException("append writer epoch must be > 0: " + writerEpoch);
        }
        if (range.isEmpty()) {
            throw new IllegalArgumentException("append range must not be empty");
        }
        if (entryCount < 1 || entryCount > range.length()) {
            throw new IllegalArgumentException("append entry count " + entryCount + " must be in 1.."
                    + range.length() + " for " + range);
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("append bytes must be >= 0: " + bytes);
        }
    }

    /** The generation-0 COMMITTED-view record this append publishes. */
    public IndexRecord generationZeroRecord() {
        return new IndexRecord(stream, ReadView.COMMITTED, range, GenerationId.APPEND, IndexRecordState.COMMITTED,
                target, checksum, entryCount, bytes, 0);
    }

    /** The intent recorded when this is the stream's first append into the slice. */
    public WalIntent intent() {
        return new WalIntent(range.start(), writerEpoch);
    }
}
