package io.nereus.wal;

/**
 * Receives the timings of a {@link WalWriter} as they happen, for latency histograms that counters cannot give (a
 * metrics layer records them; the core keeps no histogram of its own). Called once per BookKeeper add, on the
 * writer's owner thread, and once per metadata commit transaction, on the thread that completed it (a metadata
 * callback thread; a writer runs one commit at a time), never per entry. Implementations must be cheap and must not
 * block or throw.
 */
public interface WalObserver {

    /**
     * BookKeeper acknowledged a WAL batch of {@code bytes} encoded bytes, {@code nanos} after the add was issued.
     */
    void batchWritten(int bytes, long nanos);

    /** A metadata commit transaction of the group commit finished (committed, refused or failed) in {@code nanos}. */
    void commitFinished(long nanos);

    /** Observes nothing. */
    WalObserver NONE = new WalObserver() {
        @Override
        public void batchWritten(int bytes, long nanos) {
        }

        @Override
        public void commitFinished(long nanos) {
        }
    };
}
