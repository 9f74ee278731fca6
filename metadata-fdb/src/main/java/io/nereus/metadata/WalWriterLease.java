package io.nereus.metadata;

import java.time.Duration;
import java.util.Objects;

/**
 * The lease of one WAL writer incarnation, stored under {@code (WAL_LEASE, incarnation)}: how other storage
 * instances tell a live writer from one that is gone before they recover (fence and seal) its open slices.
 *
 * <p>A writer takes a lease (a new incarnation from a counter) before it registers its first slice, and renews it
 * by advancing {@code beat} well within {@code lease} (every third of it). Another instance judges the lease by
 * its own clock only: it notes when it first saw the current {@code beat}, and holds the lease expired once it has
 * seen the same beat for {@code lease} or longer. Wall clocks of different hosts are never compared, so clock
 * skew cannot expire a lease early. See {@link WalSliceStore} for who writes and removes it.
 *
 * @param writerId the storage instance holding the lease; non-empty
 * @param beat     renewals so far, {@code >= 0}
 * @param lease    how long the writer may go without a renewal before others may treat it as gone; at least 1 ms
 */
public record WalWriterLease(String writerId, long beat, Duration lease) {
    public WalWriterLease {
        Objects.requireNonNull(writerId, "writerId");
        Objects.requireNonNull(lease, "lease");
        if (writerId.isEmpty()) {
            throw new IllegalArgumentException("WAL writer lease writer id must not be empty");
        }
        if (beat < 0) {
            throw new IllegalArgumentException("WAL writer lease beat must be >= 0: " + beat);
        }
        if (lease.toMillis() < 1) {
            throw new IllegalArgumentException("WAL writer lease must be at least 1 ms: " + lease);
        }
    }

    /** The lease after one more renewal. */
    public WalWriterLease renewed() {
        return new WalWriterLease(writerId, Math.addExact(beat, 1), lease);
    }
}
