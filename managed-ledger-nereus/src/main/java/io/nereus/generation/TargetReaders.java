package io.nereus.generation;

import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.WalTarget;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/** The reader of every kind of target: WAL sections (generation 0) and stream objects (higher generations). */
public final class TargetReaders implements TargetReader {
    private final TargetReader wal;
    private final TargetReader objects;

    public TargetReaders(TargetReader wal, TargetReader objects) {
        this.wal = Objects.requireNonNull(wal, "wal");
        this.objects = Objects.requireNonNull(objects, "objects");
    }

    @Override
    public CompletableFuture<List<StreamEntry>> read(IndexRecord record, long offset, int maxEntries, long maxBytes) {
        return record.target() instanceof WalTarget ? wal.read(record, offset, maxEntries, maxBytes)
                : objects.read(record, offset, maxEntries, maxBytes);
    }
}
