package io.nereus.metadata;

/**
 * The exact physical location of one representation of an offset range. Together with
 * (stream, view, range, generation) it is the resolved identity of a read.
 *
 * <ul>
 *   <li>{@link WalTarget}: an entry of a multi-stream WAL batch in a BookKeeper ledger (generation 0);</li>
 *   <li>{@link ObjectTarget}: a byte range of a read-optimized object (higher generations).</li>
 * </ul>
 */
public sealed interface ReadTarget permits WalTarget, ObjectTarget {
}
