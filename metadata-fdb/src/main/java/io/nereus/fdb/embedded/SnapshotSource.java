package io.nereus.fdb.embedded;

/** Supplies the consistent views of the key space that {@link DurableLog} writes into snapshot files. */
interface SnapshotSource {
    /**
     * A consistent view of the whole key space as of {@code version} (all records {@code <= version} applied, none
     * after); the engine keeps that version readable until the returned snapshot is closed. Called on the log's
     * compaction thread, only with a version the log has already made durable.
     */
    StateSnapshot openSnapshot(long version);
}
