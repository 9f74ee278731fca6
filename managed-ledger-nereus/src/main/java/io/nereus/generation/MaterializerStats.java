package io.nereus.generation;

/**
 * Counters of one materializer since its storage instance started, and its backlog at the last pass.
 *
 * @param objectsPublished      objects published from generation 0 (merges not counted)
 * @param mergesPublished       objects published by merging smaller objects of one stream
 * @param entriesPublished      entries in the published objects (merges included)
 * @param bytesPublished        payload bytes in the published objects (merges included)
 * @param refusedPublications   publications the index refused (source changed, trimmed, deleted); their objects
 *                              were deleted
 * @param failedSteps           steps that failed (read, write, verify or transaction failure) and are retried on a
 *                              later pass
 * @param pendingSlices         sealed slices this instance owns that still hold unmaterialized ranges, at the last
 *                              pass
 * @param completedSlices       sealed slices known to hold nothing left to materialize
 * @param lastPublishedMillis   wall-clock time of the last publication, 0 when none
 * @param bytesSpilled          bytes written to spill files: the entries of the streams of a slice that did not fit
 *                              in the materializer's memory, each read back once for its object
 */
public record MaterializerStats(long objectsPublished, long mergesPublished, long entriesPublished,
        long bytesPublished, long refusedPublications, long failedSteps, int pendingSlices, int completedSlices,
        long lastPublishedMillis, long bytesSpilled) {
}
