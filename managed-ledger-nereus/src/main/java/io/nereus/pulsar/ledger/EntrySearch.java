package io.nereus.pulsar.ledger;

import io.nereus.pulsar.EntryReader;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.bookkeeper.mledger.Entry;

/**
 * Binary search over a ledger's entries for the newest one matching a predicate that holds for a prefix of the
 * range (publish time at or before a bound, for seek-by-time and expiry): reads one entry per step,
 * about log2(n) reads. As in Pulsar's own search, the predicate owns each entry it is given and releases it.
 */
final class EntrySearch {
    private EntrySearch() {
    }

    /** The largest offset in {@code [from, to)} whose entry matches, or empty when none does. */
    static CompletableFuture<OptionalLong> newestMatching(EntryReader host, long from, long to,
            Predicate<Entry> predicate) {
        return step(host, from, to - 1, OptionalLong.empty(), predicate);
    }

    private static CompletableFuture<OptionalLong> step(EntryReader host, long lo, long hi, OptionalLong best,
            Predicate<Entry> predicate) {
        if (lo > hi) {
            return CompletableFuture.completedFuture(best);
        }
        long mid = lo + (hi - lo) / 2;
        return host.read(mid, 1, Long.MAX_VALUE).thenCompose(entries -> {
            if (entries.isEmpty()) {
                return CompletableFuture.completedFuture(best);
            }
            for (int i = 1; i < entries.size(); i++) {
                entries.get(i).release();
            }
            return predicate.test(entries.get(0)) ? step(host, mid + 1, hi, OptionalLong.of(mid), predicate)
                    : step(host, lo, mid - 1, best, predicate);
        });
    }
}
