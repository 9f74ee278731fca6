package io.nereus.metadata;

import static io.nereus.metadata.TransactionRunner.guard;

import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.NereusException;
import io.nereus.metadata.codec.CursorStateCodec;
import io.nereus.metadata.codec.LedgerPropertiesCodec;
import io.nereus.metadata.codec.StreamHeadCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Durable cursor state and managed-ledger properties of streams. Writes are conditional on the stream's
 * writer epoch, read in the same transaction, so a broker that lost ownership cannot overwrite them.
 * Cursor state is stored whole and exact in chunks ({@link CursorStateCodec}); a state too large for one
 * transaction is refused with an error, never truncated. Each operation is one transaction of the shared
 * {@link TransactionRunner}; methods return futures and never throw (argument errors and a state too large fail
 * the future), and a write by a fenced writer is a {@link WriteOutcome}, not an exception. Thread-safe; holds no
 * mutable state.
 */
public final class CursorStore {
    /**
     * Most bytes of cursor values one save writes; FoundationDB's transaction limit is 10,000,000 bytes
     * including keys and the clear of the previous state.
     */
    public static final long MAX_CURSOR_STATE_BYTES = 9_000_000;

    private final TransactionRunner tx;
    private final NereusKeyspace ks;

    CursorStore(TransactionRunner tx, NereusKeyspace ks) {
        this.tx = tx;
        this.ks = ks;
    }

    /** Replaces the state of {@code cursorName} with {@code state} if {@code writerEpoch} is the head's epoch. */
    public CompletableFuture<WriteOutcome> saveCursor(StreamId stream, String cursorName, long writerEpoch,
            CursorState state) {
        return guard(() -> {
            Range range = ks.cursorRange(stream, cursorName);
            List<byte[]> values = CursorStateCodec.INSTANCE.encode(state);
            long total = values.stream().mapToLong(v -> v.length).sum();
            if (total > MAX_CURSOR_STATE_BYTES) {
                throw new IllegalArgumentException("cursor " + cursorName + " of " + stream + " encodes to " + total
                        + " bytes, more than one transaction can write (" + MAX_CURSOR_STATE_BYTES
                        + "); refusing rather than truncating");
            }
            List<byte[]> keys = new ArrayList<>(values.size());
            for (int i = 0; i < values.size(); i++) {
                keys.add(ks.cursorChunkKey(stream, cursorName, i));
            }
            return conditional(stream, writerEpoch, tr -> {
                tr.clear(range);
                for (int i = 0; i < values.size(); i++) {
                    tr.set(keys.get(i), values.get(i));
                }
            });
        });
    }

    /** The stored state of {@code cursorName}, if any. */
    public CompletableFuture<Optional<CursorState>> loadCursor(StreamId stream, String cursorName) {
        return guard(() -> {
            Range range = ks.cursorRange(stream, cursorName);
            return tx.read(tr -> tr.getRange(range).asList().thenApply(kvs -> {
                if (kvs.isEmpty()) {
                    return Optional.<CursorState>empty();
                }
                List<byte[]> values = new ArrayList<>(kvs.size());
                for (int i = 0; i < kvs.size(); i++) {
                    NereusKeyspace.CursorChunkKey k = ks.unpackCursorChunkKey(kvs.get(i).getKey());
                    if (k.chunk() != i) {
                        throw new NereusException(ErrorCode.METADATA_FORMAT, ErrorContext.of("value", "CursorState",
                                "reason", "chunk missing", "stream", stream, "cursor", cursorName, "chunk", i,
                                "found", k.chunk()));
                    }
                    values.add(kvs.get(i).getValue());
                }
                return Optional.of(CursorStateCodec.INSTANCE.decode(values));
            }));
        });
    }

    /** Removes {@code cursorName} if {@code writerEpoch} is the head's epoch. Idempotent. */
    public CompletableFuture<WriteOutcome> deleteCursor(StreamId stream, String cursorName, long writerEpoch) {
        return guard(() -> {
            Range range = ks.cursorRange(stream, cursorName);
            return conditional(stream, writerEpoch, tr -> tr.clear(range));
        });
    }

    /**
     * The names of the stream's cursors, in key order. Reads one key per cursor (each read jumps past the
     * previous cursor's chunks), so large cursor states are not read.
     */
    public CompletableFuture<List<String>> listCursors(StreamId stream) {
        return guard(() -> tx.read(tr -> {
            List<String> names = new ArrayList<>();
            Range all = ks.cursorsRange(stream);
            byte[][] from = {all.begin};
            return AsyncUtil.whileTrue(() -> tr.getRange(from[0], all.end, 1).asList()
                    .thenApply(kvs -> {
                        if (kvs.isEmpty()) {
                            return false;
                        }
                        String name = ks.unpackCursorChunkKey(kvs.get(0).getKey()).cursorName();
                        names.add(name);
                        from[0] = ks.cursorRange(stream, name).end;
                        return true;
                    }), tx.executor()).thenApply(ignored -> names);
        }));
    }

    /** Replaces the managed-ledger properties if {@code writerEpoch} is the head's epoch. */
    public CompletableFuture<WriteOutcome> saveProperties(StreamId stream, long writerEpoch, LedgerProperties props) {
        return guard(() -> {
            byte[] value = LedgerPropertiesCodec.INSTANCE.encode(props);
            byte[] key = ks.propsKey(stream);
            return conditional(stream, writerEpoch, tr -> tr.set(key, value));
        });
    }

    /** The managed-ledger properties; empty properties when none were saved. */
    public CompletableFuture<LedgerProperties> loadProperties(StreamId stream) {
        return guard(() -> {
            byte[] key = ks.propsKey(stream);
            return tx.read(tr -> tr.get(key).thenApply(v -> v == null ? LedgerProperties.empty()
                    : LedgerPropertiesCodec.INSTANCE.decode(v)));
        });
    }

    private CompletableFuture<WriteOutcome> conditional(StreamId stream, long writerEpoch,
            java.util.function.Consumer<Transaction> write) {
        Objects.requireNonNull(stream, "stream");
        byte[] headKey = ks.headKey(stream);
        Function<Transaction, CompletableFuture<WriteOutcome>> body = tr -> tr.get(headKey).thenApply(h -> {
            if (h == null) {
                return new WriteOutcome.UnknownStream(stream);
            }
            StreamHead head = StreamHeadCodec.INSTANCE.decode(h);
            if (head.writerEpoch() != writerEpoch) {
                return new WriteOutcome.Fenced(head.writerEpoch(), writerEpoch);
            }
            write.accept(tr);
            return WriteOutcome.WRITTEN;
        });
        return tx.run(body);
    }
}
