package io.nereus.object;

import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.metadata.OffsetRange;
import io.nereus.metadata.ReadView;
import io.nereus.metadata.StreamEntry;
import io.nereus.metadata.StreamId;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A stream object stored in the filesystem object store and read back through ranged gets of that store. */
class StreamObjectStoreReadTest {
    @TempDir
    Path dir;

    private static <T> T await(CompletableFuture<T> f) throws Exception {
        return f.get(30, TimeUnit.SECONDS);
    }

    @Test
    void storedObject_readsBackByteExactThroughTheStore() throws Exception {
        List<StreamEntry> written = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            written.add(new StreamEntry(new OffsetRange(i, i + 1), ("entry-" + i).getBytes(StandardCharsets.UTF_8)));
        }
        // the object's blocks in pooled direct buffers, put as they are (as the materializer puts them)
        try (ObjectStore store = await(FilesystemObjectStore.open(ObjectStoreConfig.Filesystem.of(dir)));
                StreamObjectWriter.Builder builder = new StreamObjectWriter(4096).builder(StreamId.of(7),
                        ReadView.COMMITTED, PooledByteBufAllocator.DEFAULT)) {
            written.forEach(builder::add);
            StreamObjectWriter.Encoded encoded = builder.finish();
            ObjectName name = ObjectName.of("streams/7/g1-0-3000");
            StoredObject stored = await(store.putNew(name, encoded.content()));
            assertThat(stored.size()).isEqualTo(encoded.length());
            StreamObjectReader reader = await(StreamObjectReader.open(store, name, stored.size(), encoded.checksum(),
                    new BlockCache(1 << 20)));
            assertThat(reader.range()).isEqualTo(new OffsetRange(0, 3_000));
            for (int o : new int[] {0, 1, 1_499, 2_999}) {
                assertThat(new String(await(reader.read(o, 1, Long.MAX_VALUE)).get(0).bytes(),
                        StandardCharsets.UTF_8)).isEqualTo("entry-" + o);
            }
            List<StreamEntry> all = await(reader.read(0, 3_000, Long.MAX_VALUE));
            assertThat(all).extracting(e -> new String(e.bytes(), StandardCharsets.UTF_8))
                    .containsExactlyElementsOf(written.stream()
                            .map(e -> new String(e.bytes(), StandardCharsets.UTF_8)).toList());
        }
    }
}
