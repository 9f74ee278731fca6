package io.nereus.metadata;

import java.util.List;
import java.util.Objects;

/** The result of committing one or more consecutive WAL batches of many streams in one transaction. */
public sealed interface CommitResult {

    /** Every append is committed (now or by an earlier attempt); one head per append, in append order. */
    record Committed(List<StreamHead> heads) implements CommitResult {
        public Committed {
            heads = List.copyOf(heads);
        }
    }

    /** Nothing was committed because {@code append} was refused with {@code outcome}. */
    record Rejected(StreamAppend append, AppendOutcome outcome) implements CommitResult {
        public Rejected {
            Objects.requireNonNull(append, "append");
            Objects.requireNonNull(outcome, "outcome");
        }
    }

    /** Nothing was committed because {@code stream} has no head. */
    record UnknownStream(StreamId stream) implements CommitResult {
    }
}
