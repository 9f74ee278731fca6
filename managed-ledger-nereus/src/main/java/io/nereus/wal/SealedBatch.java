package io.nereus.wal;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A sealed WAL batch of a {@link WalWriter}: its sections, their stored form (each section's CRC32C computed
 * once, at sealing, and used both in the encoded batch and in the generation-0 records of the commit), and the
 * outcome of its BookKeeper write.
 *
 * <p>Created from a cut of the open batch, written and handed to a commit on the writer's owner thread; the
 * mutable fields are read and written only there. The commit reads the sections and stored forms, which never
 * change after the cut.
 *
 * <p>Payloads: the batch holds the WAL's reference to each entry's payload (taken by {@link WalWriter#append});
 * the encoded buffer takes references of its own, which BookKeeper releases. The batch's references are released
 * by {@link #releasePayloads}, once the batch has finished (committed, refused or failed), on the owner thread.
 */
final class SealedBatch {
    final long sequence;
    final List<PendingSection> sections;
    /** The sections' stored form, in section order (the index is the position in the batch). */
    final List<WalSection> stored;
    private final int entryCount;
    /** Completes on the owner thread once the BookKeeper write is acknowledged (the entry id) or failed. */
    final CompletableFuture<Long> added = new CompletableFuture<>();
    private long sliceId = -1;
    private long entryId = -1;
    private Throwable writeError;
    private boolean payloadsReleased;

    SealedBatch(long sequence, Collection<PendingSection> sections) {
        this.sequence = sequence;
        this.sections = List.copyOf(sections);
        List<WalSection> s = new ArrayList<>(this.sections.size());
        int n = 0;
        for (PendingSection p : this.sections) {
            s.add(p.toWalSection());
            n += p.entries.size();
        }
        this.stored = List.copyOf(s);
        this.entryCount = n;
    }

    /** Entries in the batch, all sections together. */
    int entryCount() {
        return entryCount;
    }

    /**
     * The batch as the next entry of slice {@code slice}, which it is then bound to: the payloads are neither
     * copied nor read again ({@link WalBatchCodec#encodeBuffer}); the caller hands the buffer to BookKeeper, which
     * releases it.
     */
    ByteBuf encode(long slice) {
        if (payloadsReleased) {
            throw new IllegalStateException("WAL batch " + sequence + " encoded after its payloads were released");
        }
        ByteBuf data = WalBatchCodec.encodeBuffer(new WalBatch(slice, sequence, stored), ByteBufAllocator.DEFAULT);
        this.sliceId = slice;
        return data;
    }

    /** Releases the batch's references to its payloads; once, when the batch has finished (later calls do nothing). */
    void releasePayloads() {
        if (payloadsReleased) {
            return;
        }
        payloadsReleased = true;
        for (PendingSection s : sections) {
            s.releasePayloads();
        }
    }

    long sliceId() {
        return sliceId;
    }

    void written(long entry) {
        entryId = entry;
        added.complete(entry);
    }

    void writeFailed(Throwable error) {
        writeError = error;
        added.completeExceptionally(error);
    }

    boolean writeDone() {
        return added.isDone();
    }

    /** The write's failure, or null once acknowledged. */
    Throwable writeError() {
        return writeError;
    }

    long entryId() {
        return entryId;
    }

    /** Fails every append of the batch with {@code code}, each naming its stream. */
    void failAll(ErrorCode code, Throwable cause) {
        sections.forEach(s -> s.fail(new NereusException(code, Map.of("stream", s.stream), cause)));
    }
}
