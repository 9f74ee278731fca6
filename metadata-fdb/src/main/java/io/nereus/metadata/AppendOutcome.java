package io.nereus.metadata;

import java.util.Objects;
import java.util.Optional;

/**
 * What a commit transaction does with one {@link StreamAppend}, decided from what it read in the same
 * transaction: the stream's head and, when the head already covers the append, the generation-0 record that
 * covers the append's end (if any).
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

    /**
     * Commit the append: the head becomes {@code next}, and {@code record}, the append's own generation-0 record, is
     * written, or the run of the stream's appends it continues is written longer by it ({@link WalTarget}).
     */
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
     * Decides the outcome of {@code append} against {@code head}. {@code covering} is the generation-0
     * COMMITTED-view record stored over the append's end offset (the first such record ending at or after it), read
     * in the same transaction; it tells a retried commit that already succeeded apart from a conflicting one: the
     * append is applied when that record lists the append's very section, alone or as part of a run.
     */
    static AppendOutcome decide(StreamHead head, Optional<IndexRecord> covering, StreamAppend append) {
        Objects.requireNonNull(head, "head");
        Objects.requireNonNull(covering, "covering");
        Objects.requireNonNull(append, "append");
        IndexRecord wanted = append.generationZeroRecord();
        if (covering.isPresent() && listsAppend(covering.get(), wanted)
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

    private static boolean listsAppend(IndexRecord stored, IndexRecord wanted) {
        if (!stored.stream().equals(wanted.stream()) || stored.view() != wanted.view()
                || !stored.generation().equals(wanted.generation()) || !(stored.target() instanceof WalTarget)
                || !stored.range().contains(wanted.range().start()) || stored.range().end() < wanted.range().end()) {
            return false;
        }
        WalSectionRef section = wanted.walSections().get(0);
        return stored.walSections().contains(section);
    }
}
