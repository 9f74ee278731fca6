package io.nereus.stream;

import io.nereus.metadata.StreamEntry;
import java.util.List;

/**
 * Entries returned by one read, in offset order and without gaps, and the offset to continue from. The receiver
 * owns the entries' payload references ({@link StreamEntry}): it releases each exactly once, or hands it on.
 *
 * @param entries      possibly empty (nothing committed at the start offset yet)
 * @param nextOffset   the first offset after the last returned entry (the start offset when empty)
 * @param committedEnd the committed end of the head snapshot the read used
 */
public record ReadResult(List<StreamEntry> entries, long nextOffset, long committedEnd) {
    public ReadResult {
        entries = List.copyOf(entries);
    }

    /** Releases every entry ({@link StreamEntry#releaseAll}); for a receiver that wants none of them. */
    public void release() {
        StreamEntry.releaseAll(entries);
    }
}
