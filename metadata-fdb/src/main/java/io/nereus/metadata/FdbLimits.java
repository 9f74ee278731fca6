package io.nereus.metadata;

/** FoundationDB's size limits that Nereus keys and values must stay within. */
public final class FdbLimits {
    /** Largest key FoundationDB accepts, in bytes. */
    public static final int MAX_KEY_BYTES = 10_000;
    /** Largest value FoundationDB accepts, in bytes. */
    public static final int MAX_VALUE_BYTES = 100_000;

    private FdbLimits() {
    }

    /** Returns {@code value} when it fits in a FoundationDB value; otherwise throws naming {@code what}. */
    public static byte[] checkValue(String what, byte[] value) {
        if (value.length > MAX_VALUE_BYTES) {
            throw new IllegalArgumentException(what + " encodes to " + value.length
                    + " bytes, over FoundationDB's " + MAX_VALUE_BYTES + "-byte value limit");
        }
        return value;
    }

    /** Returns {@code key} when it fits in a FoundationDB key; otherwise throws naming {@code what}. */
    static byte[] checkKey(String what, byte[] key) {
        if (key.length > MAX_KEY_BYTES) {
            throw new IllegalArgumentException(what + " key is " + key.length
                    + " bytes, over FoundationDB's " + MAX_KEY_BYTES + "-byte key limit");
        }
        return key;
    }
}
