package io.nereus.generation;

import io.nereus.error.NereusException;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.StreamEntry;
import java.util.List;

/** The outcome of resolving one offset of a stream in a view. */
public sealed interface Resolution {
    /**
     * The record that served the offset and its verified entries: from the one holding the offset (a WAL section:
     * possibly all of the record's range) up to the limits the caller gave. The receiver owns the entries' payload
     * references ({@link StreamEntry}) and releases each one it does not hand on.
     */
    record Found(IndexRecord record, List<StreamEntry> entries) implements Resolution {
        public Found {
            entries = List.copyOf(entries);
        }
    }

    /** The offset is below the trim point. */
    record Trimmed(long firstAvailable) implements Resolution {
    }

    /** The offset is not committed yet. */
    record NotYetCommitted(long committedEnd) implements Resolution {
    }

    /** Committed, not trimmed, but no record of the view covers it (and repair, if any, did not help). */
    record Unindexed(long offset) implements Resolution {
    }

    /** Every candidate failed to read; {@code lastFailure} is the last failure seen ({@link TargetReader#FAILURES}). */
    record Unreadable(NereusException lastFailure) implements Resolution {
    }
}
