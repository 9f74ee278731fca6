package io.nereus.fdb.embedded;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The {@link VersionedStore}'s hash index: its slots by key content, in an open-addressing table (linear probing,
 * a power-of-two capacity) changed by one writer and read by any number of readers without locks.
 *
 * <p>Why not a {@link java.util.concurrent.ConcurrentHashMap}: a broker's store holds a key per generation-0 index
 * record, a million or more, and the map spent a node and a key wrapper on each (about 60 bytes and two objects a
 * key, plus a wrapper allocated for every lookup); the garbage collector marks all of them in every cycle. Here a key
 * costs one array cell.
 *
 * <p>Readers take the current array and probe it; the writer publishes every cell with a release store, so a reader
 * that finds a slot sees it whole. A removed slot's cell becomes {@link #TOMBSTONE}, which probes pass over. When
 * live slots and tombstones fill half the array, the writer copies the live slots into a new array (large enough
 * that they fill at most a quarter of it; every probe reads a slot, so the table stays sparse) and publishes it; the
 * old array is not changed after that, so a reader still probing it sees every key written before it took the array.
 */
final class SlotTable {
    private static final VarHandle CELLS = MethodHandles.arrayElementVarHandle(VersionedStore.Slot[].class);
    private static final VersionedStore.Slot TOMBSTONE = new VersionedStore.Slot(Bytes.EMPTY, 0, 0, null);
    private static final int INITIAL_CAPACITY = 1024;

    private volatile VersionedStore.Slot[] cells = new VersionedStore.Slot[INITIAL_CAPACITY];
    /** Cells holding a slot or a tombstone; writer only. */
    private int used;
    /** Cells holding a slot; writer only. */
    private int live;

    /** The slot of {@code key} ({@code hash} is {@link Bytes#hash} of it), or {@code null}; any thread. */
    VersionedStore.Slot get(byte[] key, int hash) {
        VersionedStore.Slot[] t = cells;
        int mask = t.length - 1;
        for (int i = hash & mask; ; i = (i + 1) & mask) {
            VersionedStore.Slot s = (VersionedStore.Slot) CELLS.getAcquire(t, i);
            if (s == null) {
                return null;
            }
            if (s != TOMBSTONE && s.hash == hash && Arrays.equals(s.key, key)) {
                return s;
            }
        }
    }

    /** Adds {@code slot}, whose key the table does not hold; writer only. */
    void add(VersionedStore.Slot slot) {
        if ((used + 1) * 2L > cells.length) {
            rebuild();
        }
        VersionedStore.Slot[] t = cells;
        int mask = t.length - 1;
        for (int i = slot.hash & mask; ; i = (i + 1) & mask) {
            Object s = t[i];
            if (s == null || s == TOMBSTONE) {
                if (s == null) {
                    used++;
                }
                live++;
                CELLS.setRelease(t, i, slot);
                return;
            }
        }
    }

    /** Removes {@code slot} (this very object) if present; writer only. */
    void remove(VersionedStore.Slot slot) {
        VersionedStore.Slot[] t = cells;
        int mask = t.length - 1;
        for (int i = slot.hash & mask; ; i = (i + 1) & mask) {
            Object s = t[i];
            if (s == null) {
                return;
            }
            if (s == slot) {
                CELLS.setRelease(t, i, TOMBSTONE);
                live--;
                return;
            }
        }
    }

    /** Slots held. */
    int size() {
        return live;
    }

    /** Copies the live slots into a fresh array, dropping tombstones, and publishes it; writer only. */
    private void rebuild() {
        VersionedStore.Slot[] old = cells;
        int capacity = old.length;
        while ((live + 1) * 4L > capacity) {
            capacity *= 2;
        }
        VersionedStore.Slot[] t = new VersionedStore.Slot[capacity];
        int mask = capacity - 1;
        for (VersionedStore.Slot s : old) {
            if (s != null && s != TOMBSTONE) {
                int i = s.hash & mask;
                while (t[i] != null) {
                    i = (i + 1) & mask;
                }
                t[i] = s;
            }
        }
        used = live;
        cells = t; // the volatile write publishes the whole array
    }
}
