package io.nereus.generation;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The latest record of each key seen by a compaction's phase one: key to (offset of its entry, slot in the entry).
 * Its size is the number of live keys, whatever the number of entries read; this is the only state a compaction
 * keeps that grows with the topic. Confined to the compactor's thread.
 */
public final class KeyTable {
    /** Where a key's latest record is: the entry at {@code offset}, record {@code slot} in it. */
    private record Latest(long offset, int slot) {
    }

    private final Map<String, Latest> latest = new HashMap<>();

    /** Records that {@code key}'s latest value is record {@code slot} of the entry at {@code offset}. */
    public void put(String key, long offset, int slot) {
        latest.put(Objects.requireNonNull(key, "key"), new Latest(offset, slot));
    }

    /** Records that {@code key} was deleted: no record of it is kept. */
    public void remove(String key) {
        latest.remove(Objects.requireNonNull(key, "key"));
    }

    /** True when record {@code slot} of the entry at {@code offset} is the latest value of {@code key}. */
    public boolean isLatest(String key, long offset, int slot) {
        Latest l = latest.get(key);
        return l != null && l.offset() == offset && l.slot() == slot;
    }

    /** Keys with a live value. */
    public int size() {
        return latest.size();
    }
}
