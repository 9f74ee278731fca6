package io.nereus.metadata;

import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The OPEN WAL slices and the WAL writer leases, read from one snapshot ({@link WalSliceStore#census}): what
 * slice recovery decides on. Because both come from the same read version, an OPEN slice whose lease is absent
 * here really had no lease: a lease is taken before its slices are registered and removed only after they are
 * sealed.
 *
 * @param open   OPEN slices by slice id
 * @param leases leases by incarnation
 */
public record SliceCensus(SortedMap<Long, WalSlice> open, SortedMap<Long, WalWriterLease> leases) {
    public SliceCensus {
        open = Collections.unmodifiableSortedMap(new TreeMap<>(open));
        leases = Collections.unmodifiableSortedMap(new TreeMap<>(leases));
    }
}
