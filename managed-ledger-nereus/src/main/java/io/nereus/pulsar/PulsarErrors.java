package io.nereus.pulsar;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.WriteOutcome;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.mledger.ManagedLedgerException;

/**
 * The one place where engine failures become Pulsar's {@link ManagedLedgerException} subclasses, which the
 * broker dispatches on (fenced topics are reloaded, non-recoverable reads may be skipped, closed ledgers are
 * reopened). The table, by {@link ErrorCode}:
 * <pre>
 * FENCED                                                    ManagedLedgerFencedException
 * CLOSED                                                    ManagedLedgerAlreadyClosedException
 * NOT_WRITABLE                                              ManagedLedgerTerminatedException
 * NOT_FOUND                                                 ManagedLedgerNotFoundException
 * METADATA_FORMAT (and any FoundationDB exception)          MetaStoreException
 * OFFSET_TRIMMED, DATA_LOSS, CHECKSUM_MISMATCH,
 * NOT_ENTRY_BOUNDARY                                        NonRecoverableLedgerException
 * every other code (the RETRIABLE_ ones, CORRUPT_DATA,
 * TARGET_MISSING, and the object store's OBJECT_EXISTS,
 * RANGE_NOT_SATISFIABLE, OBJECT_STORE_REFUSED)              ManagedLedgerException
 * </pre>
 * A conditional write the metadata refused ({@link WriteOutcome}) maps as the code it means: {@code Fenced} as
 * FENCED, {@code UnknownStream} as NOT_FOUND. Engine codes keep their static message; the NereusException is
 * attached as the cause.
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
            return map(n);
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

    /**
     * The failure for a conditional write (cursor state, ledger properties) that {@code refused} says was not
     * written: {@code Fenced} as FENCED (context {@code headEpoch}, {@code requestEpoch}), {@code UnknownStream} as
     * NOT_FOUND ({@code stream}), after {@code context}, which names what was written (ledger, cursor, operation).
     *
     * @throws IllegalArgumentException for {@link WriteOutcome.Written}, which refused nothing
     */
    public static ManagedLedgerException map(WriteOutcome refused, Map<String, ?> context) {
        Objects.requireNonNull(refused, "refused");
        Map<String, Object> ctx = new LinkedHashMap<>(context);
        ErrorCode code;
        if (refused instanceof WriteOutcome.Fenced f) {
            code = ErrorCode.FENCED;
            ctx.put("headEpoch", f.headEpoch());
            ctx.put("requestEpoch", f.requestEpoch());
        } else if (refused instanceof WriteOutcome.UnknownStream u) {
            code = ErrorCode.NOT_FOUND;
            ctx.put("stream", u.stream());
        } else {
            throw new IllegalArgumentException("not a refused write: " + refused);
        }
        return map(new NereusException(code, ctx));
    }

    private static ManagedLedgerException map(NereusException n) {
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

    public static boolean isCancellation(Throwable t) {
        return Failures.unwrap(t) instanceof CancellationException;
    }

    private static boolean isFdb(Throwable t) {
        return t.getClass().getName().startsWith("com.apple.foundationdb.");
    }
}
