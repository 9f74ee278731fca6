package io.nereus.fdb.embedded;

import java.util.Iterator;
import java.util.Map;

/** A view of the whole key space at one version; see {@link SnapshotSource#openSnapshot(long)}. */
interface StateSnapshot extends AutoCloseable {
    /** Every live key with its value, in ascending unsigned key order. */
    Iterator<Map.Entry<byte[], byte[]>> entries();

    /** Releases the pinned version. */
    @Override
    void close();
}
