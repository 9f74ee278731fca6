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
    /** The keys of the single-key mutations whose conflict ranges were kept: each is exactly that key. */
    private final List<byte[]> keyWrites = new ArrayList<>();
    /** Every other write conflict range: range clears, versionstamped keys' possible ranges, ranges added by hand. */
    private final List<KeyRange> writeRanges = new ArrayList<>();
    /** Whether option 30 dropped the conflict range of a single-key mutation. */
    private boolean keyWriteSkipped;
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

    /**
     * Records the conflict range of a mutation of the single key {@code key} (a set, a clear of one key, an atomic
     * operation, a versionstamped value), unless option 30 asked to skip the next one (it is then reset).
     */
    void addKeyWrite(byte[] key) {
        if (settings.nextWriteNoWriteConflict) {
            settings.nextWriteNoWriteConflict = false;
            keyWriteSkipped = true;
            return;
        }
        keyWrites.add(key);
        approximateSize += 2L * key.length + 1; // the range [key, key + 0x00)
    }

    /**
     * Records the conflict range of a write of a range (a range clear, a versionstamped key's possible keys), unless
     * option 30 asked to skip the next one (it is then reset).
     */
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

    /** The keys of {@link #addKeyWrite}, each its own conflict range. */
    List<byte[]> keyWrites() {
        return keyWrites;
    }

    /** Every other write conflict range. */
    List<KeyRange> writes() {
        return writeRanges;
    }

    /**
     * Whether every single-key mutation kept its conflict range: then the keys of {@link #keyWrites} are exactly
     * the keys of the write map's single-key entries, together with keys a later range clear took over (and whose
     * conflict its range covers), and the commit may record them as it applies those entries.
     */
    boolean everyKeyWriteKept() {
        return !keyWriteSkipped;
    }

    boolean hasWrites() {
        return !keyWrites.isEmpty() || !writeRanges.isEmpty();
    }
}
