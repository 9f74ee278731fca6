package io.nereus.pulsar.ledger;

/**
 * A Nereus managed ledger's lifecycle; {@link #canTransitionTo} is the one table of allowed moves and
 * {@link NereusManagedLedger}'s {@code transition} the one place that makes them. FENCED is reached only from OPEN
 * (a terminated ledger appends nothing a newer writer could refuse); CLOSED may be entered again by a second
 * close; DELETED is final.
 *
 * <pre>
 *   OPEN ──terminate──▶ TERMINATED ──close──▶ CLOSED
 *     │                                          ▲
 *     ├──fenced by a newer writer──▶ FENCED ──close──┘   (appends fail; reads continue until close)
 *     ├──close──▶ CLOSED
 *     └──delete (from any but DELETED)──▶ DELETED
 * </pre>
 */
enum LedgerState {
    OPEN("LedgerOpened"), TERMINATED("Terminated"), FENCED("Fenced"), CLOSED("Closed"), DELETED("Closed");

    private final String pulsarName;

    LedgerState(String pulsarName) {
        this.pulsarName = pulsarName;
    }

    boolean canTransitionTo(LedgerState next) {
        return switch (this) {
            case OPEN -> next != OPEN;
            case TERMINATED -> next == CLOSED || next == DELETED;
            case FENCED -> next == CLOSED || next == DELETED;
            case CLOSED -> next == CLOSED || next == DELETED;
            case DELETED -> false;
        };
    }

    /** The name stock Pulsar reports for the same state in internal stats. */
    String pulsarName() {
        return pulsarName;
    }
}
