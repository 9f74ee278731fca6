package io.nereus.metadata;

/** The result of a write that is conditional on the stream's writer epoch (cursors, properties). */
public sealed interface WriteOutcome {
    /** The write is committed. */
    record Written() implements WriteOutcome {
    }

    /** The head carries another writer epoch; nothing was written. */
    record Fenced(long headEpoch, long requestEpoch) implements WriteOutcome {
    }

    /** The stream has no head; nothing was written. */
    record UnknownStream(StreamId stream) implements WriteOutcome {
    }

    WriteOutcome WRITTEN = new Written();
}
