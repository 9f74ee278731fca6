package io.nereus.object;

/**
 * Every test of {@link FilesystemObjectStoreTest} on a store that goes through the page cache
 * ({@code nereusObjectStoreDirectIo=false}, or a filesystem that refuses direct I/O).
 */
class FilesystemObjectStorePageCacheTest extends FilesystemObjectStoreTest {
    @Override
    boolean directIo() {
        return false;
    }
}
