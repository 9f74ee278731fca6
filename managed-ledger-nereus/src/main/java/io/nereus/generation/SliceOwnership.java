package io.nereus.generation;

import java.util.List;

/**
 * Which storage instance does the background work (materialization, collection) of a WAL slice or a stream: a
 * slice's own writer while its lease lives; otherwise, and for work keyed by something else, one of the live
 * writers, sorted, chosen by the key's hash modulo their number. Instances that disagree about who is live may both
 * do the work or neither for a pass; every step they take is conditional and idempotent, so that only costs time.
 */
final class SliceOwnership {
    private SliceOwnership() {
    }

    /** True when {@code self} does the work of slice {@code sliceId} written by {@code sliceWriter}. */
    static boolean ownsSlice(long sliceId, String sliceWriter, String self, List<String> liveSorted) {
        if (sliceWriter.equals(self)) {
            return true;
        }
        if (liveSorted.contains(sliceWriter)) {
            return false;
        }
        return ownsKey(Long.hashCode(sliceId), self, liveSorted);
    }

    /** True when {@code self} does the work keyed by {@code hash} among {@code liveSorted} (which holds self). */
    static boolean ownsKey(int hash, String self, List<String> liveSorted) {
        return liveSorted.get(Math.floorMod(hash, liveSorted.size())).equals(self);
    }
}
