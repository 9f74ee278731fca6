package io.nereus.fdb.embedded;

import java.util.Iterator;
import java.util.Map;

/** A consistent view of the whole key space, kept readable until closed. */
interface StateSnapshot extends AutoCloseable {
    Iterator<Map.Entry<byte[], byte[]>> entries();

    @Override
    void close();
}
