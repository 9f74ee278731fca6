package io.nereus.metadata;

import static io.nereus.metadata.StoreFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import io.nereus.metadata.codec.FormatVersion;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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
}
