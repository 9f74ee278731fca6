package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import io.nereus.fdb.embedded.EmbeddedFdb;
import io.nereus.metadata.codec.FormatVersion;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(120)
class MetadataStoreTest {
    private final StoreFixture f = new StoreFixture();

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void open_writesFormatAndRefusesUnknownLayout() {
        byte[] stored = f.db.read(tr -> tr.get(f.ks.formatKey()).join());
        assertThat(FormatVersion.check(stored)).isEqualTo(FormatVersion.CURRENT);
        assertThat(await(MetadataStore.open(f.db, f.ks, f.executor()))).isNotNull();
        f.db.run(tr -> {
            tr.set(f.ks.formatKey(), FormatVersion.encode(FormatVersion.CURRENT + 1));
            return null;
        });
        assertThatThrownBy(() -> await(MetadataStore.open(f.db, f.ks, f.executor())))
                .isInstanceOf(FormatVersion.UnsupportedFormatVersionException.class)
                .hasMessageContaining("layout version 2 is not supported");
    }

    @Test
    void open_worksOnADirectoryLayerRoot() {
        List<String> path = List.of("nereus-test-dir", java.util.UUID.randomUUID().toString());
        DirectorySubspace dir = await(DirectoryLayer.getDefault().createOrOpen(f.db, path));
        try {
            MetadataStore onDir = await(MetadataStore.open(f.db, new NereusKeyspace(dir), f.executor()));
            assertThat(await(onDir.catalog().openStream("t")).streamId()).isEqualTo(StreamId.of(1));
        } finally {
            await(DirectoryLayer.getDefault().removeIfExists(f.db, path));
        }
    }

    private static final List<String> ROOT = List.of("nereus", "cluster-a");
    private static final Executor EXECUTOR = ForkJoinPool.commonPool();

    @Test
    void open_embeddedDir_createsTheDirectoryRootAndKeepsItAcrossReopen(@TempDir Path dir) {
        CatalogEntry created;
        try (MetadataStore store = await(MetadataStore.open(Optional.empty(), Optional.of(dir), Duration.ZERO, ROOT,
                EXECUTOR))) {
            created = await(store.catalog().openStream("t"));
        }
        try (MetadataStore store = await(MetadataStore.open(Optional.empty(), Optional.of(dir), Duration.ZERO, ROOT,
                EXECUTOR))) {
            assertThat(await(store.catalog().catalogEntry("t"))).contains(created);
        }
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            assertThat(await(DirectoryLayer.getDefault().exists(db, ROOT))).as("root is a DirectoryLayer directory")
                    .isTrue();
        }
    }

    @Test
    void open_unknownLayout_failsAndClosesTheDatabaseItOpened(@TempDir Path dir) {
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            DirectorySubspace root = await(DirectoryLayer.getDefault().createOrOpen(db, ROOT));
            db.run(tr -> {
                tr.set(new NereusKeyspace(root).formatKey(), FormatVersion.encode(FormatVersion.CURRENT + 1));
                return null;
            });
        }
        assertThatThrownBy(() -> await(MetadataStore.open(Optional.empty(), Optional.of(dir), Duration.ZERO, ROOT,
                EXECUTOR)))
                .isInstanceOf(FormatVersion.UnsupportedFormatVersionException.class);
        // EmbeddedFdb holds a file lock on its directory while open: opening it again proves it was closed
        try (EmbeddedFdb db = EmbeddedFdb.open(dir)) {
            assertThat(await(DirectoryLayer.getDefault().exists(db, ROOT))).isTrue();
        }
    }

    @Test
    void open_unreadableClusterFile_failsTheFutureInsteadOfThrowing(@TempDir Path dir) {
        var opened = MetadataStore.open(Optional.of(dir.resolve("missing.cluster")), Optional.empty(), Duration.ZERO,
                ROOT, EXECUTOR);
        assertThatThrownBy(() -> await(opened)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not exist or is not readable");
    }

    @Test
    void close_ofAStoreOnACallersDatabase_leavesTheDatabaseOpen() {
        MetadataStore store = await(MetadataStore.open(f.db, f.ks, f.executor()));
        store.close();
        assertThat(await(f.catalog.openStream("still-open")).streamId()).isEqualTo(StreamId.of(1));
    }
}
