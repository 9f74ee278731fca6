package io.nereus.generation;

import io.nereus.metadata.StreamId;
import java.util.concurrent.CompletableFuture;

/** Bounded repair of a missing generation-0 index record (DESIGN §5). */
public interface GenerationZeroRepair {

    /** What a repair attempt established. */
    sealed interface Outcome {
        /** A generation-0 record covering the offset is in the index again. */
        record Repaired() implements Outcome {
        }

        /** The offset is below the trim point. */
        record ProvedTrimmed(long firstAvailable) implements Outcome {
        }

        /** Budget or time ran out; nothing may be concluded. */
        record Incomplete(String why) implements Outcome {
        }

        /** No WAL evidence for a committed offset was found within the slices the intents name. */
        record NoEvidence() implements Outcome {
        }
    }

    CompletableFuture<Outcome> repair(StreamId stream, long offset);

    /** A repair that never finds anything; for views or tests without repair. */
    GenerationZeroRepair NONE = (stream, offset) -> CompletableFuture.completedFuture(new Outcome.NoEvidence());
}
