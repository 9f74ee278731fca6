package io.nereus.metadata;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.nereus.fdb.embedded.EmbeddedFdb;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** An in-memory EmbeddedFdb with a MetadataStore on it, for the operation tests. */
final class StoreFixture implements AutoCloseable {
    final EmbeddedFdb db = EmbeddedFdb.inMemory();
    final NereusKeyspace ks = new NereusKeyspace(new Subspace(Tuple.from("nereus", "test")));
    final MetadataStore store = await(MetadataStore.open(db, ks, db.getExecutor()));
    final CursorStore cursors = new CursorStore(store);

    static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A created stream with writer "w" acquired: its head (epoch in writerEpoch()). */
    StreamId newStream(String name) {
        return await(store.openStream(name)).streamId();
    }

    long acquire(StreamId s) {
        return await(store.acquireWriter(s, "w")).writerEpoch();
    }

    static StreamAppend append(StreamId s, long epoch, long start, long end, long slice, long entry, int pos) {
        return new StreamAppend(s, epoch, OffsetRange.of(start, end), new WalTarget(slice, entry, pos),
                Checksum.crc32c(start * 31 + end), end - start, 10 * (end - start));
    }

    @Override
    public void close() {
        db.close();
    }
}
