package io.nereus.wal;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One WAL batch: the content of one BookKeeper entry of a WAL slice, holding sections of many streams.
 * Stored with {@link WalBatchCodec}.
 *
 * @param sliceId  the BookKeeper ledger id of the slice the batch was written to, {@code >= 0}
 * @param sequence the writer's batch sequence number, {@code >= 0}; batches commit in sequence order
 * @param sections one section per stream, at most one per stream; the index in this list is the
 *                 {@code positionInBatch} of the stream's generation-0 record
 */
public record WalBatch(long sliceId, long sequence, List<WalSection> sections) {
    public WalBatch {
        sections = List.copyOf(sections);
        if (sliceId < 0) {
            throw new IllegalArgumentException("WAL batch slice id must be >= 0: " + sliceId);
        }
        if (sequence < 0) {
            throw new IllegalArgumentException("WAL batch sequence must be >= 0: " + sequence);
        }
        Set<Long> seen = new HashSet<>();
        for (WalSection s : sections) {
            if (!seen.add(s.stream().value())) {
                throw new IllegalArgumentException("WAL batch holds " + s.stream() + " twice");
            }
        }
    }
}
