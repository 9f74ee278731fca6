package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.AppendEntry;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.Payloads;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.WalSectionRef;
import io.nereus.metadata.WalTarget;
import io.nereus.wal.WalBatch;
import io.nereus.wal.WalBatchCodec;
import io.nereus.wal.WalReader;
import io.nereus.wal.WalSection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Reads generation-0 targets: the stream's section of a WAL batch that holds the offset asked for, one of the
 * sections a record lists ({@link IndexRecord#walSections()}: one for an append, several for a run). The section must
 * belong to the record's stream, cover exactly the range the record gives it and match the checksum the record gives
 * it; anything else is CORRUPT_DATA. The WAL reader's failures (naming slice and entry) pass unchanged. The entries
 * read are retained slices of the fetched BookKeeper entry ({@link WalReader}), owned by the caller.
 */
public final class WalTargetReader implements TargetReader {
    private final WalReader wal;

    public WalTargetReader(WalReader wal) {
        this.wal = wal;
    }

    /**
     * The whole section holding {@code offset}, whatever the limits (a section is one small read); the next read of
     * the run goes to the next section.
     */
    @Override
    public CompletableFuture<List<StreamEntry>> read(IndexRecord record, long offset, int maxEntries, long maxBytes) {
        if (!(record.target() instanceof WalTarget)) {
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.RETRIABLE_READ_FAILED,
                    ErrorContext.of("reason", "no reader for the target's kind", "target", record.target())));
        }
        WalSectionRef t = record.walSectionAt(offset);
        return wal.read(t.sliceId(), t.entryId()).handle((fetched, error) -> {
            if (error != null) {
                throw new CompletionException(translate(Failures.unwrap(error), t));
            }
            try {
                return entries(record, t, fetched.batch());
            } catch (NereusException e) {
                wal.invalidate(t.sliceId(), t.entryId());
                throw new CompletionException(e);
            } finally {
                fetched.release();
            }
        });
    }

    /**
     * The entries of section {@code t} of {@code record} in {@code batch} (the batch it names), checked: the batch's
     * section at that position must hold the record's stream and the section's range and match its checksum, else
     * CORRUPT_DATA. Each entry's payload is a retained slice of the batch's (no copy), owned by the caller
     * ({@link StreamEntry}); the caller's reference to the batch is untouched.
     */
    static List<StreamEntry> entries(IndexRecord record, WalSectionRef t, WalBatch batch) {
        if (t.positionInBatch() >= batch.sections().size()) {
            throw corrupt(t, "batch has no section at the record's position", "sections", batch.sections().size());
        }
        WalSection s = batch.sections().get(t.positionInBatch());
        if (!s.stream().equals(record.stream()) || !s.range().equals(t.range())) {
            throw corrupt(t, "section holds another stream or range", "sectionStream", s.stream(),
                    "sectionRange", s.range(), "recordStream", record.stream(), "recordRange", t.range());
        }
        if (!WalBatchCodec.verifySection(s, t.checksum())) {
            throw corrupt(t, "section checksum does not match the record's", "checksum", t.checksum());
        }
        List<StreamEntry> out = new ArrayList<>(s.entries().size());
        long offset = s.firstOffset();
        for (AppendEntry e : s.entries()) {
            out.add(new StreamEntry(new OffsetRange(offset, offset + e.recordCount()), Payloads.retainedSlice(e.payload())));
            offset += e.recordCount();
        }
        return out;
    }

    private static NereusException corrupt(WalSectionRef t, String reason, Object... more) {
        Map<String, Object> context = ErrorContext.of("slice", t.sliceId(), "entry", t.entryId(),
                "position", t.positionInBatch(), "reason", reason);
        context.putAll(ErrorContext.of(more));
        return new NereusException(ErrorCode.CORRUPT_DATA, context);
    }

    /** The WAL reader's failure as a failure of this target; anything else it fails with is transient. */
    private static NereusException translate(Throwable e, WalSectionRef t) {
        if (e instanceof NereusException n && FAILURES.contains(n.code())) {
            return n;
        }
        return new NereusException(ErrorCode.RETRIABLE_READ_FAILED,
                ErrorContext.of("slice", t.sliceId(), "entry", t.entryId()), e);
    }
}
