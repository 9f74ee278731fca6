package io.nereus.generation;

import io.nereus.wal.SliceMirrors;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the materializer ({@link Materializer}); immutable and validated.
 *
 * @param enabled            whether sealed slices are materialized in the background; offload requests work either
 *                           way
 * @param objectTargetBytes  payload bytes one object holds at most (an entry larger than that makes an object of
 *                           its own)
 * @param blockBytes         stored bytes of one block of an object: what a read of one entry fetches
 * @param interval           pause between background passes over the sealed slices after a pass that published no
 *                           objects of slices (one that did is followed by the next at once)
 * @param maxBytesPerSecond  payload bytes the materializer reads from WAL slices per second at most, and writes as
 *                           objects at most, so it never starves appends
 * @param mergeMinObjects    consecutive small objects of one stream (each under a quarter of
 *                           {@code objectTargetBytes}) that are merged into one larger generation
 * @param blockCacheBytes    stored bytes of object blocks kept in memory for readers
 * @param readAheadBlocks    blocks of an object fetched into that cache ahead of a reader going through it in order,
 *                           beyond those of its current read ({@link io.nereus.object.BlockCache}; 0: nothing fetched
 *                           ahead, a read's blocks one after another)
 * @param mirrorBytes        bytes of local files holding copies of this broker's newest WAL slices until they are
 *                           materialized, read instead of the bookies ({@link io.nereus.wal.SliceMirrors}; 0: none)
 * @param mirrorStagingBytes direct memory the mirrors' writes go through on their way to the disk, in staging buffers
 *                           of {@link io.nereus.wal.SliceMirrors#STAGING_BYTES} (a whole number of them, at least
 *                           one): what rides out the disk's stalls before the mirrors skip batches
 */
public record MaterializerConfig(boolean enabled, long objectTargetBytes, int blockBytes, Duration interval,
        long maxBytesPerSecond, int mergeMinObjects, long blockCacheBytes, int readAheadBlocks, long mirrorBytes,
        long mirrorStagingBytes) {
    /** Largest object a materializer writes; objects are encoded in one array. */
    public static final long MAX_OBJECT_TARGET_BYTES = 1L << 30;

    public MaterializerConfig {
        Objects.requireNonNull(interval, "interval");
        if (objectTargetBytes < 1 || objectTargetBytes > MAX_OBJECT_TARGET_BYTES) {
            throw new IllegalArgumentException("object target bytes must be in 1.." + MAX_OBJECT_TARGET_BYTES + ": "
                    + objectTargetBytes);
        }
        if (blockBytes < 1) {
            throw new IllegalArgumentException("object block bytes must be >= 1: " + blockBytes);
        }
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("materializer interval must be > 0: " + interval);
        }
        if (maxBytesPerSecond < 1) {
            throw new IllegalArgumentException("materializer bytes per second must be >= 1: " + maxBytesPerSecond);
        }
        if (mergeMinObjects < 2) {
            throw new IllegalArgumentException("objects merged at once must be >= 2: " + mergeMinObjects);
        }
        if (blockCacheBytes < 0) {
            throw new IllegalArgumentException("object block cache bytes must be >= 0: " + blockCacheBytes);
        }
        if (readAheadBlocks < 0) {
            throw new IllegalArgumentException("object blocks read ahead must be >= 0: " + readAheadBlocks);
        }
        if (mirrorBytes < 0) {
            throw new IllegalArgumentException("WAL slice mirror bytes must be >= 0: " + mirrorBytes);
        }
        if (!SliceMirrors.validStagingBytes(mirrorStagingBytes)) {
            throw new IllegalArgumentException("WAL slice mirror staging bytes must be a positive multiple of "
                    + SliceMirrors.STAGING_BYTES + " (one staging buffer): " + mirrorStagingBytes);
        }
    }

    /**
     * Defaults: enabled, 64 MiB objects of 1 MiB blocks, a pass every 30 s, at most 64 MiB/s, merge 8 small
     * objects, 64 MiB block cache, 4 blocks read ahead, 4 GiB of WAL slice mirrors (the slice being written and
     * three waiting, at the WAL's default slice size) written through 128 MiB of staging buffers.
     */
    public static MaterializerConfig defaults() {
        return new MaterializerConfig(true, 64L << 20, 1 << 20, Duration.ofSeconds(30), 64L << 20, 8, 64L << 20, 4,
                4L << 30, 128L << 20);
    }

    public MaterializerConfig withEnabled(boolean on) {
        return new MaterializerConfig(on, objectTargetBytes, blockBytes, interval, maxBytesPerSecond,
                mergeMinObjects, blockCacheBytes, readAheadBlocks, mirrorBytes, mirrorStagingBytes);
    }

    public MaterializerConfig withObjects(long targetBytes, int blockBytes) {
        return new MaterializerConfig(enabled, targetBytes, blockBytes, interval, maxBytesPerSecond, mergeMinObjects,
                blockCacheBytes, readAheadBlocks, mirrorBytes, mirrorStagingBytes);
    }

    public MaterializerConfig withInterval(Duration every) {
        return new MaterializerConfig(enabled, objectTargetBytes, blockBytes, every, maxBytesPerSecond,
                mergeMinObjects, blockCacheBytes, readAheadBlocks, mirrorBytes, mirrorStagingBytes);
    }

    public MaterializerConfig withMergeMinObjects(int n) {
        return new MaterializerConfig(enabled, objectTargetBytes, blockBytes, interval, maxBytesPerSecond, n,
                blockCacheBytes, readAheadBlocks, mirrorBytes, mirrorStagingBytes);
    }

    public MaterializerConfig withMirrorBytes(long bytes) {
        return new MaterializerConfig(enabled, objectTargetBytes, blockBytes, interval, maxBytesPerSecond,
                mergeMinObjects, blockCacheBytes, readAheadBlocks, bytes, mirrorStagingBytes);
    }

    /** Objects under this many payload bytes count as small and are merged. */
    public long smallObjectBytes() {
        return Math.max(1, objectTargetBytes / 4);
    }
}
