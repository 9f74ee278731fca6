package io.nereus.object;

import java.util.concurrent.CompletableFuture;

/** Opens the object store a configuration names. */
public final class ObjectStores {
    private ObjectStores() {
    }

    /**
     * The store of {@code config}, open and checked (see {@link FilesystemObjectStore#open} and
     * {@link S3ObjectStore#open} for what each checks and how it fails).
     */
    public static CompletableFuture<ObjectStore> open(ObjectStoreConfig config) {
        if (config instanceof ObjectStoreConfig.Filesystem f) {
            return FilesystemObjectStore.open(f).thenApply(s -> s);
        }
        if (config instanceof ObjectStoreConfig.S3 s) {
            return S3ObjectStore.open(s).thenApply(x -> x);
        }
        return CompletableFuture.failedFuture(new NullPointerException("config"));
    }
}
