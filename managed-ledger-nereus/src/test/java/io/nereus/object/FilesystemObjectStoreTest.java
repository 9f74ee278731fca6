package io.nereus.object;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/** The {@link ObjectStore} contract on the filesystem store, plus what only it does. */
class FilesystemObjectStoreTest extends ObjectStoreContractTest {
    @TempDir
    Path dir;

    /** Whether the store is opened with direct I/O; {@link FilesystemObjectStorePageCacheTest} runs every test without. */
    boolean directIo() {
        return true;
    }

    @Override
    protected ObjectStore open(TestInfo test) {
        return await(FilesystemObjectStore.open(new ObjectStoreConfig.Filesystem(dir.resolve("objects"),
                ObjectStoreConfig.Filesystem.DEFAULT_IO_THREADS, directIo())));
    }

    @Test
    void open_usesDirectIo_exactlyWhenConfigured_onThisFilesystem() {
        assertThat(((FilesystemObjectStore) store).usesDirectIo()).isEqualTo(directIo());
    }

    /**
     * Direct I/O moves whole blocks through a staging buffer of {@link DirectFiles#STAGING_BYTES}: objects of every
     * length around the block and staging sizes, from chunks of unaligned heap and direct buffers, are stored at
     * their exact length and read back byte-exact at unaligned ranges, across blocks and staging buffers.
     */
    @Test
    void putNew_thenGet_objectsAroundBlockAndStagingSizes_storedAtTheirLength_andEveryRangeReadsBack()
            throws IOException {
        int staging = DirectFiles.STAGING_BYTES;
        int[] lengths = {1, 511, 4095, 4096, 4097, 3 * 4096 + 17, staging - 1, staging, staging + 1,
            2 * staging + 12_345};
        for (int length : lengths) {
            byte[] expected = bytes(length, length);
            int a = length / 3;
            int b = length / 2;
            ByteBuffer direct = ByteBuffer.allocateDirect(b - a + 3).position(3); // unaligned
            direct.put(expected, a, b - a).position(3);
            ObjectName name = name("shape/" + length);
            await(store.putNew(name, ObjectContent.ofBuffers(ByteBuffer.wrap(expected, 0, a), direct,
                    ByteBuffer.wrap(expected, b, length - b))));

            assertThat(Files.size(root().resolve("shape/" + length))).as("file length of %d", length)
                    .isEqualTo(length);
            for (long[] r : new long[][] {{0, length}, {0, 1}, {length - 1, 1}, {length / 7, length - length / 7},
                {Math.max(0, staging - 3), 7}, {Math.max(0, 4093), 9}, {17, length - 20}}) {
                long offset = r[0];
                long count = Math.min(r[1], length - offset);
                if (offset >= length || count <= 0) {
                    continue;
                }
                assertThat(await(store.get(name, ByteRange.of(offset, count))))
                        .as("[%d, +%d) of %d", offset, count, length)
                        .isEqualTo(Arrays.copyOfRange(expected, (int) offset, (int) (offset + count)));
                ByteBuf buffer = await(store.getBuffer(name, ByteRange.of(offset, count)));
                try {
                    assertThat(buffer.isDirect()).as("a block's buffer is direct memory").isTrue();
                    assertThat(ByteBufUtil.getBytes(buffer)).as("buffer [%d, +%d) of %d", offset, count, length)
                            .isEqualTo(Arrays.copyOfRange(expected, (int) offset, (int) (offset + count)));
                } finally {
                    assertThat(buffer.release()).isTrue();
                }
            }
        }
        byte[] file = bytes(2 * staging + 20_000, 7);
        Path source = dir.resolve("content");
        Files.write(source, file);
        int length = 2 * staging + 12_345;
        await(store.putNew(name("shape/file"), ObjectContent.ofFile(source, length)));
        assertThat(Files.size(root().resolve("shape/file"))).isEqualTo(length);
        assertThat(await(store.get(name("shape/file"), ByteRange.of(0, length))))
                .isEqualTo(Arrays.copyOf(file, length));
    }

    private Path root() {
        return dir.resolve("objects");
    }

    @Test
    void putNew_writesTheObjectAsAFileUnderItsName_andLeavesNoTemporaryFile() throws IOException {
        await(store.putNew(name("x/y/z"), ObjectContent.of(bytes(10, 1))));

        assertThat(Files.readAllBytes(root().resolve("x/y/z"))).isEqualTo(bytes(10, 1));
        assertThat(files(root().resolve(FilesystemObjectStore.TMP_DIR))).isEmpty();
    }

    @Test
    void putNew_versionIsTheContentsCrc32c() {
        byte[] b = bytes(1234, 5);
        CRC32C crc = new CRC32C();
        crc.update(b);

        StoredObject stored = await(store.putNew(name("crc"), ObjectContent.of(b)));

        assertThat(stored.version()).isEqualTo(String.format("crc32c:%08x", crc.getValue()));
    }

    @Test
    void putNew_fileContent_versionIsItsCrc32c_andAShorterFileFailsWithoutAnObject() throws IOException {
        byte[] b = bytes(200_000, 6);
        Path file = dir.resolve("content.spill");
        Files.write(file, b);
        CRC32C crc = new CRC32C();
        crc.update(b);

        StoredObject stored = await(store.putNew(name("from-file"), ObjectContent.ofFile(file, b.length)));

        assertThat(stored.version()).isEqualTo(String.format("crc32c:%08x", crc.getValue()));
        NereusException e = failure(store.putNew(name("short-file"), ObjectContent.ofFile(file, b.length + 1)));
        assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED);
        assertThat(names(await(store.list("")))).containsExactly("from-file");
        assertThat(files(root().resolve(FilesystemObjectStore.TMP_DIR))).isEmpty();
    }

    @Test
    void list_neverShowsTemporaryFilesOrTheLock() throws IOException {
        Files.write(root().resolve(FilesystemObjectStore.TMP_DIR).resolve("99.tmp"), bytes(5, 1));
        await(store.putNew(name("visible"), ObjectContent.of(bytes(5, 2))));

        assertThat(names(await(store.list("")))).containsExactly("visible");
        assertThat(failed(store.list(".tmp"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void open_removesATemporaryFileACrashLeft_whichListingIgnoredMeanwhile() throws IOException {
        await(store.putNew(name("kept"), ObjectContent.of(bytes(5, 2))));
        Path leftover = root().resolve(FilesystemObjectStore.TMP_DIR).resolve("7.tmp");
        Files.write(leftover, bytes(100, 3)); // as a put that crashed before linking leaves it
        assertThat(names(await(store.list("")))).containsExactly("kept");
        store.close();

        store = open(null);

        assertThat(leftover).doesNotExist();
        assertThat(names(await(store.list("")))).containsExactly("kept");
        assertThat(await(store.get(name("kept"), ByteRange.of(0, 5)))).isEqualTo(bytes(5, 2));
    }

    @Test
    void open_directoryAlreadyOpen_refusedNamingTheDirectory() {
        NereusException e = failure(FilesystemObjectStore.open(new ObjectStoreConfig.Filesystem(root(),
                ObjectStoreConfig.Filesystem.DEFAULT_IO_THREADS, directIo())));

        assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_STORE_REFUSED);
        assertThat(e.context()).containsEntry("dir", root());
        assertThat(String.valueOf(e.context().get("reason"))).contains("has the directory open");
    }

    @Test
    void open_afterClose_succeeds_andSeesTheObjects() {
        await(store.putNew(name("durable"), ObjectContent.of(bytes(8, 4))));
        store.close();

        store = open(null);

        assertThat(await(store.get(name("durable"), ByteRange.of(0, 8)))).isEqualTo(bytes(8, 4));
    }

    @Test
    void open_pathIsAFile_refusedNamingIt() throws IOException {
        Path file = Files.write(dir.resolve("plain-file"), bytes(1, 1));

        NereusException e = failure(FilesystemObjectStore.open(ObjectStoreConfig.Filesystem.of(file)));

        assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_STORE_REFUSED);
        assertThat(e.context()).containsEntry("dir", file);
    }

    @Test
    void putNew_nameClashingWithADirectoryOrAFile_refusedObjectExists_othersIntact() {
        await(store.putNew(name("p/q"), ObjectContent.of(bytes(4, 1))));

        assertThat(failure(store.putNew(name("p"), ObjectContent.of(bytes(3, 2)))).code())
                .isEqualTo(ErrorCode.OBJECT_EXISTS);
        assertThat(failure(store.putNew(name("p/q/r"), ObjectContent.of(bytes(3, 2)))).code())
                .isEqualTo(ErrorCode.OBJECT_EXISTS);
        assertThat(failure(store.get(name("p"), ByteRange.of(0, 0))).code()).isEqualTo(ErrorCode.TARGET_MISSING);
        await(store.delete(name("p")));
        assertThat(names(await(store.list("")))).containsExactly("p/q");
        assertThat(await(store.get(name("p/q"), ByteRange.of(0, 4)))).isEqualTo(bytes(4, 1));
    }

    @Test
    void list_leavesOutFilesWhoseNamesAreNotObjectNames() throws IOException {
        Files.createDirectories(root().resolve("odd"));
        Files.write(root().resolve("odd/UPPER"), bytes(1, 1));
        Files.write(root().resolve("odd/.hidden"), bytes(1, 1));
        await(store.putNew(name("odd/fine"), ObjectContent.of(bytes(2, 2))));

        assertThat(names(await(store.list("")))).containsExactly("odd/fine");
    }

    private static List<Path> files(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
