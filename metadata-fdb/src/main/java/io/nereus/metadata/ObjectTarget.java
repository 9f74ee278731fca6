package io.nereus.metadata;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A byte range of a read-optimized object. {@code version} is the object store's identity of the exact
 * object written (S3 version id or ETag; the filesystem store's content digest or write id), so that an
 * object overwritten under the same key is never mistaken for the published one.
 *
 * @param key        object key, 1..{@value #MAX_KEY_BYTES} bytes of UTF-8
 * @param byteOffset first byte of the range inside the object, {@code >= 0}
 * @param byteLength length of the range, {@code > 0}, with {@code byteOffset + byteLength <= objectSize}
 * @param objectSize size of the whole object in bytes
 * @param version    object version or ETag, 1..{@value #MAX_VERSION_BYTES} bytes of UTF-8
 */
public record ObjectTarget(String key, long byteOffset, long byteLength, long objectSize, String version)
        implements ReadTarget {
    /** S3's object key limit. */
    public static final int MAX_KEY_BYTES = 1024;
    public static final int MAX_VERSION_BYTES = 1024;

    public ObjectTarget {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(version, "version");
        int keyBytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (keyBytes == 0 || keyBytes > MAX_KEY_BYTES) {
            throw new IllegalArgumentException(
                    "object key must have 1.." + MAX_KEY_BYTES + " UTF-8 bytes, has " + keyBytes);
        }
        int versionBytes = version.getBytes(StandardCharsets.UTF_8).length;
        if (versionBytes == 0 || versionBytes > MAX_VERSION_BYTES) {
            throw new IllegalArgumentException(
                    "object version must have 1.." + MAX_VERSION_BYTES + " UTF-8 bytes, has " + versionBytes);
        }
        if (byteOffset < 0) {
            throw new IllegalArgumentException("object byte offset must be >= 0: " + byteOffset);
        }
        if (byteLength <= 0) {
            throw new IllegalArgumentException("object byte length must be > 0: " + byteLength);
        }
        if (objectSize < 0 || byteOffset > objectSize || byteLength > objectSize - byteOffset) {
            throw new IllegalArgumentException("object byte range [" + byteOffset + ", +" + byteLength
                    + ") exceeds object size " + objectSize + " of " + key);
        }
    }
}
