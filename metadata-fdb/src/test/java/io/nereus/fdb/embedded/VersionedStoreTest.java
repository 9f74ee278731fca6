package io.nereus.fdb.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The versioned store against a model of every key's history: what a read at any version inside the window sees,
 * and what pruning keeps.
 */
class VersionedStoreTest {
    private static final int KEYS = 12;

    /** A key's history in the model: its entries by version, a {@code null} value a deletion. */
    private static final class History {
        final TreeMap<Long, byte[]> entries = new TreeMap<>();

        byte[] at(long version) {
            Map.Entry<Long, byte[]> e = entries.floorEntry(version);
            return e == null ? null : e.getValue();
        }

        /** Keeps the newest entry at or below {@code cutoff} and all after it; true when nothing is left. */
        boolean pruneTo(long cutoff) {
            Long keep = entries.floorKey(cutoff);
            if (keep != null) {
                entries.headMap(keep, false).clear();
                if (entries.size() == 1 && entries.get(keep) == null) {
                    entries.clear();
                }
            }
            return entries.isEmpty();
        }
    }

    @Test
    void readsAtEveryVersionInsideTheWindow_matchTheModel_throughGrowthReplacementAndPruning() {
        Random random = new Random(11);
        VersionedStore store = new VersionedStore();
        Map<Integer, History> model = new HashMap<>();
        long version = 1;
        long cutoff = 0;
        for (int commit = 0; commit < 20_000; commit++) {
            // a commit writes a few keys, some twice (the second write replaces the first within the version)
            int writes = 1 + random.nextInt(4);
            for (int w = 0; w < writes; w++) {
                int k = random.nextInt(KEYS);
                byte[] value = randomValue(random, k);
                History h = model.computeIfAbsent(k, x -> new History());
                if (value == null) {
                    VersionedStore.Slot s = store.clearKey(version, key(k));
                    boolean held = h.at(Long.MAX_VALUE) != null;
                    assertThat(s != null).as("clear of key %s at %s wrote a deletion", k, version).isEqualTo(held);
                    if (held) {
                        h.entries.put(version, null);
                    }
                } else {
                    store.set(version, key(k), value);
                    h.entries.put(version, value.clone());
                }
            }
            if (random.nextInt(4) == 0 && version - cutoff > 2) {
                cutoff += 1 + random.nextInt((int) (version - cutoff - 1));
                store.prune(cutoff);
                long c = cutoff;
                model.values().removeIf(h -> h.pruneTo(c));
            }
            if (commit % 7 == 0) {
                checkReads(store, model, cutoff, version, random);
            }
            version += 1 + random.nextInt(2);
        }
        checkReads(store, model, cutoff, version, random);
        // a prune to the newest version leaves every key its newest entry alone, as the model
        store.prune(version);
        long c = version;
        model.values().removeIf(h -> h.pruneTo(c));
        checkReads(store, model, version, version, random);
        assertThat(store.versionEntries()).as("entries held after a prune to the newest version")
                .isEqualTo(model.values().stream().mapToLong(h -> h.entries.size()).sum());
    }

    private static void checkReads(VersionedStore store, Map<Integer, History> model, long cutoff, long version,
            Random random) {
        long entries = 0;
        for (int k = 0; k < KEYS; k++) {
            History h = model.get(k);
            entries += h == null ? 0 : h.entries.size();
            for (int probe = 0; probe < 4; probe++) {
                long at = cutoff + (long) (random.nextDouble() * (version - cutoff + 1));
                byte[] expected = h == null ? null : h.at(at);
                byte[] read = store.get(key(k), at);
                assertThat(read).as("key %s at %s (cutoff %s)", k, at, cutoff).isEqualTo(expected);
            }
        }
        // a key is pruned about once per window, not at every write: it may still hold entries below the cutoff
        assertThat(store.versionEntries()).as("entries held at version %s", version).isGreaterThanOrEqualTo(entries);
    }

    /** Mostly small values, sometimes empty, long (past any array's room) or a deletion ({@code null}). */
    private static byte[] randomValue(Random random, int k) {
        int pick = random.nextInt(20);
        if (pick == 0) {
            return null;
        }
        int length = pick == 1 ? 0 : pick == 2 ? 200 + random.nextInt(3_000) : 1 + random.nextInt(40);
        byte[] v = new byte[length];
        random.nextBytes(v);
        if (length > 0) {
            v[0] = (byte) k;
        }
        return v;
    }

    @Test
    void aChainReadBeforeLaterWrites_keepsShowingWhatItHeld() {
        VersionedStore store = new VersionedStore();
        byte[] key = key(1);
        List<byte[]> written = new ArrayList<>();
        for (int v = 1; v <= 300; v++) {
            byte[] value = new byte[1 + v % 17];
            value[0] = (byte) v;
            written.add(value);
            store.set(v, key, value);
            if (v % 50 == 0) {
                store.prune(v - 40);
            }
        }
        VersionedStore.Slot slot = store.set(301, key, new byte[] {1});
        VersionedStore.Chain held = slot.chain;
        // later writes fill the spare room past the held chain, replace an entry, move the entries to new arrays
        for (int v = 302; v <= 1_000; v++) {
            store.set(v, key, new byte[64]);
            store.set(v, key, new byte[] {(byte) v, 2, 3});
            if (v % 100 == 0) {
                store.prune(v - 30);
            }
        }
        for (int v = 261; v <= 300; v++) {
            assertThat(held.valueAt(v)).as("version %s", v).isEqualTo(written.get(v - 1));
        }
        assertThat(held.valueAt(301)).isEqualTo(new byte[] {1});
        assertThat(store.get(key, 1_000)).isEqualTo(new byte[] {(byte) 1_000, 2, 3});
    }

    @Test
    void aKeyNoLongerWritten_keepsOnlyItsNewestValue_inArraysOfItsSize() {
        VersionedStore store = new VersionedStore();
        byte[] key = key(2);
        for (int v = 1; v <= 500; v++) {
            store.set(v, key, new byte[100]);
        }
        VersionedStore.Slot slot = store.set(501, key, new byte[] {7});
        store.prune(501);
        VersionedStore.Chain c = slot.chain;
        assertThat(c.size()).isEqualTo(1);
        assertThat(c.data()).as("the bytes kept for one one-byte value").hasSize(1);
        assertThat(c.versions()).hasSize(2);
        assertThat(c.valueAt(501)).isEqualTo(new byte[] {7});
        assertThat(store.versionEntries()).isEqualTo(1);
    }

    @Test
    void aKeyWrittenAtEveryVersion_holdsAboutAWindow_andItsArraysStopGrowing() {
        VersionedStore store = new VersionedStore();
        byte[] key = key(3);
        int window = 100;
        VersionedStore.Slot slot = null;
        int largestArray = 0;
        long largestChain = 0;
        for (int v = 1; v <= 20 * window; v++) {
            slot = store.set(v, key, new byte[] {(byte) v, 1, 2, 3, 4, 5, 6, 7});
            store.prune(v - window);
            if (slot.chain != null) { // the first value is held in the slot
                largestArray = Math.max(largestArray, slot.chain.versions().length);
            }
            largestChain = Math.max(largestChain, store.versionEntries());
            assertThat(store.get(key, v - window)).as("value at the cutoff, version %s", v)
                    .isEqualTo(v > window ? new byte[] {(byte) (v - window), 1, 2, 3, 4, 5, 6, 7} : null);
        }
        // pruned once its whole history falls below a cutoff, and cut back to the window whenever its entries move:
        // never more than two windows, in arrays sized for one window's entries with room to double
        assertThat(largestChain).isLessThanOrEqualTo(2L * window + 2);
        assertThat(largestArray).isLessThanOrEqualTo(256);
        assertThat(slot.chain.data().length).isLessThanOrEqualTo(256 * 8);
    }

    private static byte[] key(int k) {
        return new byte[] {0x15, (byte) k, 0};
    }
}
