package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class CatalogStoreTest {
    private final StoreFixture f = new StoreFixture();
    private final CatalogStore catalog = f.catalog;
    private final StreamCommitStore streams = f.streams;

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void openStream_createsOnceAndAllocatesReservedLedgerIds() {
        CatalogEntry a = await(catalog.openStream("tenant/ns/persistent/a"));
        CatalogEntry again = await(catalog.openStream("tenant/ns/persistent/a"));
        CatalogEntry b = await(catalog.openStream("tenant/ns/persistent/b"));
        assertThat(again).isEqualTo(a);
        assertThat(a.incarnation()).isEqualTo(1);
        assertThat(a.virtualLedgerId()).isEqualTo(CatalogEntry.MIN_VIRTUAL_LEDGER_ID);
        assertThat(b.streamId()).isNotEqualTo(a.streamId());
        assertThat(b.virtualLedgerId()).isEqualTo(a.virtualLedgerId() + 1);
        assertThat(await(streams.head(a.streamId()))).contains(StreamHead.initial());
    }

    @Test
    void deleteStream_thenRecreate_getsNewIncarnationAndIds() {
        CatalogEntry a = await(catalog.openStream("t"));
        Optional<CatalogEntry> deleted = await(catalog.deleteStream("t"));
        assertThat(deleted).map(CatalogEntry::state).contains(CatalogState.DELETED);
        assertThat(await(catalog.deleteStream("t"))).isEqualTo(deleted);
        assertThat(await(streams.head(a.streamId()))).map(StreamHead::state).contains(StreamState.DELETING);
        CatalogEntry again = await(catalog.openStream("t"));
        assertThat(again.incarnation()).isEqualTo(2);
        assertThat(again.state()).isEqualTo(CatalogState.ACTIVE);
        assertThat(again.streamId()).isNotEqualTo(a.streamId());
        assertThat(again.virtualLedgerId()).isNotEqualTo(a.virtualLedgerId());
        assertThat(await(catalog.deleteStream("never"))).isEmpty();
    }

    @Test
    void concurrentOpens_ofManyNames_allocateDistinctIds() {
        List<CompletableFuture<CatalogEntry>> fs = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            fs.add(catalog.openStream("t" + i));
        }
        List<CatalogEntry> entries = fs.stream().map(StoreFixture::await).toList();
        assertThat(entries.stream().map(CatalogEntry::streamId).distinct()).hasSize(20);
        assertThat(entries.stream().map(CatalogEntry::virtualLedgerId).distinct()).hasSize(20);
    }
}
