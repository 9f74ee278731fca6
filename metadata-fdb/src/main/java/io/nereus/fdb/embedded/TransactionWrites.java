package io.nereus.fdb.embedded;

import com.apple.foundationdb.MutationType;
import io.nereus.fdb.FdbErrors;
import java.util.Arrays;

/**
 * The write side of one transaction: checks each {@code set}, {@code clear} and {@code mutate} against
 * FoundationDB's key and value rules ({@link KeyRules}), records it in the {@link WriteMap}, adds its write
 * conflict range and its bytes to {@link ConflictRanges}, and fires the transaction's own watches on the
 * keys it touched (a watch sees the transaction's own writes before the commit).
 *
 * <p>Versionstamped keys: the whole span the key can take once stamped (the ten stamp bytes all {@code 0x00}
 * to all {@code 0xff}) is the write conflict range and becomes unreadable to this transaction (1036).
 *
 * <p>Threading: guarded by the owning transaction's monitor; every method expects the caller to hold it and to
 * have checked that the transaction is still usable. A rejected write throws before changing anything.
 * Lifecycle: one per transaction attempt; {@code onError} starts the next attempt with a new one.
 */
final class TransactionWrites {
    private final TransactionSettings settings;
    private final WriteMap writes;
    private final ConflictRanges conflicts;
    private final TransactionWatches watches;

    TransactionWrites(TransactionSettings settings, WriteMap writes, ConflictRanges conflicts,
                      TransactionWatches watches) {
        this.settings = settings;
        this.writes = writes;
        this.conflicts = conflicts;
        this.watches = watches;
    }

    void set(byte[] key, byte[] value) {
        KeyRules.checkWriteKey(key, false, settings);
        if (value.length > KeyRules.VALUE_SIZE_LIMIT) {
            throw new EmbeddedFdbException(FdbErrors.VALUE_TOO_LARGE);
        }
        writes.set(key, value);
        conflicts.addKeyWrite(key);
        conflicts.addMutationBytes(key.length + value.length);
        ownWrite(key);
    }

    void clear(byte[] key) {
        KeyRules.checkWriteKey(key, false, settings);
        writes.clear(key);
        conflicts.addKeyWrite(key);
        conflicts.addMutationBytes(key.length);
        ownWrite(key);
    }

    void clear(byte[] begin, byte[] end) {
        if (Bytes.compare(begin, end) > 0) {
            throw new EmbeddedFdbException(FdbErrors.INVERTED_RANGE);
        }
        KeyRules.checkWriteKey(begin, false, settings);
        KeyRules.checkWriteKey(end, true, settings);
        writes.clearRange(begin, end);
        conflicts.addWrite(new KeyRange(begin, end));
        conflicts.addMutationBytes(begin.length + end.length);
        ownWrite(begin, end);
    }

    /** An atomic operation, a versionstamped key or a versionstamped value; unknown types fail with 2018. */
    void mutate(MutationType type, byte[] key, byte[] param) {
        switch (type.code()) {
            case 14 -> { // SET_VERSIONSTAMPED_KEY
                int offset = KeyRules.versionstampOffset(key);
                byte[] template = Arrays.copyOf(key, key.length - 4);
                KeyRules.checkWriteKey(template, false, settings);
                KeyRules.checkValue(param);
                byte[] low = template.clone();
                Arrays.fill(low, offset, offset + 10, (byte) 0);
                byte[] high = template.clone();
                Arrays.fill(high, offset, offset + 10, (byte) 0xff);
                KeyRange possible = new KeyRange(low, Bytes.keyAfter(high));
                writes.setVersionstampedKey(template, offset, param, possible);
                conflicts.addWrite(possible);
                conflicts.addMutationBytes(template.length + param.length);
                ownWrite(possible.begin(), possible.end());
            }
            case 15 -> { // SET_VERSIONSTAMPED_VALUE
                KeyRules.checkWriteKey(key, false, settings);
                int offset = KeyRules.versionstampOffset(param);
                byte[] template = Arrays.copyOf(param, param.length - 4);
                KeyRules.checkValue(template);
                writes.setVersionstampedValue(key, template, offset);
                conflicts.addKeyWrite(key);
                conflicts.addMutationBytes(key.length + template.length);
                ownWrite(key);
            }
            case 2, 6, 7, 8, 9, 12, 13, 16, 17, 20 -> {
                KeyRules.checkWriteKey(key, false, settings);
                KeyRules.checkValue(param);
                writes.mutate(type, key, param);
                conflicts.addKeyWrite(key);
                conflicts.addMutationBytes(key.length + param.length);
                ownWrite(key);
            }
            default -> throw new EmbeddedFdbException(FdbErrors.INVALID_MUTATION_TYPE);
        }
    }

    /** A write of this transaction to {@code [begin, end)} fires its own watches there (RYW watches). */
    private void ownWrite(byte[] begin, byte[] end) {
        watches.ownWrite(begin, end, writes::lookup);
    }

    /** {@link #ownWrite(byte[], byte[])} of one key; builds the key's range only when a watch is pending. */
    private void ownWrite(byte[] key) {
        if (watches.hasPending()) {
            ownWrite(key, Bytes.keyAfter(key));
        }
    }
}
