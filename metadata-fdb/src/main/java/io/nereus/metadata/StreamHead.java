package io.nereus.metadata;

import java.util.Objects;
import java.util.Optional;

/**
 * The committed head of a stream, the only authority for what is logically visible. Stored under
 * {@code (STREAM, sid, HEAD)} and read (with a conflict) by every commit, fence, trim and seal.
 *
 * @param state           lifecycle state
 * @param committedEnd    first offset after committed data
 * @param trimOffset      first offset still readable; {@code 0 <= trimOffset <= committedEnd}
 * @param commitVersion   number of commit transactions applied to this head, {@code >= 0}
 * @param writerEpoch     fencing token of the current writer; 0 before any writer was acquired
 * @param writerId        the current writer (a broker id); present exactly when {@code writerEpoch > 0}
 * @param cumulativeBytes payload bytes ever committed, {@code >= 0}; not reduced by trimming
 */
public record StreamHead(
        StreamState state,
        long committedEnd,
        long trimOffset,
        long commitVersion,
        long writerEpoch,
        Optional<String> writerId,
        long cumulativeBytes) {

    /** Longest writer id, in UTF-16 chars, that a head accepts. */
    public static final int MAX_WRITER_ID_LENGTH = 1024;

    public StreamHead {
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(writerId, "writerId");
        if (trimOffset < 0 || trimOffset > committedEnd) {
            throw new IllegalArgumentException("stream head needs 0 <= trimOffset <= committedEnd: trimOffset="
                    + trimOffset + " committedEnd=" + committedEnd);
        }
        if (commitVersion < 0) {
            throw new IllegalArgumentException("stream head commit version must be >= 0: " + commitVersion);
        }
        if (writerEpoch < 0) {
            throw new IllegalArgumentException("stream head writer epoch must be >= 0: " + writerEpoch);
        }
        if (writerId.isPresent() != (writerEpoch > 0)) {
            throw new IllegalArgumentException("stream head writer id must be present exactly when writer epoch > 0:"
                    + " epoch=" + writerEpoch + " writerId=" + writerId);
        }
        writerId.ifPresent(id -> {
            if (id.isEmpty() || id.length() > MAX_WRITER_ID_LENGTH) {
                throw new IllegalArgumentException("writer id must have 1.." + MAX_WRITER_ID_LENGTH + " chars");
            }
        });
        if (cumulativeBytes < 0) {
            throw new IllegalArgumentException("stream head cumulative bytes must be >= 0: " + cumulativeBytes);
        }
    }

    /** The head of a new stream: OPEN, empty, no writer. */
    public static StreamHead initial() {
        return new StreamHead(StreamState.OPEN, 0, 0, 0, 0, Optional.empty(), 0);
    }

    /** Offsets that are committed and not trimmed: {@code [trimOffset, committedEnd)}. */
    public OffsetRange readableRange() {
        return new OffsetRange(trimOffset, committedEnd);
    }

    /** This head with a new writer holding epoch {@code writerEpoch + 1}. */
    public StreamHead withNewWriter(String id) {
        return new StreamHead(state, committedEnd, trimOffset, commitVersion, Math.addExact(writerEpoch, 1),
                Optional.of(id), cumulativeBytes);
    }

    /**
     * This head after committing {@code range} of {@code bytes} payload bytes.
     *
     * @throws IllegalStateException when the stream does not accept commits or {@code range} does not start
     *                               at {@code committedEnd}
     */
    public StreamHead withCommitted(OffsetRange range, long bytes) {
        if (!state.acceptsCommits()) {
            throw new IllegalStateException("stream in state " + state + " accepts no commits");
        }
        if (range.start() != committedEnd) {
            throw new IllegalStateException("commit of " + range + " does not start at committedEnd " + committedEnd);
        }
        if (bytes < 0) {
            throw new IllegalArgumentException("committed bytes must be >= 0: " + bytes);
        }
        return new StreamHead(state, range.end(), trimOffset, Math.addExact(commitVersion, 1), writerEpoch,
                writerId, Math.addExact(cumulativeBytes, bytes));
    }

    /** This head with {@code trimOffset} raised to {@code newTrim}; a lower value leaves it unchanged. */
    public StreamHead withTrimOffset(long newTrim) {
        if (newTrim > committedEnd) {
            throw new IllegalArgumentException("trim offset " + newTrim + " is beyond committedEnd " + committedEnd);
        }
        return new StreamHead(state, committedEnd, Math.max(trimOffset, newTrim), commitVersion, writerEpoch,
                writerId, cumulativeBytes);
    }

    /** This head in state {@code next}, checked by {@link StreamState#transitionTo}. */
    public StreamHead withState(StreamState next) {
        return new StreamHead(state.transitionTo(next), committedEnd, trimOffset, commitVersion, writerEpoch,
                writerId, cumulativeBytes);
    }
}
