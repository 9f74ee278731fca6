package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.generation.PhysicalReadException.Reason;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.WalTarget;
import io.nereus.wal.WalBatch;
import io.nereus.wal.WalBatchCodec;
import io.nereus.wal.WalEntry;
import io.nereus.wal.WalReader;
import io.nereus.wal.WalSection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Reads generation-0 targets: the stream's section of a WAL batch. The section must belong to the record's
 * stream, cover exactly the record's range and match the record's checksum; anything else is CORRUPT.
 */
public final class WalTargetReader implements TargetReader {
    private final WalReader wal;

    public WalTargetReader(WalReader wal) {
        this.wal = wal;
    }

    @Override
    public CompletableFuture<List<ResolvedEntry>> read(IndexRecord record) {
        if (!(record.target() instanceof WalTarget t)) {
            return CompletableFuture.failedFuture(new PhysicalReadException(Reason.UNSUPPORTED,
                    "no reader for target " + record.target(), null));
        }
        return wal.read(t.sliceId(), t.entryId()).handle((batch, error) -> {
            if (error != null) {
                throw new CompletionException(translate(Failures.unwrap(error), t));
            }
            try {
                return entries(record, t, batch);
            } catch (PhysicalReadException e) {
                wal.invalidate(t.sliceId(), t.entryId());
                throw new CompletionException(e);
            }
        });
    }

    private static List<ResolvedEntry> entries(IndexRecord record, WalTarget t, WalBatch batch) {
        if (t.positionInBatch() >= batch.sections().size()) {
            throw corrupt(t, "batch has no section at position " + t.positionInBatch());
        }
        WalSection s = batch.sections().get(t.positionInBatch());
        if (!s.stream().equals(record.stream()) || !s.range().equals(record.range())) {
            throw corrupt(t, "section holds " + s.stream() + " " + s.range() + ", index says " + record.stream() + " "
                    + record.range());
        }
        if (!WalBatchCodec.verifySection(s, record.checksum())) {
            throw corrupt(t, "section checksum does not match the index record's " + record.checksum());
        }
        List<ResolvedEntry> out = new ArrayList<>(s.entries().size());
        long offset = s.firstOffset();
        for (WalEntry e : s.entries()) {
            out.add(new ResolvedEntry(new OffsetRange(offset, offset + e.recordCount()), e.payload()));
            offset += e.recordCount();
        }
        return out;
    }

    private static PhysicalReadException corrupt(WalTarget t, String what) {
        return new PhysicalReadException(Reason.CORRUPT, "WAL slice " + t.sliceId() + " entry " + t.entryId() + ": "
                + what, null);
    }

    private static PhysicalReadException translate(Throwable e, WalTarget t) {
        if (e instanceof NereusException n && n.code() == ErrorCode.CORRUPT_DATA) {
            return new PhysicalReadException(Reason.CORRUPT, "WAL slice " + t.sliceId() + " entry " + t.entryId()
                    + ": " + n.getMessage(), n);
        }
        if (e instanceof NereusException n && (n.code() == ErrorCode.TARGET_MISSING
                || n.code() == ErrorCode.RETRIABLE_READ_FAILED)) {
            return new PhysicalReadException(n.code() == ErrorCode.TARGET_MISSING ? Reason.MISSING : Reason.TRANSIENT,
                    n.getMessage(), n);
        }
        return new PhysicalReadException(Reason.TRANSIENT, "reading WAL slice " + t.sliceId() + " failed", e);
    }
}
