package io.nereus.fdb.embedded;

/** Receives the recovered state while {@link DurableLog#open} runs, on the opening thread. */
interface RecoverySink {
    /** Called first, once per live key of the newest snapshot, keys in ascending unsigned order. */
    void loadSnapshotEntry(byte[] key, byte[] value);

    /** Then once per logged record whose version is greater than the snapshot's, in ascending version order. */
    void apply(LogRecord record);
}
