package io.nereus.pulsar;

import io.nereus.metadata.StreamEntry;
import java.util.ArrayList;
import java.util.List;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.impl.EntryImpl;

/**
 * Stream entries as the entries Pulsar reads: an {@link EntryImpl} wrapping the entry's payload buffer itself (a
 * retained slice of what the storage holds, never a copy), at position {@code (ledgerId, first offset)}. The
 * Pulsar entry takes over the stream entry's reference: {@code EntryImpl.create(long, long, ByteBuf)} retains the
 * buffer and releases it when the entry is deallocated, and the stream entry's own reference is released here, so
 * the one owner afterwards is whoever holds the Pulsar entry (Pulsar releases it once delivered or dropped).
 */
public final class PulsarEntries {
    private PulsarEntries() {
    }

    /** The Pulsar entry of {@code e}, taking over its reference; {@code e} must not be used afterwards. */
    public static Entry take(long ledgerId, StreamEntry e) {
        try {
            return EntryImpl.create(ledgerId, e.range().start(), e.payload());
        } finally {
            e.release();
        }
    }

    /** The Pulsar entries of {@code entries}, in order, taking over every reference (released all on failure). */
    public static List<Entry> takeAll(long ledgerId, List<StreamEntry> entries) {
        List<Entry> out = new ArrayList<>(entries.size());
        int i = 0;
        try {
            for (; i < entries.size(); i++) {
                out.add(take(ledgerId, entries.get(i)));
            }
            return out;
        } catch (RuntimeException ex) {
            out.forEach(Entry::release);
            for (int j = i + 1; j < entries.size(); j++) {
                entries.get(j).release();
            }
            throw ex;
        }
    }
}
