package io.nereus.it.bench;

import io.nereus.it.StorageMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rounds of a broker benchmark: each round runs stock and Nereus, alternating which goes first (round 0 stock
 * first), with {@link StorageMode#PROPERTY} set for the brokers the body starts and restored afterwards.
 */
final class BenchRounds {
    /** One measurement on one storage. */
    interface Body<R> {
        R run(StorageMode mode, int round) throws Exception;
    }

    private BenchRounds() {
    }

    /**
     * The results of {@code rounds} rounds in run order (two per round; one, Nereus, when {@code nereusOnly}), each
     * printed as it comes.
     */
    static <R> List<R> alternate(int rounds, boolean nereusOnly, Body<R> body) throws Exception {
        String previous = System.getProperty(StorageMode.PROPERTY);
        List<R> results = new ArrayList<>();
        try {
            for (int round = 0; round < rounds; round++) {
                List<StorageMode> order = round % 2 == 0 ? List.of(StorageMode.BOOKKEEPER, StorageMode.NEREUS)
                        : List.of(StorageMode.NEREUS, StorageMode.BOOKKEEPER);
                if (nereusOnly) {
                    order = List.of(StorageMode.NEREUS); // a profiling aid: no comparison is printed
                }
                for (StorageMode mode : order) {
                    System.setProperty(StorageMode.PROPERTY, mode.name().toLowerCase(Locale.ROOT));
                    R r = body.run(mode, round);
                    results.add(r);
                    System.out.printf(Locale.ROOT, "round %d %-10s %s%n", round, mode, r);
                }
            }
        } finally {
            if (previous == null) {
                System.clearProperty(StorageMode.PROPERTY);
            } else {
                System.setProperty(StorageMode.PROPERTY, previous);
            }
        }
        return results;
    }
}
