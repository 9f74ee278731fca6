package io.nereus.generation;

import io.nereus.metadata.StreamId;

/** Generation-0 repair ran out of budget or time; nothing was concluded or cached. Retriable. */
public final class RepairIncompleteException extends RuntimeException {
    public RepairIncompleteException(StreamId stream, long offset, String why) {
        super("generation-0 repair of " + stream + " offset " + offset + " did not finish: " + why);
    }
}
