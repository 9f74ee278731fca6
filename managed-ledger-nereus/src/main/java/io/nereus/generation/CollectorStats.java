package io.nereus.generation;

import io.nereus.metadata.MetadataCensus;
import java.util.Optional;

/**
 * What this instance's garbage collector has done since it started, and the last census of the metadata.
 *
 * @param passes          passes completed
 * @param slicesHeld      sealed slices the last pass found still holding data that is nowhere else
 * @param slicesCollected WAL slices whose ledger was deleted and records forgotten
 * @param objectsDeleted  stream objects deleted that only RETIRED records named (merged, trimmed)
 * @param orphansDeleted  stream objects deleted that no record named (never published, or of a purged stream)
 * @param streamsPurged   deleted streams whose objects and keys are gone
 * @param failedSteps     steps that failed and are tried again next pass
 * @param census          the last census, empty before the first
 */
public record CollectorStats(long passes, int slicesHeld, long slicesCollected, long objectsDeleted,
        long orphansDeleted, long streamsPurged, long failedSteps, Optional<MetadataCensus> census) {
}
