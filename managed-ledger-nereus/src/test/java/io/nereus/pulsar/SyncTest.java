package io.nereus.pulsar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nereus.metadata.MetadataExecutor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
    void aWaitOnAMetadataThread_failsAtOnceNamingTheThread_unlessTheResultIsThere() throws Exception {
        MetadataExecutor metadata = MetadataExecutor.create(1, "test-metadata");
        try {
            CompletableFuture<Throwable> refused = new CompletableFuture<>();
            CompletableFuture<String> done = new CompletableFuture<>();
            metadata.execute(() -> {
                try {
                    Sync.await(new CompletableFuture<>());
                    refused.complete(null);
                } catch (Exception e) {
                    refused.complete(e);
                }
                try {
                    done.complete(Sync.await(CompletableFuture.completedFuture("there")));
                } catch (Exception e) {
                    done.completeExceptionally(e);
                }
            });
            assertThat(refused.get(10, TimeUnit.SECONDS)).isInstanceOf(ManagedLedgerException.class)
                    .hasMessageContaining("metadata thread test-metadata-1 would wait for itself");
            assertThat(done.get(10, TimeUnit.SECONDS)).isEqualTo("there");
        } finally {
            metadata.shutdown();
        }
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
