package io.nereus.object;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where read-optimized objects live: a flat namespace of immutable objects, each created whole under a new
 * {@link ObjectName} and never overwritten. Implementations: {@link FilesystemObjectStore} (the embedded default)
 * and {@link S3ObjectStore}; both pass one contract test suite.
 *
 * <p>Guarantees: an object is visible whole or not at all (a reader or a listing never sees a partly written
 * object, also after a crash of the writer); a put of a name that exists fails and leaves the existing object
 * untouched, also when two puts of one name race (exactly one wins); once a put's future completes the object
 * is durable and every later get and listing sees it. Objects are garbage until the metadata references them:
 * writing an object is never publication.
 *
 * <p>Failures: every method returns a future and never throws. A bad argument (null, a range too long for one
 * array) fails it with {@link IllegalArgumentException} or {@link NullPointerException}; anything else with an
 * {@link io.nereus.error.NereusException} whose code each method names, plus OBJECT_STORE_REFUSED (the store
 * refuses the request whatever its retries: access denied, no bucket, an unsupported request) and
 * RETRIABLE_OBJECT_STORE_FAILED (a transient failure: an I/O error, the network, a throttled server), and CLOSED
 * after {@link #close()}. The context names the object.
 *
 * <p>Threads: futures complete on the store's own threads (the filesystem store's I/O threads, the S3 client's
 * response threads); dependent actions must not block them. A store is safe for use by many threads.
 */
public interface ObjectStore extends AutoCloseable {
    /** Largest range one {@link #get} returns: the largest Java array. */
    long MAX_GET_LENGTH = Integer.MAX_VALUE - 8;

    /**
     * Creates the object {@code name} holding {@code content}. Fails with OBJECT_EXISTS when an object of that
     * name exists (the existing one stays as it was); in the filesystem store also when the name clashes with a
     * directory of other names ({@code a} and {@code a/b} cannot both exist there, so callers use names of a
     * fixed depth). A put that failed otherwise may or may not have created the object; callers put under a new
     * name and leave the other to garbage collection. Large contents are written in parts (S3 multipart upload)
     * and still appear at once. A file's content ({@link ObjectContent#ofFile}) is read in bounded pieces, never
     * whole into memory; a file shorter than the content's length fails the put (RETRIABLE_OBJECT_STORE_FAILED in
     * the filesystem store).
     */
    CompletableFuture<StoredObject> putNew(ObjectName name, ObjectContent content);

    /**
     * The bytes {@code range} of the object {@code name}. Fails with TARGET_MISSING when there is no such object
     * and with RANGE_NOT_SATISFIABLE when the range ends beyond the object's end. An empty range within the object
     * (offset at most its size) returns no bytes; the object must still exist.
     */
    CompletableFuture<byte[]> get(ObjectName name, ByteRange range);

    /**
     * As {@link #get}, in a buffer whose readable bytes are the range; the caller owns its one reference and
     * releases it. What a reader of object blocks uses: a store that can fills pooled direct memory (the filesystem
     * store), which leaves the garbage collector nothing to collect per block read; by default the array of
     * {@link #get}, wrapped without a copy.
     */
    default CompletableFuture<ByteBuf> getBuffer(ObjectName name, ByteRange range) {
        return get(name, range).thenApply(Unpooled::wrappedBuffer);
    }

    /**
     * Removes the object {@code name}. Idempotent: removing an object that does not exist succeeds, so a
     * collection step that crashed can simply be repeated. A name may be put again after its removal.
     */
    CompletableFuture<Void> delete(ObjectName name);

    /**
     * Every object whose name starts with {@code prefix} (plain text, not only whole segments: {@code "s/1"}
     * matches {@code s/1/x} and {@code s/10/y}; the empty prefix matches all), sorted by name, with sizes and
     * modification times. Complete, however many objects match (S3 pages are followed), so callers keep
     * prefixes narrow. An object put or removed while the listing runs may or may not be in it. Fails with
     * {@link IllegalArgumentException} when no valid name can start with {@code prefix}
     * ({@link ObjectName#isValidPrefix}).
     */
    CompletableFuture<List<ObjectInfo>> list(String prefix);

    /**
     * Stops the store: later calls fail with CLOSED, calls in flight complete or fail, resources are released.
     * Idempotent; does not throw.
     */
    @Override
    void close();
}
