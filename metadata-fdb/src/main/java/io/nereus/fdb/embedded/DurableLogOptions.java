package io.nereus.fdb.embedded;

import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of {@link DurableLog}.
 *
 * @param compactionThresholdBytes when the log segments not yet covered by a snapshot exceed this many bytes, the
 *     log rolls to a new segment and writes a snapshot so that the old segments can be deleted; bounds reopen time
 * @param syncInterval zero: every group of records is fsynced before it is acknowledged. Above zero: a group is
 *     written to the operating system (it survives a crash of the process) and acknowledged, and the log is fsynced
 *     at most this long later (an OS crash or power loss may lose the records of the last interval); recovery then
 *     drops damage past the last fsync (see {@link SyncMark}) instead of refusing the log
 */
record DurableLogOptions(long compactionThresholdBytes, Duration syncInterval) {
    static final long DEFAULT_COMPACTION_THRESHOLD_BYTES = 64L * 1024 * 1024;

    DurableLogOptions {
        if (compactionThresholdBytes <= 0) {
            throw new IllegalArgumentException("compactionThresholdBytes must be > 0: " + compactionThresholdBytes);
        }
        Objects.requireNonNull(syncInterval, "syncInterval");
        if (syncInterval.isNegative()) {
            throw new IllegalArgumentException("syncInterval must be >= 0: " + syncInterval);
        }
    }

    static DurableLogOptions defaults() {
        return new DurableLogOptions(DEFAULT_COMPACTION_THRESHOLD_BYTES, Duration.ZERO);
    }

    /** Whether every group is fsynced before it is acknowledged. */
    boolean syncsEveryGroup() {
        return syncInterval.isZero();
    }
}
