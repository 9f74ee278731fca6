package io.nereus.fdb.conformance;

import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Builds the operands of SET_VERSIONSTAMPED_KEY / SET_VERSIONSTAMPED_VALUE by hand (API >= 520 layout: the
 * bytes, then a 4-byte little-endian offset of the 10 bytes the commit fills in).
 *
 * <p>{@code Tuple.packWithVersionstamp} would do the same but asks the native {@code FDB} class for the API
 * version, which cannot load without libfdb_c; this helper packs the tuple with a complete placeholder
 * versionstamp instead and locates its 10 bytes.
 */
final class Versionstamps {
    /** The bytes an incomplete versionstamp carries before commit (same as the tuple layer's placeholder). */
    static final byte[] PLACEHOLDER = filled10((byte) 0xff);

    private Versionstamps() {
    }

    /**
     * {@code prefix + tuple.pack()} with the single top-level incomplete versionstamp of {@code tuple} located,
     * followed by its 4-byte little-endian offset.
     */
    static byte[] versionstampedKey(byte[] prefix, Tuple tuple) {
        List<Object> items = tuple.getItems();
        int index = -1;
        List<Object> replaced = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
            Object item = items.get(i);
            if (item instanceof Versionstamp vs && !vs.isComplete()) {
                if (index >= 0) {
                    throw new IllegalArgumentException("more than one incomplete versionstamp in " + tuple);
                }
                index = i;
                replaced.add(Versionstamp.complete(PLACEHOLDER, vs.getUserVersion()));
            } else {
                replaced.add(item);
            }
        }
        if (index < 0) {
            throw new IllegalArgumentException("no top-level incomplete versionstamp in " + tuple);
        }
        byte[] packed = ByteArrayUtil.join(prefix, Tuple.fromList(replaced).pack());
        int offset = prefix.length + Tuple.fromList(items.subList(0, index)).pack().length + 1;
        if (!Arrays.equals(packed, offset, offset + 10, PLACEHOLDER, 0, 10)) {
            throw new IllegalStateException("placeholder not found at offset " + offset);
        }
        return ByteArrayUtil.join(packed, le32(offset));
    }

    /** {@code before + placeholder(10) + after + le32(before.length)}. */
    static byte[] versionstampedValue(byte[] before, byte[] after) {
        return ByteArrayUtil.join(before, PLACEHOLDER, after, le32(before.length));
    }

    /** {@code key} without its 4-byte offset suffix: the bytes as written before the commit fills in the stamp. */
    static byte[] withoutOffset(byte[] operand) {
        return Arrays.copyOf(operand, operand.length - 4);
    }

    static byte[] le32(int value) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array();
    }

    /** The commit version in the first 8 bytes of a 10-byte versionstamp (big-endian). */
    static long commitVersionOf(byte[] stamp) {
        return ByteBuffer.wrap(stamp, 0, 8).order(ByteOrder.BIG_ENDIAN).getLong();
    }

    private static byte[] filled10(byte b) {
        byte[] out = new byte[10];
        Arrays.fill(out, b);
        return out;
    }
}
