package io.nereus.metadata.codec;

import io.nereus.metadata.NereusKeyspace;

/**
 * The layout version of a Nereus metadata root, stored under {@code (META, "format")} when the root is
 * bootstrapped. A build reads only layouts it knows and refuses any other with
 * {@link UnsupportedFormatVersionException}, so an old broker never misreads (or overwrites) metadata a
 * newer one wrote.
 *
 * <pre>
 * value, format 1:
 *   u8  format = 1
 *   i32 layout version
 * </pre>
 *
 * <p>Layout versions: 1 = the key layout of {@link NereusKeyspace} with the format-1 codecs of this package.
 */
public final class FormatVersion {
    /** The layout this build writes. */
    public static final int CURRENT = 1;
    /** The oldest layout this build reads. */
    public static final int MIN_SUPPORTED = 1;
    static final int VALUE_FORMAT_V1 = 1;

    private FormatVersion() {
    }

    public static byte[] encode(int layoutVersion) {
        if (layoutVersion < 1) {
            throw new IllegalArgumentException("layout version must be >= 1: " + layoutVersion);
        }
        return new ValueWriter(5).u8(VALUE_FORMAT_V1).i32(layoutVersion).toByteArray();
    }

    /** The value a bootstrap writes. */
    public static byte[] encodeCurrent() {
        return encode(CURRENT);
    }

    /** The stored layout version, whether or not this build supports it. */
    public static int decode(byte[] value) {
        ValueReader r = new ValueReader("metadata format value", value);
        r.formatVersion(VALUE_FORMAT_V1);
        int v = r.i32("layout version");
        r.expectEnd();
        return v;
    }

    public static boolean isSupported(int layoutVersion) {
        return layoutVersion >= MIN_SUPPORTED && layoutVersion <= CURRENT;
    }

    /**
     * Decodes the stored value and returns the layout version when this build supports it.
     *
     * @throws UnsupportedFormatVersionException naming the stored and the supported versions
     * @throws io.nereus.error.NereusException    METADATA_FORMAT when the value itself cannot be decoded
     */
    public static int check(byte[] value) {
        int v = decode(value);
        if (!isSupported(v)) {
            throw new UnsupportedFormatVersionException(v);
        }
        return v;
    }

    /** The stored layout is not one this build can read. */
    public static final class UnsupportedFormatVersionException extends RuntimeException {
        private final int storedVersion;

        UnsupportedFormatVersionException(int storedVersion) {
            super("Nereus metadata layout version " + storedVersion + " is not supported by this build, which reads "
                    + (MIN_SUPPORTED == CURRENT ? "only version " + CURRENT
                            : "versions " + MIN_SUPPORTED + ".." + CURRENT)
                    + "; refusing to open the metadata root");
            this.storedVersion = storedVersion;
        }

        public int storedVersion() {
            return storedVersion;
        }
    }
}
