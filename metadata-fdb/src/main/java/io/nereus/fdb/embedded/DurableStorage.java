package io.nereus.fdb.embedded;

import java.nio.file.Path;

/** Connects the engine to its durable log in a directory: recovery first, then every commit appended. */
final class DurableStorage {
    private DurableStorage() {
    }

    static AutoCloseable open(Path dir, long compactionThresholdBytes, EmbeddedEngine engine) {
        throw new IllegalStateException("durable storage is being integrated");
    }
}
