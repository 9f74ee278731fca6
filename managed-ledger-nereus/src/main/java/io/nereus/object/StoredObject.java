package io.nereus.object;

import java.util.Objects;

/**
 * An object a put has just created.
 *
 * @param name    its name
 * @param size    its size in bytes
 * @param version the store's identity of the bytes written, for a target that records it
 *                ({@code io.nereus.metadata.ObjectTarget#version}): S3's ETag, the filesystem store's
 *                {@code crc32c:} and the content's CRC32C as 8 hex digits. Opaque, non-empty.
 */
public record StoredObject(ObjectName name, long size, String version) {
    public StoredObject {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(version, "version");
        if (size < 0) {
            throw new IllegalArgumentException("object size must be >= 0: " + size);
        }
        if (version.isEmpty()) {
            throw new IllegalArgumentException("object version must not be empty");
        }
    }
}
