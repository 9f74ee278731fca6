package io.nereus.metadata;

import java.util.Objects;

/**
 * What {@link CollectionStore#markCollecting} found and did.
 * <ul>
 *   <li>{@link Collecting}: the slice is COLLECTING (moved now, or already): no record of the lookup or FALLBACK
 *       spaces targets it, generation-0 repair refuses it, and its ledger may be deleted after the grace period;</li>
 *   <li>{@link Held}: a record still targets it; nothing written;</li>
 *   <li>{@link NotSealed}: the slice is OPEN; nothing written;</li>
 *   <li>{@link Gone}: there is no such slice (never registered, or collected to the end).</li>
 * </ul>
 */
public sealed interface SliceCollection {
    record Collecting(WalSlice slice) implements SliceCollection {
        public Collecting {
            Objects.requireNonNull(slice, "slice");
        }
    }

    record Held(SliceHold hold) implements SliceCollection {
        public Held {
            Objects.requireNonNull(hold, "hold");
        }
    }

    record NotSealed(WalSlice slice) implements SliceCollection {
        public NotSealed {
            Objects.requireNonNull(slice, "slice");
        }
    }

    record Gone() implements SliceCollection {
    }
}
