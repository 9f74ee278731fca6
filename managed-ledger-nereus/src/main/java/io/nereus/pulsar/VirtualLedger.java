package io.nereus.pulsar;

import com.google.common.collect.BoundType;
import com.google.common.collect.Range;
import org.apache.bookkeeper.mledger.Position;
import org.apache.bookkeeper.mledger.PositionBound;
import org.apache.bookkeeper.mledger.PositionFactory;

/**
 * A snapshot of a Nereus ledger's stored entries seen as Pulsar positions (DESIGN §8): one virtual ledger
 * {@code ledgerId} per stream incarnation whose entry ids are the stream's offsets; the stored entries are the
 * offsets {@code [trimOffset, committedEnd)}, dense. The first position is {@code (ledgerId, trimOffset - 1)} (the
 * position before the first entry, as Pulsar reports it) and the last confirmed one {@code (ledgerId,
 * committedEnd - 1)}. Positions of lower ledger ids (earlier incarnations, {@code EARLIEST}) lie before every
 * entry; higher ones ({@code LATEST}) after.
 */
public record VirtualLedger(long ledgerId, long trimOffset, long committedEnd) {
    public VirtualLedger {
        if (trimOffset < 0 || trimOffset > committedEnd) {
            throw new IllegalArgumentException("virtual ledger " + ledgerId + " needs 0 <= trimOffset <= committedEnd: "
                    + trimOffset + ", " + committedEnd);
        }
    }

    public Position position(long offset) {
        return PositionFactory.create(ledgerId, offset);
    }

    public long entries() {
        return committedEnd - trimOffset;
    }

    public Position firstPosition() {
        return position(trimOffset - 1);
    }

    public Position lastConfirmed() {
        return position(committedEnd - 1);
    }

    /** True when {@code p} is a stored entry. */
    public boolean isStored(Position p) {
        return p.getLedgerId() == ledgerId && p.getEntryId() >= trimOffset && p.getEntryId() < committedEnd;
    }

    /** The offset {@code p} stands for, clamped to {@code [trimOffset, committedEnd]}. */
    public long offsetOf(Position p) {
        if (p.getLedgerId() < ledgerId) {
            return trimOffset;
        }
        if (p.getLedgerId() > ledgerId) {
            return committedEnd;
        }
        return Math.max(trimOffset, Math.min(committedEnd, p.getEntryId()));
    }

    /** Stored entries in {@code range} (endpoints of other ledgers lie before or after all entries). */
    public long entries(Range<Position> range) {
        long from = range.hasLowerBound() ? endpoint(range.lowerEndpoint())
                + (range.lowerBoundType() == BoundType.OPEN ? 1 : 0) : trimOffset;
        long to = range.hasUpperBound() ? endpoint(range.upperEndpoint())
                + (range.upperBoundType() == BoundType.CLOSED ? 1 : 0) : committedEnd;
        return Math.max(0, Math.min(to, committedEnd) - Math.max(from, trimOffset));
    }

    private long endpoint(Position p) {
        if (p.getLedgerId() < ledgerId) {
            return -1;
        }
        if (p.getLedgerId() > ledgerId) {
            return committedEnd;
        }
        return p.getEntryId();
    }

    /** The stored entry after {@code p}; {@code (ledgerId, committedEnd)} when there is none yet. */
    public Position next(Position p) {
        long next;
        if (p.getLedgerId() < ledgerId) {
            next = trimOffset;
        } else if (p.getLedgerId() > ledgerId) {
            next = committedEnd;
        } else {
            next = Math.max(trimOffset, p.getEntryId() + 1);
        }
        return position(Math.min(next, committedEnd));
    }

    /**
     * The position before {@code p}, as Pulsar's {@code ManagedLedgerImpl.getPreviousPosition} computes it (the
     * transaction buffer bounds its max read position with it): {@code (p.ledgerId, p.entryId - 1)} when the entry id
     * is positive, trimmed or not; otherwise the last entry of an earlier ledger, which for a position of a later
     * ledger is this ledger's last confirmed position, and {@code (p.ledgerId, -1)} when no earlier ledger exists.
     */
    public Position previous(Position p) {
        if (p.getEntryId() > 0) {
            return PositionFactory.create(p.getLedgerId(), p.getEntryId() - 1);
        }
        if (p.getLedgerId() > ledgerId) {
            return lastConfirmed();
        }
        return PositionFactory.create(p.getLedgerId(), -1);
    }

    /**
     * The position {@code n} entries on from {@code start} (counting it when {@code startIncluded}), at most the
     * last confirmed one: Pulsar's {@code getPositionAfterN}.
     */
    public Position afterN(Position start, long n, PositionBound bound) {
        long from = bound == PositionBound.startIncluded ? offsetOf(start) : next(start).getEntryId();
        long result = Math.min(from + n, committedEnd) - 1;
        return position(Math.max(result, trimOffset - 1));
    }
}
