package io.nereus.fdb.embedded;

import java.util.List;

/** One committed transaction's resolved effects, applied in list order. {@code version > 0}. */
record LogRecord(long version, List<Effect> effects) {
    LogRecord {
        if (version <= 0) {
            throw new IllegalArgumentException("version must be > 0: " + version);
        }
        effects = List.copyOf(effects); // rejects null lists and null elements
    }
}
