package io.nereus.metadata;

/**
 * A read view: a separate namespace of physical representations of one stream. A representation in one
 * view never serves a read in another; in particular a {@link #TOPIC_COMPACTED} generation is never a
 * fallback for a {@link #COMMITTED} read.
 *
 * <p>{@link #code()} is stored in keys and values and never changes; ordinals are not used.
 */
public enum ReadView {
    /** Lossless representation of every committed offset; dense coverage of the committed range. */
    COMMITTED(1),
    /** Key-aware semantic projection; may be sparse, coverage is explicit. */
    TOPIC_COMPACTED(2);

    private final int code;

    ReadView(int code) {
        this.code = code;
    }

    /** The stable stored code. */
    public int code() {
        return code;
    }

    /** The view stored as {@code code}; throws {@link IllegalArgumentException} naming unknown codes. */
    public static ReadView fromCode(long code) {
        for (ReadView v : values()) {
            if (v.code == code) {
                return v;
            }
        }
        throw new IllegalArgumentException("unknown read view code " + code);
    }
}
