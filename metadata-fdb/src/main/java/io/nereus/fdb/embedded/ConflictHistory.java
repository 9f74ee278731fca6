package io.nereus.fdb.embedded;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The resolver's memory of the write conflict ranges the engine gives it (every range but a single key the commit
 * mutated, which the key's slot in the {@link VersionedStore} remembers): for every key, the newest commit version
 * whose ranges covered it, kept as a step function (a boundary key maps to the version that holds from it up to the
 * next boundary).
 *
 * <p>Commits arrive with strictly increasing versions, so recording a write range simply overwrites the
 * function on that range. A read range conflicts when the function exceeds the reader's read version
 * anywhere on it. Versions no live transaction can still need (the engine's cutoff) are flattened to zero and
 * equal neighbours merged, which keeps the structure proportional to what was written since.
 *
 * <p>Threading: only the commit critical section touches it.
 */
final class ConflictHistory {
    private final TreeMap<byte[], Long> steps = new TreeMap<>(Bytes.ORDER);
    private int sizeAfterLastPrune = 1;
    /** The newest version recorded (an upper bound of every step); 0 while nothing is. */
    private long newest;

    ConflictHistory() {
        steps.put(Bytes.EMPTY, 0L);
    }

    /** Whether a write committed after {@code readVersion} touched any of {@code reads}. */
    boolean conflicts(List<KeyRange> reads, long readVersion) {
        if (newest <= readVersion) {
            // nothing recorded since the read version: the usual case, where commits write single keys the store
            // remembers and ranges are recorded only now and then
            return false;
        }
        for (KeyRange r : reads) {
            if (r.isEmpty()) {
                continue;
            }
            if (steps.floorEntry(r.begin()).getValue() > readVersion) {
                return true;
            }
            if (r.isPoint()) {
                continue; // no boundary lies strictly between a key and the key after it
            }
            // Usually no boundary, or one, lies inside a read range: step through them without a view.
            for (Map.Entry<byte[], Long> e = steps.higherEntry(r.begin());
                 e != null && Bytes.compare(e.getKey(), r.end()) < 0; e = steps.higherEntry(e.getKey())) {
                if (e.getValue() > readVersion) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Records the write conflict ranges of the commit at {@code version}, which exceeds every earlier one. */
    void record(List<KeyRange> writes, long version) {
        newest = version;
        for (KeyRange w : writes) {
            if (w.isEmpty()) {
                continue;
            }
            Map.Entry<byte[], Long> atEnd = steps.floorEntry(w.end());
            boolean endIsBoundary = Bytes.compare(atEnd.getKey(), w.end()) == 0;
            long endValue = atEnd.getValue();
            // Boundaries inside (begin, end) go; usually there are none, so no sub-map view is built for them.
            for (byte[] k = steps.higherKey(w.begin()); k != null && Bytes.compare(k, w.end()) < 0;
                 k = steps.higherKey(w.begin())) {
                steps.remove(k);
            }
            steps.put(w.begin(), version);
            if (!endIsBoundary) {
                steps.put(w.end(), endValue);
            }
        }
    }

    /** Forgets versions at or below {@code cutoff}: no transaction that old can commit. */
    void prune(long cutoff) {
        if (steps.size() < 2 * sizeAfterLastPrune + 1024) {
            return;
        }
        Long previous = null;
        Iterator<Map.Entry<byte[], Long>> it = steps.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<byte[], Long> e = it.next();
            long v = e.getValue() <= cutoff ? 0L : e.getValue();
            if (previous != null && previous == v) {
                it.remove();
            } else {
                e.setValue(v);
                previous = v;
            }
        }
        sizeAfterLastPrune = steps.size();
    }

    int boundaries() {
        return steps.size();
    }
}
