package io.nereus.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.FDBException;
import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.metadata.StreamId;
import io.nereus.metadata.WriteOutcome;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.junit.jupiter.api.Test;

/** The mapping table the broker dispatches on: one expected Pulsar exception class per engine code. */
class PulsarErrorsTest {
    private static final Map<ErrorCode, Class<? extends ManagedLedgerException>> TABLE = new EnumMap<>(ErrorCode.class);

    static {
        TABLE.put(ErrorCode.FENCED, ManagedLedgerException.ManagedLedgerFencedException.class);
        TABLE.put(ErrorCode.CLOSED, ManagedLedgerException.ManagedLedgerAlreadyClosedException.class);
        TABLE.put(ErrorCode.NOT_WRITABLE, ManagedLedgerException.ManagedLedgerTerminatedException.class);
        TABLE.put(ErrorCode.NOT_FOUND, ManagedLedgerException.ManagedLedgerNotFoundException.class);
        TABLE.put(ErrorCode.METADATA_FORMAT, ManagedLedgerException.MetaStoreException.class);
        TABLE.put(ErrorCode.OFFSET_TRIMMED, ManagedLedgerException.NonRecoverableLedgerException.class);
        TABLE.put(ErrorCode.DATA_LOSS, ManagedLedgerException.NonRecoverableLedgerException.class);
        TABLE.put(ErrorCode.CHECKSUM_MISMATCH, ManagedLedgerException.NonRecoverableLedgerException.class);
        TABLE.put(ErrorCode.NOT_ENTRY_BOUNDARY, ManagedLedgerException.NonRecoverableLedgerException.class);
        TABLE.put(ErrorCode.RETRIABLE_WRITE_FAILED, ManagedLedgerException.class);
        TABLE.put(ErrorCode.RETRIABLE_COMMIT_FAILED, ManagedLedgerException.class);
        TABLE.put(ErrorCode.RETRIABLE_ABANDONED, ManagedLedgerException.class);
        TABLE.put(ErrorCode.RETRIABLE_READ_FAILED, ManagedLedgerException.class);
        TABLE.put(ErrorCode.RETRIABLE_REPAIR_INCOMPLETE, ManagedLedgerException.class);
        TABLE.put(ErrorCode.RETRIABLE_MATERIALIZATION_INCOMPLETE, ManagedLedgerException.class);
        TABLE.put(ErrorCode.CORRUPT_DATA, ManagedLedgerException.class);
        TABLE.put(ErrorCode.TARGET_MISSING, ManagedLedgerException.class);
        TABLE.put(ErrorCode.OBJECT_EXISTS, ManagedLedgerException.class);
        TABLE.put(ErrorCode.RANGE_NOT_SATISFIABLE, ManagedLedgerException.class);
        TABLE.put(ErrorCode.OBJECT_STORE_REFUSED, ManagedLedgerException.class);
        TABLE.put(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED, ManagedLedgerException.class);
        // the Kafka adapter's codes never reach the Pulsar facade; the default mapping applies
        TABLE.put(ErrorCode.INVALID_RECORD_BATCH, ManagedLedgerException.class);
        TABLE.put(ErrorCode.OUT_OF_ORDER_SEQUENCE, ManagedLedgerException.class);
        TABLE.put(ErrorCode.INVALID_PRODUCER_EPOCH, ManagedLedgerException.class);
        TABLE.put(ErrorCode.OFFSET_OUT_OF_RANGE, ManagedLedgerException.class);
    }

    @Test
    void table_coversEveryCode() {
        assertThat(TABLE.keySet()).containsExactlyInAnyOrder(ErrorCode.values());
    }

    @Test
    void map_eachCode_givesItsPulsarExceptionWithTheEngineFailureAsCause() {
        for (ErrorCode code : ErrorCode.values()) {
            NereusException n = new NereusException(code, Map.of("stream", StreamId.of(7)));
            ManagedLedgerException m = PulsarErrors.map(new CompletionException(n));
            assertThat(m).as("%s", code).isExactlyInstanceOf(TABLE.get(code));
            assertThat(m.getCause()).as("%s", code).isSameAs(n);
        }
    }

    @Test
    void map_managedLedgerException_isPassedOnUnwrapped() {
        ManagedLedgerException e = new ManagedLedgerException.CursorAlreadyClosedException("closed");
        assertThat(PulsarErrors.map(new CompletionException(new ExecutionException(e)))).isSameAs(e);
    }

    @Test
    void map_otherFailures_byKind() {
        FDBException fdb = new FDBException("not_committed", 1020);
        assertThat(PulsarErrors.map(new CompletionException(fdb)))
                .isExactlyInstanceOf(ManagedLedgerException.MetaStoreException.class).hasCause(fdb);
        TimeoutException timeout = new TimeoutException("slow");
        assertThat(PulsarErrors.map(timeout)).isExactlyInstanceOf(ManagedLedgerException.class)
                .hasMessage("operation timed out: slow").hasCause(timeout);
        IllegalArgumentException bad = new IllegalArgumentException("bad position");
        assertThat(PulsarErrors.map(bad)).isExactlyInstanceOf(ManagedLedgerException.class)
                .hasMessage("bad position").hasCause(bad);
        RuntimeException other = new RuntimeException("boom");
        assertThat(PulsarErrors.map(other)).isExactlyInstanceOf(ManagedLedgerException.class).hasCause(other);
    }

    @Test
    void map_fencedWrite_isFencedWithBothEpochsAfterTheCallersContext() {
        ManagedLedgerException m = PulsarErrors.map(new WriteOutcome.Fenced(5, 4), Map.of("cursor", "sub"));
        assertThat(m).isExactlyInstanceOf(ManagedLedgerException.ManagedLedgerFencedException.class);
        assertThat(m.getCause()).isInstanceOfSatisfying(NereusException.class, n -> {
            assertThat(n.code()).isEqualTo(ErrorCode.FENCED);
            assertThat(n.context()).containsExactly(Map.entry("cursor", "sub"), Map.entry("headEpoch", 5L),
                    Map.entry("requestEpoch", 4L));
        });
    }

    @Test
    void map_writeToUnknownStream_isNotFound() {
        ManagedLedgerException m = PulsarErrors.map(new WriteOutcome.UnknownStream(StreamId.of(9)),
                Map.of("ledger", "t"));
        assertThat(m).isExactlyInstanceOf(ManagedLedgerException.ManagedLedgerNotFoundException.class);
        assertThat(m.getCause()).isInstanceOfSatisfying(NereusException.class, n -> {
            assertThat(n.code()).isEqualTo(ErrorCode.NOT_FOUND);
            assertThat(n.context()).containsEntry("stream", StreamId.of(9)).containsEntry("ledger", "t");
        });
    }

    @Test
    void map_writtenOutcome_isNoRefusal() {
        assertThatThrownBy(() -> PulsarErrors.map(WriteOutcome.WRITTEN, Map.of()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void isCancellation_looksUnderTheWrappers() {
        assertThat(PulsarErrors.isCancellation(new CompletionException(new CancellationException()))).isTrue();
        assertThat(PulsarErrors.isCancellation(new CompletionException(new IllegalStateException()))).isFalse();
    }
}
