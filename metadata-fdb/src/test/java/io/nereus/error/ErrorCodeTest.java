package io.nereus.error;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The retriable flag of every code, as its callers rely on it: a stream re-reads its head and accepts the next
 * append after a RETRIABLE_ append failure and stops for good after FENCED; a reader may retry a RETRIABLE_ read
 * failure (nothing negative was cached) and never succeeds after OFFSET_TRIMMED, DATA_LOSS or CHECKSUM_MISMATCH;
 * undecodable metadata, corrupt or missing stored data do not change by reading them again; an object that exists,
 * a range beyond an object's end or a request the object store refuses stay so, while a failed object store
 * request may succeed when repeated.
 */
class ErrorCodeTest {
    private static final Map<ErrorCode, Boolean> RETRIABLE = new EnumMap<>(ErrorCode.class);

    static {
        RETRIABLE.put(ErrorCode.OFFSET_TRIMMED, false);
        RETRIABLE.put(ErrorCode.FENCED, false);
        RETRIABLE.put(ErrorCode.CHECKSUM_MISMATCH, false);
        RETRIABLE.put(ErrorCode.NOT_FOUND, false);
        RETRIABLE.put(ErrorCode.NOT_ENTRY_BOUNDARY, false);
        RETRIABLE.put(ErrorCode.NOT_WRITABLE, false);
        RETRIABLE.put(ErrorCode.CLOSED, false);
        RETRIABLE.put(ErrorCode.DATA_LOSS, false);
        RETRIABLE.put(ErrorCode.RETRIABLE_WRITE_FAILED, true);
        RETRIABLE.put(ErrorCode.RETRIABLE_COMMIT_FAILED, true);
        RETRIABLE.put(ErrorCode.RETRIABLE_ABANDONED, true);
        RETRIABLE.put(ErrorCode.RETRIABLE_READ_FAILED, true);
        RETRIABLE.put(ErrorCode.RETRIABLE_REPAIR_INCOMPLETE, true);
        RETRIABLE.put(ErrorCode.RETRIABLE_MATERIALIZATION_INCOMPLETE, true);
        RETRIABLE.put(ErrorCode.METADATA_FORMAT, false);
        RETRIABLE.put(ErrorCode.CORRUPT_DATA, false);
        RETRIABLE.put(ErrorCode.TARGET_MISSING, false);
        RETRIABLE.put(ErrorCode.OBJECT_EXISTS, false);
        RETRIABLE.put(ErrorCode.RANGE_NOT_SATISFIABLE, false);
        RETRIABLE.put(ErrorCode.OBJECT_STORE_REFUSED, false);
        RETRIABLE.put(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED, true);
        RETRIABLE.put(ErrorCode.INVALID_RECORD_BATCH, false);
        RETRIABLE.put(ErrorCode.OUT_OF_ORDER_SEQUENCE, false);
        RETRIABLE.put(ErrorCode.INVALID_PRODUCER_EPOCH, false);
        RETRIABLE.put(ErrorCode.OFFSET_OUT_OF_RANGE, false);
    }

    @Test
    void retriable_isTheFlagCallersRelyOn_forEveryCode() {
        assertThat(RETRIABLE.keySet()).containsExactlyInAnyOrder(ErrorCode.values());
        for (ErrorCode code : ErrorCode.values()) {
            assertThat(code.retriable()).as("%s", code).isEqualTo(RETRIABLE.get(code));
        }
    }

    @Test
    void retriable_exactlyTheCodesNamedSo() {
        for (ErrorCode code : ErrorCode.values()) {
            assertThat(code.retriable()).as("%s", code).isEqualTo(code.name().startsWith("RETRIABLE_"));
        }
    }

    @Test
    void messages_areStaticAndDistinct() {
        assertThat(Arrays.stream(ErrorCode.values()).map(ErrorCode::message))
                .doesNotHaveDuplicates()
                .allSatisfy(m -> assertThat(m).isNotBlank().doesNotContain("%", "{", "}"));
    }
}
