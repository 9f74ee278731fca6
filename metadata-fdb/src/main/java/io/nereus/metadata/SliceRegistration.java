package io.nereus.metadata;

import java.util.Objects;

/** The result of registering a new WAL slice ({@link WalSliceStore#register}). */
public sealed interface SliceRegistration {

    /** The slice is OPEN under the writer's lease (now, or by an earlier attempt of the same registration). */
    record Registered(WalSlice slice) implements SliceRegistration {
        public Registered {
            Objects.requireNonNull(slice, "slice");
        }
    }

    /**
     * Nothing was written: the writer's lease {@code incarnation} is gone (it closed, or others found it expired and
     * recovered its slices); the writer takes a new lease before it registers again.
     */
    record LeaseGone(long incarnation) implements SliceRegistration {
    }

    /** Nothing was written: the slice id is already recorded, for another writer or no longer OPEN. */
    record Taken(WalSlice existing) implements SliceRegistration {
        public Taken {
            Objects.requireNonNull(existing, "existing");
        }
    }
}
