package io.nereus.fdb.embedded;

import java.util.List;

/** One committed transaction's resolved effects, applied in list order. */
record LogRecord(long version, List<Effect> effects) {
}
