package io.nereus.fdb.embedded;

/**
 * Tuning of {@link DurableLog}.
 *
 * @param compactionThresholdBytes when the log segments not yet covered by a snapshot exceed this many bytes, the
 *     log rolls to a new segment and writes a snapshot so that the old segments can be deleted; bounds reopen time
 */
record DurableLogOptions(long compactionThresholdBytes) {
    static final long DEFAULT_COMPACTION_THRESHOLD_BYTES = 64L * 1024 * 1024;

    DurableLogOptions {
        if (compactionThresholdBytes <= 0) {
            throw new IllegalArgumentException("compactionThresholdBytes must be > 0: " + compactionThresholdBytes);
        }
    }

    static DurableLogOptions defaults() {
        return new DurableLogOptions(DEFAULT_COMPACTION_THRESHOLD_BYTES);
    }
}
