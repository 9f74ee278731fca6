package io.nereus.metadata;

import java.util.Objects;

/**
 * The key fields of a generation-index record: {@code (STREAM, stream, INDEX|RETIRED|FALLBACK, view, endOffset,
 * generation)}. Keys sort by view, then end offset, then generation, so the records covering offset {@code o} in a
 * view are found by a short scan starting at end offset {@code o + 1}.
 *
 * <p>A stream's open run ({@link IndexRecord#open}) is stored in the lookup space at {@link #openRun}, whose end
 * offset {@link #OPEN_RUN_END} sorts after every other record of the view: as the open run is the stream's last
 * generation-0 record, no record of the view ends after it, so the covering scan still meets records in the order of
 * their ends. Only the lookup space has that key; a record moved to RETIRED or FALLBACK is stored under its own end
 * ({@link #atEnd}).
 */
public record IndexKey(StreamId stream, ReadView view, long endOffset, GenerationId generation) {
    /** The end offset of the open-run key: beyond every offset a stream can hold. */
    public static final long OPEN_RUN_END = Long.MAX_VALUE;

    public IndexKey {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(view, "view");
        Objects.requireNonNull(generation, "generation");
        if (endOffset <= 0) {
            throw new IllegalArgumentException("index key end offset must be > 0 (ranges are non-empty): " + endOffset);
        }
    }

    /** Where {@code record} is stored in the lookup space: {@link #openRun} for an open run, else {@link #atEnd}. */
    public static IndexKey of(IndexRecord record) {
        return record.open() ? openRun(record.stream()) : atEnd(record);
    }

    /** The key of {@code record} under its own end offset: its place in RETIRED and FALLBACK, or once closed. */
    public static IndexKey atEnd(IndexRecord record) {
        return new IndexKey(record.stream(), record.view(), record.endOffset(), record.generation());
    }

    /** The key of {@code stream}'s open run. */
    public static IndexKey openRun(StreamId stream) {
        return new IndexKey(stream, ReadView.COMMITTED, OPEN_RUN_END, GenerationId.APPEND);
    }

    /** True for the key of a stream's open run. */
    public boolean isOpenRun() {
        return endOffset == OPEN_RUN_END && view == ReadView.COMMITTED && generation.isAppend();
    }
}
