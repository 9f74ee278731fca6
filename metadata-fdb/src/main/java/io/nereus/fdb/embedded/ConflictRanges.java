package io.nereus.fdb.embedded;

import java.util.ArrayList;
import java.util.List;

/**
 * The conflict ranges one transaction hands the resolver at commit, and its approximate size.
 *
 * <ul>
 *   <li>Read conflicts leave out the keys the transaction has already set or cleared (FoundationDB adds no
 *       read conflict for them; a key holding only atomic operations still conflicts).</li>
 *   <li>A write's conflict range is dropped once after option 30 {@code next_write_no_write_conflict_range};
 *       a conflict range added by hand ({@code addWriteConflictRange}) is always kept and leaves the option
 *       set for the next write.</li>
 *   <li>The approximate size is FoundationDB's transaction size: mutation bytes (reported by the caller) plus
 *       the endpoints of every recorded conflict range. {@code getApproximateSize} reports it and the commit
 *       compares it with the size limit (2101).</li>
 * </ul>
 *
 * <p>Threading: guarded by the owning transaction's monitor, like the {@link WriteMap} and
 * {@link TransactionSettings} it reads. Lifecycle: one per transaction attempt; {@code onError} starts the
 * next attempt with a new one. The lists go to the commit request as they are, not copied: once the commit
 * has started the transaction refuses further operations, so they no longer change.
 */
final class ConflictRanges {
    private final WriteMap writes;
    private final TransactionSettings settings;
    private final List<KeyRange> reads = new ArrayList<>();
    private final List<KeyRange> writeRanges = new ArrayList<>();
    private long approximateSize;

    ConflictRanges(WriteMap writes, TransactionSettings settings) {
        this.writes = writes;
        this.settings = settings;
    }

    /** Records a read of {@code range}, except for the keys this transaction has set or cleared. */
    void addRead(KeyRange range) {
        for (KeyRange r : writes.subtractWritten(range)) {
            reads.add(r);
            approximateSize += r.byteSize();
        }
    }

    /** Records the conflict range of a write, unless option 30 asked to skip the next one (it is then reset). */
    void addWrite(KeyRange range) {
        if (settings.nextWriteNoWriteConflict) {
            settings.nextWriteNoWriteConflict = false;
            return;
        }
        writeRanges.add(range);
        approximateSize += range.byteSize();
    }

    /** Records a write conflict range added by hand; option 30 does not apply to it. */
    void addExplicitWrite(byte[] begin, byte[] end) {
        writeRanges.add(new KeyRange(begin, end));
        approximateSize += begin.length + end.length;
    }

    /** Counts the bytes of a mutation (keys, values, clear-range endpoints) towards the size. */
    void addMutationBytes(long bytes) {
        approximateSize += bytes;
    }

    long approximateSize() {
        return approximateSize;
    }

    List<KeyRange> reads() {
        return reads;
    }

    List<KeyRange> writes() {
        return writeRanges;
    }

    boolean hasWrites() {
        return !writeRanges.isEmpty();
    }
}
