package io.nereus.metadata;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

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

    /**
     * Nothing was committed because an append to apply lies in WAL slice {@code sliceId}, which is not OPEN:
     * {@code state} is its state, empty when the slice was never registered (or is gone). A slice is sealed once
     * its ledger is closed, so its batches that had not committed by then never will.
     */
    record SliceNotOpen(long sliceId, Optional<WalSliceState> state) implements CommitResult {
        public SliceNotOpen {
            Objects.requireNonNull(state, "state");
        }
    }
}
