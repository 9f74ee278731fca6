package io.nereus.object;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * An object store in memory for the simulation: the {@link ObjectStore} contract (put-new, ranged get, idempotent
 * delete, sorted listing), modification times from the simulation's clock, every call completed on the caller's
 * thread. Thread-safe.
 */
public final class SimObjectStore implements ObjectStore {
    private record Stored(byte[] bytes, Instant modified) {
    }

    private final Clock clock;
    private final TreeMap<String, Stored> objects = new TreeMap<>();
    private boolean closed;

    public SimObjectStore(Clock clock) {
        this.clock = clock;
    }

    @Override
    public synchronized CompletableFuture<StoredObject> putNew(ObjectName name, ObjectContent content) {
        if (closed) {
            return closed(name);
        }
        if (objects.containsKey(name.value())) {
            return CompletableFuture.failedFuture(
                    new NereusException(ErrorCode.OBJECT_EXISTS, Map.of("object", name.value())));
        }
        byte[] bytes = new byte[(int) content.length()];
        if (content.file().isPresent()) {
            try (java.io.InputStream in = java.nio.file.Files.newInputStream(content.file().get())) {
                if (in.readNBytes(bytes, 0, bytes.length) < bytes.length) {
                    throw new java.io.IOException("content file shorter than its length");
                }
            } catch (java.io.IOException e) {
                return CompletableFuture.failedFuture(new NereusException(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED,
                        Map.of("object", name.value())));
            }
            objects.put(name.value(), new Stored(bytes, clock.instant()));
            return CompletableFuture.completedFuture(new StoredObject(name, bytes.length, "v1"));
        }
        int at = 0;
        for (ByteBuffer b : content.buffers()) {
            int n = b.remaining();
            b.get(bytes, at, n);
            at += n;
        }
        objects.put(name.value(), new Stored(bytes, clock.instant()));
        return CompletableFuture.completedFuture(new StoredObject(name, bytes.length, "v1"));
    }

    @Override
    public synchronized CompletableFuture<byte[]> get(ObjectName name, ByteRange range) {
        if (closed) {
            return closed(name);
        }
        Stored s = objects.get(name.value());
        if (s == null) {
            return CompletableFuture.failedFuture(
                    new NereusException(ErrorCode.TARGET_MISSING, Map.of("object", name.value())));
        }
        if (range.offset() + range.length() > s.bytes.length) {
            return CompletableFuture.failedFuture(
                    new NereusException(ErrorCode.RANGE_NOT_SATISFIABLE, Map.of("object", name.value())));
        }
        byte[] out = new byte[(int) range.length()];
        System.arraycopy(s.bytes, (int) range.offset(), out, 0, out.length);
        return CompletableFuture.completedFuture(out);
    }

    @Override
    public synchronized CompletableFuture<Void> delete(ObjectName name) {
        if (closed) {
            return closed(name);
        }
        objects.remove(name.value());
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public synchronized CompletableFuture<List<ObjectInfo>> list(String prefix) {
        if (closed) {
            return closed(null);
        }
        List<ObjectInfo> out = new ArrayList<>();
        for (Map.Entry<String, Stored> e : objects.tailMap(prefix, true).entrySet()) {
            if (!e.getKey().startsWith(prefix)) {
                break;
            }
            out.add(new ObjectInfo(ObjectName.of(e.getKey()), e.getValue().bytes.length, e.getValue().modified));
        }
        return CompletableFuture.completedFuture(out);
    }

    /** Objects stored now. */
    public synchronized int size() {
        return objects.size();
    }

    @Override
    public synchronized void close() {
        closed = true;
    }

    private static <T> CompletableFuture<T> closed(ObjectName name) {
        return CompletableFuture.failedFuture(new NereusException(ErrorCode.CLOSED,
                name == null ? Map.of() : Map.of("object", name.value())));
    }
}
