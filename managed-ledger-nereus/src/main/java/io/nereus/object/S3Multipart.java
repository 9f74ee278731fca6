package io.nereus.object;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * One multipart upload of a new object: create the upload (with the object's metadata), upload the parts,
 * {@value #PARTS_IN_FLIGHT} at a time, then complete it with {@code If-None-Match: *}, so the object appears whole
 * and only if its key is free. Any failure aborts the upload (best effort; a bucket lifecycle rule for incomplete
 * multipart uploads removes what a crash leaves), then fails with the first failure as the SDK reported it.
 */
final class S3Multipart {
    static final int PARTS_IN_FLIGHT = 4;
    /** S3's largest number of parts of one upload. */
    static final int MAX_PARTS = 10_000;
    private static final Logger LOG = LoggerFactory.getLogger(S3Multipart.class);

    private final S3AsyncClient client;
    private final String bucket;
    private final String key;
    private final ObjectContent content;
    private final long partBytes;
    private final Map<String, String> metadata;
    private final CompletedPart[] parts;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicBoolean failed = new AtomicBoolean();

    S3Multipart(S3AsyncClient client, String bucket, String key, ObjectContent content, long partBytes,
            Map<String, String> metadata) {
        this.client = client;
        this.bucket = bucket;
        this.key = key;
        this.content = content;
        this.partBytes = partBytes;
        this.metadata = metadata;
        this.parts = new CompletedPart[partCount(content.length(), partBytes)];
    }

    /** Parts of {@code partBytes} (the last one smaller) that hold {@code length} bytes. */
    static int partCount(long length, long partBytes) {
        return (int) Math.min(Integer.MAX_VALUE, (length + partBytes - 1) / partBytes);
    }

    CompletableFuture<CompleteMultipartUploadResponse> run() {
        return client.createMultipartUpload(b -> b.bucket(bucket).key(key).metadata(metadata))
                .thenCompose(created -> {
                    String uploadId = created.uploadId();
                    return uploadParts(uploadId)
                            .thenCompose(v -> client.completeMultipartUpload(b -> b.bucket(bucket).key(key)
                                    .uploadId(uploadId).ifNoneMatch("*")
                                    .multipartUpload(u -> u.parts(List.of(parts)))))
                            .handle((done, t) -> t == null ? CompletableFuture.completedFuture(done)
                                    : abort(uploadId).thenCompose(v -> CompletableFuture
                                            .<CompleteMultipartUploadResponse>failedFuture(t)))
                            .thenCompose(f -> f);
                });
    }

    private CompletableFuture<Void> uploadParts(String uploadId) {
        CompletableFuture<?>[] lanes = new CompletableFuture<?>[Math.min(PARTS_IN_FLIGHT, parts.length)];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = lane(uploadId);
        }
        return CompletableFuture.allOf(lanes);
    }

    /** Uploads the next part not yet taken, then the next, until none is left or one failed. */
    private CompletableFuture<Void> lane(String uploadId) {
        int index = next.getAndIncrement();
        if (index >= parts.length || failed.get()) {
            return CompletableFuture.completedFuture(null);
        }
        long offset = index * partBytes;
        long length = Math.min(partBytes, content.length() - offset);
        int partNumber = index + 1;
        return client.uploadPart(b -> b.bucket(bucket).key(key).uploadId(uploadId).partNumber(partNumber)
                        .contentLength(length), S3ObjectStore.body(content, offset, length))
                .whenComplete((r, t) -> {
                    if (t != null) {
                        failed.set(true);
                    }
                })
                .thenCompose(r -> {
                    parts[index] = completed(partNumber, r);
                    return lane(uploadId);
                });
    }

    private static CompletedPart completed(int partNumber, UploadPartResponse r) {
        return CompletedPart.builder().partNumber(partNumber).eTag(r.eTag()).checksumCRC32(r.checksumCRC32())
                .checksumCRC32C(r.checksumCRC32C()).checksumCRC64NVME(r.checksumCRC64NVME())
                .checksumSHA1(r.checksumSHA1()).checksumSHA256(r.checksumSHA256()).build();
    }

    private CompletableFuture<Void> abort(String uploadId) {
        return client.abortMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(uploadId)).handle((r, t) -> {
            if (t != null) {
                LOG.warn("Multipart upload not aborted bucket={} key={} uploadId={}: {}", bucket, key, uploadId,
                        ObjectErrors.describe(t));
            }
            return null;
        });
    }
}
