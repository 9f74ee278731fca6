package io.nereus.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.stream.BoundaryMode;
import io.nereus.stream.NereusStream;
import io.nereus.stream.ReadResult;
import io.nereus.wal.SliceMirrors;
import io.nereus.wal.WalBatch;
import io.nereus.wal.WalBatchCodec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** Helpers shared by the engine tests: bounded waits, whole-stream reads, a slice mirror's readiness. */
public final class StreamTesting {
    private StreamTesting() {
    }

    /**
     * Whether the local mirror of slice {@code slice} serves its first entry now (the buffer read is released): once
     * it does, every batch of the slice is in its file.
     */
    public static boolean mirrorReadable(SliceMirrors mirrors, long slice) {
        CompletableFuture<List<ByteBuf>> f = mirrors.read(slice, 0, 0);
        if (f == null) {
            return false;
        }
        f.join().forEach(ByteBuf::release);
        return true;
    }

    /** The future's value within 30 s; a failure is rethrown as is when unchecked. */
    public static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Every committed entry of {@code s} from {@code from}, read {@code perRead} entries at a time, as heap copies
     * (the entries read are released).
     */
    public static List<StreamEntry> readAll(NereusStream s, long from, int perRead) {
        List<StreamEntry> all = new ArrayList<>();
        long at = from;
        while (true) {
            ReadResult r = await(s.read(ReadView.COMMITTED, at, perRead, 1 << 20, BoundaryMode.EXACT_START));
            if (r.entries().isEmpty()) {
                return all;
            }
            all.addAll(StreamEntry.heapCopiesReleasing(r.entries()));
            at = r.nextOffset();
        }
    }

    /** Every stored payload from offset 0, checking that offsets are dense single-record entries. */
    public static List<byte[]> readDensePayloads(NereusStream s) {
        List<byte[]> all = new ArrayList<>();
        for (StreamEntry e : readAll(s, 0, 50)) {
            assertThat(e.range()).isEqualTo(OffsetRange.single(all.size()));
            all.add(e.bytes());
        }
        return all;
    }

    /** The stored bytes of {@code batch}, as the WAL writes them to BookKeeper. */
    public static byte[] encoded(WalBatch batch) {
        return WalBatchCodec.encode(batch);
    }
}
