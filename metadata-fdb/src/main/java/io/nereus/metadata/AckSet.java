package io.nereus.metadata;

import java.util.Arrays;

/**
 * The batch-index acknowledgement bitset of one entry, as the words of a {@link java.util.BitSet}
 * ({@code BitSet.valueOf(words)}). The bits' meaning is the facade's (Pulsar: a set bit is a batch index
 * not yet acknowledged); this type stores them exactly. Immutable; compared by content.
 */
public final class AckSet {
    /** More words than any Pulsar batch needs (a batch holds at most a few thousand messages). */
    public static final int MAX_WORDS = 4096;

    private final long[] words;

    private AckSet(long[] words) {
        this.words = words;
    }

    /** An ack set holding a copy of {@code words}; 1..{@value #MAX_WORDS} words. */
    public static AckSet of(long... words) {
        if (words.length == 0 || words.length > MAX_WORDS) {
            throw new IllegalArgumentException("ack set must have 1.." + MAX_WORDS + " words, has " + words.length);
        }
        return new AckSet(words.clone());
    }

    /** A copy of the words. */
    public long[] words() {
        return words.clone();
    }

    public int wordCount() {
        return words.length;
    }

    public long word(int i) {
        return words[i];
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AckSet other && Arrays.equals(words, other.words);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(words);
    }

    @Override
    public String toString() {
        return "AckSet" + Arrays.toString(words);
    }
}
