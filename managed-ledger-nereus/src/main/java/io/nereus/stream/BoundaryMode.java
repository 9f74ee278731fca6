package io.nereus.stream;

/** How a read treats a start offset that lies inside a ranged entry. */
public enum BoundaryMode {
    /** The start must be the first offset of an entry; otherwise the read fails with NOT_ENTRY_BOUNDARY. */
    EXACT_START,
    /** The whole entry containing the start offset is returned (Kafka fetch semantics). */
    CONTAINING_ENTRY
}
