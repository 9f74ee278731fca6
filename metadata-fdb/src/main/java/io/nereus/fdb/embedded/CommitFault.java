package io.nereus.fdb.embedded;

/**
 * A failure that {@link EmbeddedFdb#injectCommitFaults(CommitFault, int)} makes the next commits suffer, so
 * tests can exercise retry loops and the idempotency of transaction bodies. A single-node in-process store
 * never loses a commit's outcome by itself; these are the failures a real cluster can produce.
 */
public enum CommitFault {
    /** The commit fails with 1020 {@code not_committed}; nothing is applied. */
    NOT_COMMITTED,
    /** The commit fails with 1007 {@code transaction_too_old}; nothing is applied. */
    TRANSACTION_TOO_OLD,
    /** The commit's writes are applied (and durable), then the commit fails with 1021 {@code commit_unknown_result}. */
    UNKNOWN_RESULT_APPLIED,
    /** The commit fails with 1021 {@code commit_unknown_result}; nothing is applied. */
    UNKNOWN_RESULT_NOT_APPLIED
}
