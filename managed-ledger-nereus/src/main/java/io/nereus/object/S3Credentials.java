package io.nereus.object;

import java.util.Objects;

/**
 * Static S3 credentials. {@link #toString()} hides both parts, so the value can be logged with its owner.
 *
 * @param accessKeyId     the access key id, not blank
 * @param secretAccessKey the secret access key, not blank
 */
public record S3Credentials(String accessKeyId, String secretAccessKey) {
    public S3Credentials {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        Objects.requireNonNull(secretAccessKey, "secretAccessKey");
        if (accessKeyId.isBlank() || secretAccessKey.isBlank()) {
            throw new IllegalArgumentException("S3 access key id and secret access key must not be blank");
        }
    }

    @Override
    public String toString() {
        return "S3Credentials[accessKeyId=(hidden), secretAccessKey=(hidden)]";
    }
}
