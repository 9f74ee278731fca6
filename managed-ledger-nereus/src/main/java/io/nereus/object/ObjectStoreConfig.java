package io.nereus.object;

import java.net.URI;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Which object store a storage instance uses, and its settings; immutable and validated. Opened by
 * {@link ObjectStores#open}.
 */
public sealed interface ObjectStoreConfig {

    /**
     * The {@link FilesystemObjectStore} in {@code dir}.
     *
     * @param dir       the store's directory, created if missing (relative: to the working directory)
     * @param ioThreads the threads that run its blocking file I/O, at most ({@code >= 1})
     * @param directIo  whether to write and read its files with direct I/O ({@code O_DIRECT}, past the page cache)
     *                  where the filesystem allows it; otherwise through the page cache
     */
    record Filesystem(Path dir, int ioThreads, boolean directIo) implements ObjectStoreConfig {
        /** I/O threads of the filesystem store unless said otherwise. */
        public static final int DEFAULT_IO_THREADS = 4;

        public Filesystem {
            Objects.requireNonNull(dir, "dir");
            if (ioThreads < 1) {
                throw new IllegalArgumentException("ioThreads must be >= 1: " + ioThreads);
            }
        }

        public static Filesystem of(Path dir) {
            return new Filesystem(dir, DEFAULT_IO_THREADS, true);
        }

        @Override
        public String toString() {
            return "filesystem at " + dir;
        }
    }

    /**
     * The {@link S3ObjectStore}: objects are the keys {@code prefix/name} of {@code bucket} (just {@code name}
     * with an empty prefix).
     *
     * @param bucket      the bucket, which must exist: 3 to 63 lowercase letters, digits, dots and hyphens,
     *                    starting and ending with a letter or digit
     * @param prefix      empty, or segments like an object name's ({@link ObjectName}) without a leading or
     *                    trailing {@code /}, at most {@value #MAX_PREFIX_LENGTH} characters
     * @param endpoint    the server's {@code http} or {@code https} URL; empty: AWS S3's endpoint of the region
     * @param region      the region requests are signed for (S3-compatible servers mostly accept any)
     * @param pathStyle   requests address the bucket in the path ({@code endpoint/bucket/key}), as most
     *                    S3-compatible servers need, instead of the host name ({@code bucket.endpoint/key})
     * @param credentials static keys; empty: the AWS SDK's default chain (environment, system properties,
     *                    profile files, container or instance role)
     * @param partBytes   an object larger than this is uploaded in parts of this size (the last one smaller);
     *                    {@value #MIN_PART_BYTES} (S3's smallest part) to {@value #MAX_PART_BYTES}
     */
    record S3(String bucket, String prefix, Optional<URI> endpoint, String region, boolean pathStyle,
            Optional<S3Credentials> credentials, long partBytes) implements ObjectStoreConfig {
        public static final int MAX_PREFIX_LENGTH = 511;
        public static final long MIN_PART_BYTES = 5L << 20;
        public static final long MAX_PART_BYTES = 5L << 30;
        public static final long DEFAULT_PART_BYTES = 8L << 20;
        private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");
        private static final Pattern REGION = Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*");

        public S3 {
            Objects.requireNonNull(bucket, "bucket");
            Objects.requireNonNull(prefix, "prefix");
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(region, "region");
            Objects.requireNonNull(credentials, "credentials");
            if (!validBucket(bucket)) {
                throw new IllegalArgumentException("invalid S3 bucket name: '" + bucket + "'");
            }
            if (!validPrefix(prefix)) {
                throw new IllegalArgumentException("invalid S3 key prefix: '" + prefix + "'");
            }
            endpoint.ifPresent(u -> {
                if (!validEndpoint(u)) {
                    throw new IllegalArgumentException("invalid S3 endpoint: '" + u + "'");
                }
            });
            if (!validRegion(region)) {
                throw new IllegalArgumentException("invalid S3 region: '" + region + "'");
            }
            if (partBytes < MIN_PART_BYTES || partBytes > MAX_PART_BYTES) {
                throw new IllegalArgumentException("S3 part size must be " + MIN_PART_BYTES + " to " + MAX_PART_BYTES
                        + " bytes: " + partBytes);
            }
        }

        public static boolean validBucket(String bucket) {
            return BUCKET.matcher(bucket).matches() && !bucket.contains("..");
        }

        public static boolean validPrefix(String prefix) {
            return prefix.isEmpty() || (prefix.length() <= MAX_PREFIX_LENGTH && ObjectName.isValid(prefix));
        }

        public static boolean validRegion(String region) {
            return REGION.matcher(region).matches();
        }

        /** An absolute {@code http} or {@code https} URL with a host, no query or fragment. */
        public static boolean validEndpoint(URI uri) {
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            return (scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null
                    && uri.getRawQuery() == null && uri.getRawFragment() == null;
        }

        /** {@code s3://bucket/prefix at endpoint}, without credentials. */
        @Override
        public String toString() {
            return "s3://" + bucket + "/" + prefix + " at " + endpoint.map(URI::toString).orElse("AWS S3 " + region)
                    + (pathStyle ? " (path-style)" : "") + ", credentials "
                    + (credentials.isPresent() ? "static" : "from the default chain");
        }
    }
}
