package io.nereus.metadata;

import java.util.Objects;
import java.util.Optional;

/**
 * What a commit transaction does with one {@link StreamAppend}, decided from what it read in the same
 * transaction: the stream's head and the generation-0 record at the append's end offset (if any).
 *
 * <ul>
 *   <li>{@link Apply}: write the new head and the record;</li>
 *   <li>{@link AlreadyApplied}: an earlier attempt of this very commit succeeded (its result was unknown,
 *       error 1021); write nothing, report success;</li>
 *   <li>{@link Fenced}: another writer holds a newer epoch; this writer must stop;</li>
 *   <li>{@link UnexpectedStart}: the head is not where the writer thinks; it must re-read the head;</li>
 *   <li>{@link NotAccepting}: the stream is sealed or being deleted.</li>
 * </ul>
 * Only {@code Apply} and {@code AlreadyApplied} let the batch commit; any other outcome for any stream
 * fails the whole batch.
 */
public sealed interface AppendOutcome {

    /** Commit the append: the head becomes {@code next}, {@code record} is written. */
    record Apply(StreamHead next, IndexRecord record) implements AppendOutcome {
        public Apply {
            Objects.requireNonNull(next, "next");
            Objects.requireNonNull(record, "record");
        }
    }

    /** The head already includes this exact append. */
    record AlreadyApplied(StreamHead head) implements AppendOutcome {
        public AlreadyApplied {
            Objects.requireNonNull(head, "head");
        }
    }

    /** The head's writer epoch differs from the append's. */
    record Fenced(long headEpoch, long appendEpoch) implements AppendOutcome {
    }

    /** The append does not start at the head's committed end. */
    record UnexpectedStart(long committedEnd, long appendStart) implements AppendOutcome {
    }

    /** The stream does not accept commits in this state. */
    record NotAccepting(StreamState state) implements AppendOutcome {
        public NotAccepting {
            Objects.requireNonNull(state, "state");
        }
    }

    /** True when the batch may commit with this outcome. */
    default boolean permitsCommit() {
        return this instanceof Apply || this instanceof AlreadyApplied;
    }

    /**
     * Decides the outcome of {@code append} against {@code head}. {@code recordAtEnd} is the generation-0
     * COMMITTED-view record stored at the append's end offset, read in the same transaction; it tells a
     * retried commit that already succeeded apart from a conflicting one.
     */
    static AppendOutcome decide(StreamHead head, Optional<IndexRecord> recordAtEnd, StreamAppend append) {
        Objects.requireNonNull(head, "head");
        Objects.requireNonNull(recordAtEnd, "recordAtEnd");
        Objects.requireNonNull(append, "append");
        IndexRecord wanted = append.generationZeroRecord();
        if (recordAtEnd.isPresent() && isSameAppend(recordAtEnd.get(), wanted)
                && head.committedEnd() >= append.range().end() && head.writerEpoch() == append.writerEpoch()) {
            return new AlreadyApplied(head);
        }
        if (head.writerEpoch() != append.writerEpoch()) {
            return new Fenced(head.writerEpoch(), append.writerEpoch());
        }
        if (!head.state().acceptsCommits()) {
            return new NotAccepting(head.state());
        }
        if (head.committedEnd() != append.range().start()) {
            return new UnexpectedStart(head.committedEnd(), append.range().start());
        }
        return new Apply(head.withCommitted(append.range(), append.bytes()), wanted);
    }

    private static boolean isSameAppend(IndexRecord stored, IndexRecord wanted) {
        return stored.stream().equals(wanted.stream())
                && stored.view() == wanted.view()
                && stored.range().equals(wanted.range())
                && stored.generation().equals(wanted.generation())
                && stored.target().equals(wanted.target())
                && stored.checksum().equals(wanted.checksum());
    }
}
