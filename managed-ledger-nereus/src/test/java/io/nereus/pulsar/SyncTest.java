package io.nereus.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.bookkeeper.mledger.Entry;
import org.apache.bookkeeper.mledger.ManagedLedgerException;
import org.apache.bookkeeper.mledger.impl.EntryImpl;
import org.junit.jupiter.api.Test;

class SyncTest {
    @Test
    void aWaitThatTimesOut_releasesTheEntriesWhenTheyArrive() {
        CompletableFuture<List<Entry>> read = new CompletableFuture<>();
        assertThatThrownBy(() -> Sync.await(read, Duration.ofMillis(1), "read"))
                .isInstanceOf(ManagedLedgerException.class).hasMessageContaining("timed out");
        ByteBuf data = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(7);
        Entry entry = EntryImpl.create(1, 0, data); // the entry's own reference
        data.release();
        read.complete(List.of(entry));
        assertThat(data.refCnt()).as("released by the abandoned wait").isZero();
    }

    @Test
    void aWaitThatCompletes_handsTheEntriesOver() throws Exception {
        ByteBuf data = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(7);
        Entry entry = EntryImpl.create(1, 0, data);
        data.release();
        List<Entry> got = Sync.await(CompletableFuture.completedFuture(List.of(entry)), Duration.ofSeconds(1), "read");
        assertThat(data.refCnt()).isOne();
        got.forEach(Entry::release);
        assertThat(data.refCnt()).isZero();
    }
}
