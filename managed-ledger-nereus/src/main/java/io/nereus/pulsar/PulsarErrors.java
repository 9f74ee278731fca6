package io.nereus.pulsar;

import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.mledger.ManagedLedgerException;

/**
 * The one place where engine failures become Pulsar's {@link ManagedLedgerException} subclasses, which the
 * broker dispatches on (fenced topics are reloaded, non-recoverable reads may be skipped, closed ledgers are
 * reopened). Engine codes keep their static message; the cause is attached.
 */
public final class PulsarErrors {
    private PulsarErrors() {
    }

    /** The {@link ManagedLedgerException} for {@code t}, unwrapping completion wrappers. */
    public static ManagedLedgerException map(Throwable t) {
        Throwable c = Failures.unwrap(t);
        if (c instanceof ManagedLedgerException m) {
            return m;
        }
        if (c instanceof NereusException n) {
            ManagedLedgerException m = switch (n.code()) {
                case FENCED -> new ManagedLedgerException.ManagedLedgerFencedException(n);
                case CLOSED -> new ManagedLedgerException.ManagedLedgerAlreadyClosedException(n.getMessage());
                case NOT_WRITABLE -> new ManagedLedgerException.ManagedLedgerTerminatedException(n.getMessage());
                case NOT_FOUND -> new ManagedLedgerException.ManagedLedgerNotFoundException(n);
                case METADATA_FORMAT -> new ManagedLedgerException.MetaStoreException(n);
                case OFFSET_TRIMMED, DATA_LOSS, CHECKSUM_MISMATCH, NOT_ENTRY_BOUNDARY ->
                        new ManagedLedgerException.NonRecoverableLedgerException(n.getMessage());
                default -> new ManagedLedgerException(n.getMessage(), n);
            };
            if (m.getCause() == null) {
                m.initCause(n);
            }
            return m;
        }
        if (isFdb(c)) {
            return new ManagedLedgerException.MetaStoreException(c);
        }
        if (c instanceof TimeoutException) {
            return new ManagedLedgerException("operation timed out: " + c.getMessage(), c);
        }
        if (c instanceof IllegalArgumentException || c instanceof IllegalStateException) {
            return new ManagedLedgerException(c.getMessage(), c);
        }
        return new ManagedLedgerException(c);
    }

    public static boolean isCancellation(Throwable t) {
        return Failures.unwrap(t) instanceof CancellationException;
    }

    private static boolean isFdb(Throwable t) {
        return t.getClass().getName().startsWith("com.apple.foundationdb.");
    }
}
