package io.nereus.generation;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.nereus.metadata.IndexRecord;
import io.nereus.metadata.ObjectTarget;
import io.nereus.metadata.StreamEntry;
import io.nereus.object.BlockCache;
import io.nereus.object.ObjectName;
import io.nereus.object.ObjectStore;
import io.nereus.object.StreamObjectReader;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * Reads higher-generation targets: a stream object ({@link io.nereus.object.StreamObjectFormat}) in the object
 * store. Opening an object reads its footer and index and checks the index against the record's checksum;
 * every block read is checked against its CRC in the index. The object must hold exactly the record's stream,
 * view and range. Opened objects are kept (at most {@code maxOpenObjects}, least recently used dropped) so a
 * sequential reader fetches the index once; their blocks share one {@link BlockCache}.
 *
 * <p>Failures ({@link TargetReader#FAILURES}): TARGET_MISSING when the object is gone; CORRUPT_DATA when its
 * bytes do not match the record (checksum, CRC, layout, a shorter object than recorded); RETRIABLE_READ_FAILED
 * for a transient or refused object-store request, which says nothing about the object. Thread-safe.
 */
public final class ObjectTargetReader implements TargetReader {
    private final ObjectStore store;
    private final BlockCache blocks;
    private final Map<ObjectTarget, CompletableFuture<StreamObjectReader>> open;
    private final LongAdder bytesRead = new LongAdder();

    public ObjectTargetReader(ObjectStore store, BlockCache blocks, int maxOpenObjects) {
        this.store = store;
        this.blocks = blocks;
        this.open = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<ObjectTarget, CompletableFuture<StreamObjectReader>> e) {
                return size() > maxOpenObjects;
            }
        };
    }

    @Override
    public CompletableFuture<List<StreamEntry>> read(IndexRecord record, long offset, int maxEntries, long maxBytes) {
        if (!(record.target() instanceof ObjectTarget t)) {
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.RETRIABLE_READ_FAILED,
                    ErrorContext.of("reason", "not an object target", "target", record.target())));
        }
        return reader(record, t).thenCompose(r -> r.read(offset, maxEntries, maxBytes)).handle((entries, error) -> {
            if (error == null) {
                return entries;
            }
            NereusException failure = translate(Failures.unwrap(error), record, t);
            if (failure.code() != ErrorCode.RETRIABLE_READ_FAILED) {
                forget(t);
            }
            throw new CompletionException(failure);
        });
    }

    /** The last entry of {@code record}'s object, empty when it holds none; fails as {@link #read} does. */
    public CompletableFuture<java.util.Optional<StreamEntry>> last(IndexRecord record) {
        if (!(record.target() instanceof ObjectTarget t)) {
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.RETRIABLE_READ_FAILED,
                    ErrorContext.of("reason", "not an object target", "target", record.target())));
        }
        return reader(record, t).thenCompose(StreamObjectReader::last).handle((entry, error) -> {
            if (error == null) {
                return entry;
            }
            NereusException failure = translate(Failures.unwrap(error), record, t);
            if (failure.code() != ErrorCode.RETRIABLE_READ_FAILED) {
                forget(t);
            }
            throw new CompletionException(failure);
        });
    }

    private CompletableFuture<StreamObjectReader> reader(IndexRecord record, ObjectTarget t) {
        CompletableFuture<StreamObjectReader> f;
        boolean mine = false;
        synchronized (open) {
            f = open.get(t);
            if (f == null) {
                f = new CompletableFuture<>();
                open.put(t, f);
                mine = true;
            }
        }
        if (mine) {
            CompletableFuture<StreamObjectReader> result = f;
            opened(record, t).whenComplete((r, error) -> {
                if (error != null) {
                    forget(t, result);
                    result.completeExceptionally(error);
                } else {
                    result.complete(r);
                }
            });
        }
        return f;
    }

    private CompletableFuture<StreamObjectReader> opened(IndexRecord record, ObjectTarget t) {
        if (t.byteOffset() != 0 || t.byteLength() != t.objectSize() || !ObjectName.isValid(t.key())) {
            return CompletableFuture.failedFuture(corrupt(t, "target is not a whole stream object"));
        }
        ObjectName name = ObjectName.of(t.key());
        StreamObjectReader.RangeSource counted = StreamObjectReader.RangeSource.of(store, name, bytesRead::add);
        return StreamObjectReader.open(t.key(), t.objectSize(), record.checksum(), counted, blocks)
                .thenApply(r -> {
                    if (!r.stream().equals(record.stream()) || r.view() != record.view()
                            || !r.range().equals(record.range())) {
                        throw corrupt(t, "object holds another stream, view or range", "objectStream", r.stream(),
                                "objectView", r.view(), "objectRange", r.range(), "recordRange", record.range());
                    }
                    return r;
                });
    }

    /** Bytes fetched from the object store by this reader's ranged gets (footers, indexes and blocks). */
    public long bytesRead() {
        return bytesRead.sum();
    }

    private void forget(ObjectTarget t) {
        synchronized (open) {
            open.remove(t);
        }
    }

    private void forget(ObjectTarget t, CompletableFuture<StreamObjectReader> f) {
        synchronized (open) {
            open.remove(t, f);
        }
    }

    private static NereusException corrupt(ObjectTarget t, String reason, Object... more) {
        Map<String, Object> context = ErrorContext.of("object", t.key(), "reason", reason);
        context.putAll(ErrorContext.of(more));
        return new NereusException(ErrorCode.CORRUPT_DATA, context);
    }

    /** The store's or the format's failure as a failure of this target. */
    private static NereusException translate(Throwable e, IndexRecord record, ObjectTarget t) {
        if (e instanceof NereusException n) {
            switch (n.code()) {
                case TARGET_MISSING, CORRUPT_DATA -> {
                    return n;
                }
                case RANGE_NOT_SATISFIABLE -> {
                    return new NereusException(ErrorCode.CORRUPT_DATA, ErrorContext.of("object", t.key(),
                            "reason", "object is shorter than its record says", "recordedSize", t.objectSize()), n);
                }
                default -> {
                }
            }
        }
        return new NereusException(ErrorCode.RETRIABLE_READ_FAILED,
                ErrorContext.of("object", t.key(), "stream", record.stream(), "range", record.range()), e);
    }
}
