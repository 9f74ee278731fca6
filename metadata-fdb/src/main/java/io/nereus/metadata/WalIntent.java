package io.nereus.metadata;

/**
 * The record that a stream wrote into a WAL slice, stored under {@code (STREAM, sid, INTENT, sliceId)} by
 * the stream's first commit into that slice. Generation-0 repair uses it to find the slice holding an
 * offset.
 *
 * @param firstOffset the first offset this stream wrote into the slice, {@code >= 0}
 * @param writerEpoch the writer epoch of that commit, {@code > 0}
 */
public record WalIntent(long firstOffset, long writerEpoch) {
    public WalIntent {
        if (firstOffset < 0) {
            throw new IllegalArgumentException("WAL intent first offset must be >= 0: " + firstOffset);
        }
        if (writerEpoch <= 0) {
            throw new IllegalArgumentException("WAL intent writer epoch must be > 0: " + writerEpoch);
        }
    }
}
