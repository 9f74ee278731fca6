package io.nereus.fdb.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * Connects the engine to its {@link DurableLog} in a directory: recovery replays the newest snapshot and the
 * log into the engine, then every commit is appended to the log and becomes visible once durable as the options
 * say (fsynced, or written to the OS with a sync interval); the
 * engine serves the log's compaction snapshots.
 */
final class DurableStorage {
    private DurableStorage() {
    }

    /**
     * Recovers {@code dir} into {@code engine} and starts serving from it.
     *
     * @throws UncheckedIOException when the directory cannot be used or holds damaged data (a
     *                              {@link CorruptLogException} naming the file and offset is the cause)
     */
    static AutoCloseable open(Path dir, DurableLogOptions options, EmbeddedEngine engine) {
        DurableLog log;
        try {
            log = DurableLog.open(dir, options, new RecoverySink() {
                @Override
                public void loadSnapshotEntry(byte[] key, byte[] value) {
                    engine.loadRecovered(key, value);
                }

                @Override
                public void apply(LogRecord record) {
                    engine.applyRecovered(record);
                }
            });
        } catch (CorruptLogException e) {
            throw new UncheckedIOException("EmbeddedFdb refuses to open " + dir + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException("EmbeddedFdb cannot open " + dir + ": " + e.getMessage(), e);
        }
        log.setSnapshotSource(engine::openSnapshot);
        engine.startServing(log.recoveredVersion(), log);
        return log;
    }
}
