package io.nereus.wal;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the WAL writer; immutable and validated.
 *
 * @param flushBytes         seal the open batch once its payload reaches this many bytes
 * @param flushDelay         seal a non-empty open batch this long after its first entry while the WAL is busy (an
 *                           idle WAL seals it at once, a busy one also when it drains; see {@link WalWriter})
 * @param maxBatchBytes      largest batch payload; an append larger than this is refused
 * @param maxInFlightBatches batches written to BookKeeper but not yet acknowledged, at most
 * @param sliceMaxBytes      roll over to a new slice (ledger) after this many bytes
 * @param sliceMaxAge        roll over to a new slice after this long
 * @param ensembleSize       BookKeeper ensemble of a slice
 * @param writeQuorum        BookKeeper write quorum
 * @param ackQuorum          BookKeeper ack quorum
 * @param password           BookKeeper ledger password of slices
 * @param maxCoalescedBatches  acknowledged consecutive batches committed together in one metadata transaction,
 *                             at most ({@code 1..64}; 1 turns coalescing off)
 * @param maxCoalescedAppends  stream appends (one per stream per batch) in one coalesced metadata transaction,
 *                             at most ({@code 1..16384}); each costs a few hundred bytes of reads and
 *                             mutations, so the default keeps a transaction near 1 MB, well inside
 *                             FoundationDB's 10 MB. A single batch is always committed, even when larger.
 * @param writerLease         how long the writer may go without renewing its lease before other storage instances
 *                            may recover (fence and seal) its open slices; renewed every third of it; at least 3 ms
 * @param recoveryInterval    how often this instance looks for slices abandoned by writers that are gone (and
 *                            recovers them); {@code > 0}
 * @param flushWhenIdle       seal a batch at once when its first entry finds the WAL idle, or fewer than
 *                            {@code flushBelowBatches} batches being written or committed and no commit running, and
 *                            the open batch the moment that holds again (group commit); false: a batch waits for
 *                            {@code flushBytes} or {@code flushDelay} (fewer, larger BookKeeper entries under light load)
 * @param flushBelowBatches   with {@code flushWhenIdle}, the number of batches being written or committed below which
 *                            a batch is sealed at once while no commit runs: 1, only when the WAL is idle (every entry
 *                            of a busy WAL then waits for the batch before it to commit); more lets that many batches
 *                            overlap while they wait for BookKeeper, so an entry under light load waits for its own
 *                            write and commit only
 */
public record WalConfig(
        int flushBytes,
        Duration flushDelay,
        int maxBatchBytes,
        int maxInFlightBatches,
        long sliceMaxBytes,
        Duration sliceMaxAge,
        int ensembleSize,
        int writeQuorum,
        int ackQuorum,
        byte[] password,
        int maxCoalescedBatches,
        int maxCoalescedAppends,
        Duration writerLease,
        Duration recoveryInterval,
        boolean flushWhenIdle,
        int flushBelowBatches) {

    /** Upper bounds of the coalescing settings, keeping a commit transaction far below 10 MB and 5 s. */
    public static final int MAX_COALESCED_BATCHES_LIMIT = 64;
    public static final int MAX_COALESCED_APPENDS_LIMIT = 16_384;
    /** The shortest writer lease: renewed every third of it, in whole milliseconds. */
    public static final Duration MIN_WRITER_LEASE = Duration.ofMillis(3);

    public WalConfig {
        Objects.requireNonNull(flushDelay, "flushDelay");
        Objects.requireNonNull(sliceMaxAge, "sliceMaxAge");
        Objects.requireNonNull(password, "password");
        Objects.requireNonNull(writerLease, "writerLease");
        Objects.requireNonNull(recoveryInterval, "recoveryInterval");
        password = password.clone();
        positive(flushBytes, "flushBytes");
        positive(maxBatchBytes, "maxBatchBytes");
        positive(maxInFlightBatches, "maxInFlightBatches");
        positive(flushBelowBatches, "flushBelowBatches");
        positive(sliceMaxBytes, "sliceMaxBytes");
        if (flushDelay.isNegative() || sliceMaxAge.isNegative() || sliceMaxAge.isZero()) {
            throw new IllegalArgumentException("flushDelay must be >= 0 and sliceMaxAge > 0");
        }
        if (flushBytes > maxBatchBytes) {
            throw new IllegalArgumentException("flushBytes " + flushBytes + " must be <= maxBatchBytes " + maxBatchBytes);
        }
        if (maxCoalescedBatches < 1 || maxCoalescedBatches > MAX_COALESCED_BATCHES_LIMIT) {
            throw new IllegalArgumentException("maxCoalescedBatches must be in 1.." + MAX_COALESCED_BATCHES_LIMIT
                    + ": " + maxCoalescedBatches);
        }
        if (maxCoalescedAppends < 1 || maxCoalescedAppends > MAX_COALESCED_APPENDS_LIMIT) {
            throw new IllegalArgumentException("maxCoalescedAppends must be in 1.." + MAX_COALESCED_APPENDS_LIMIT
                    + ": " + maxCoalescedAppends);
        }
        if (writerLease.compareTo(MIN_WRITER_LEASE) < 0) {
            throw new IllegalArgumentException("writerLease must be at least " + MIN_WRITER_LEASE + ": " + writerLease);
        }
        if (recoveryInterval.isNegative() || recoveryInterval.isZero()) {
            throw new IllegalArgumentException("recoveryInterval must be > 0: " + recoveryInterval);
        }
        if (!(ensembleSize >= writeQuorum && writeQuorum >= ackQuorum && ackQuorum >= 1)) {
            throw new IllegalArgumentException("need ensembleSize >= writeQuorum >= ackQuorum >= 1: "
                    + ensembleSize + "/" + writeQuorum + "/" + ackQuorum);
        }
    }

    /**
     * Defaults: 256 KiB or 2 ms per batch (at once while fewer than 3 batches are being written or committed and no
     * commit runs), 4 MiB
     * batches, 8 in flight, 1 GiB or 1 h slices, quorums 2/2/2, up to 8 batches and 4,096 stream appends per metadata
     * commit, a 30 s writer lease, recovery every 10 s.
     */
    public static WalConfig defaults() {
        return new WalConfig(256 * 1024, Duration.ofMillis(2), 4 * 1024 * 1024, 8, 1L << 30, Duration.ofHours(1),
                2, 2, 2, new byte[0], 8, 4096, Duration.ofSeconds(30), Duration.ofSeconds(10), true, 3);
    }

    /** How often the writer renews its lease: a third of {@link #writerLease}. */
    public Duration leaseRenewal() {
        return Duration.ofMillis(writerLease.toMillis() / 3);
    }

    public WalConfig withQuorums(int ensemble, int write, int ack) {
        return new WalConfig(flushBytes, flushDelay, maxBatchBytes, maxInFlightBatches, sliceMaxBytes, sliceMaxAge,
                ensemble, write, ack, password, maxCoalescedBatches, maxCoalescedAppends,
                writerLease, recoveryInterval, flushWhenIdle, flushBelowBatches);
    }

    public WalConfig withMaxBatchBytes(int bytes) {
        return new WalConfig(flushBytes, flushDelay, bytes, maxInFlightBatches, sliceMaxBytes, sliceMaxAge,
                ensembleSize, writeQuorum, ackQuorum, password, maxCoalescedBatches, maxCoalescedAppends, writerLease,
                recoveryInterval, flushWhenIdle, flushBelowBatches);
    }

    public WalConfig withSlice(long maxBytes, Duration maxAge) {
        return new WalConfig(flushBytes, flushDelay, maxBatchBytes, maxInFlightBatches, maxBytes, maxAge,
                ensembleSize, writeQuorum, ackQuorum, password, maxCoalescedBatches, maxCoalescedAppends,
                writerLease, recoveryInterval, flushWhenIdle, flushBelowBatches);
    }

    public WalConfig withFlush(int bytes, Duration delay) {
        return new WalConfig(bytes, delay, maxBatchBytes, maxInFlightBatches, sliceMaxBytes, sliceMaxAge,
                ensembleSize, writeQuorum, ackQuorum, password, maxCoalescedBatches, maxCoalescedAppends,
                writerLease, recoveryInterval, flushWhenIdle, flushBelowBatches);
    }

    public WalConfig withCoalescing(int maxBatches, int maxAppends) {
        return new WalConfig(flushBytes, flushDelay, maxBatchBytes, maxInFlightBatches, sliceMaxBytes, sliceMaxAge,
                ensembleSize, writeQuorum, ackQuorum, password, maxBatches, maxAppends, writerLease, recoveryInterval,
                flushWhenIdle, flushBelowBatches);
    }

    public WalConfig withRecovery(Duration lease, Duration interval) {
        return new WalConfig(flushBytes, flushDelay, maxBatchBytes, maxInFlightBatches, sliceMaxBytes, sliceMaxAge,
                ensembleSize, writeQuorum, ackQuorum, password, maxCoalescedBatches, maxCoalescedAppends, lease, interval,
                flushWhenIdle, flushBelowBatches);
    }

    public WalConfig withFlushWhenIdle(boolean cutWhenIdle) {
        return new WalConfig(flushBytes, flushDelay, maxBatchBytes, maxInFlightBatches, sliceMaxBytes, sliceMaxAge,
                ensembleSize, writeQuorum, ackQuorum, password, maxCoalescedBatches, maxCoalescedAppends,
                writerLease, recoveryInterval, cutWhenIdle, flushBelowBatches);
    }

    public WalConfig withFlushBelowBatches(int batches) {
        return new WalConfig(flushBytes, flushDelay, maxBatchBytes, maxInFlightBatches, sliceMaxBytes, sliceMaxAge,
                ensembleSize, writeQuorum, ackQuorum, password, maxCoalescedBatches, maxCoalescedAppends,
                writerLease, recoveryInterval, flushWhenIdle, batches);
    }

    private static void positive(long v, String name) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be > 0: " + v);
        }
    }
}
