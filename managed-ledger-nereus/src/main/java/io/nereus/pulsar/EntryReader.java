package io.nereus.pulsar;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.Entry;

/** Reads committed entries of one ledger by offset; entries are owned (released) by the caller. */
public interface EntryReader {
    /**
     * Committed entries {@code [from, ...)}: at most {@code maxEntries} and, beyond the first, at most
     * {@code maxBytes} bytes, with positions {@code (ledgerId, offset)}.
     */
    CompletableFuture<List<Entry>> read(long from, int maxEntries, long maxBytes);
}
