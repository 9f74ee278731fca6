package io.nereus.wal;

import io.nereus.metadata.AppendOutcome;
import java.util.Optional;

/**
 * Why the WAL writer did not commit an append. Nothing of a failed append is visible, except after
 * {@link Kind#COMMIT_UNKNOWN}, whose outcome the stream learns by re-reading its head.
 */
public final class WalAppendException extends RuntimeException {
    public enum Kind {
        /** The BookKeeper write (or creating the slice's ledger) failed; nothing was committed. */
        WRITE_FAILED,
        /** The commit refused this stream's part ({@link #outcome()} says why); nothing was committed for it. */
        COMMIT_REJECTED,
        /** The commit transaction failed without a known outcome. */
        COMMIT_UNKNOWN,
        /** An earlier append of the same stream failed; this one was dropped before its commit. */
        ABANDONED,
        /** The writer is closed. */
        CLOSED
    }

    private final Kind kind;
    private final transient AppendOutcome outcome;

    public WalAppendException(Kind kind, String message, Throwable cause) {
        this(kind, null, message, cause);
    }

    public WalAppendException(Kind kind, AppendOutcome outcome, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.outcome = outcome;
    }

    public Kind kind() {
        return kind;
    }

    /** The commit's refusal, for {@link Kind#COMMIT_REJECTED} of a known stream. */
    public Optional<AppendOutcome> outcome() {
        return Optional.ofNullable(outcome);
    }
}
