package io.nereus.object;

import java.time.Instant;
import java.util.Objects;

/**
 * An object as a listing reports it.
 *
 * @param name         its name
 * @param size         its size in bytes, {@code >= 0}
 * @param lastModified when it was written, as the store records it (the file's modification time; S3's
 *                     {@code LastModified}, whole seconds)
 */
public record ObjectInfo(ObjectName name, long size, Instant lastModified) {
    public ObjectInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(lastModified, "lastModified");
        if (size < 0) {
            throw new IllegalArgumentException("object size must be >= 0: " + size);
        }
    }
}
