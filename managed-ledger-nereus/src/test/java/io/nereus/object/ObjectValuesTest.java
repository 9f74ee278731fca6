package io.nereus.object;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The object store's values: names, byte ranges, contents and store configurations check themselves. */
class ObjectValuesTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "streams/12/gen-3-0a1b.obj", "a_b-c.d", "x/y/z", "0"})
    void objectName_valid(String name) {
        assertThat(ObjectName.of(name).value()).isEqualTo(name);
        assertThat(ObjectName.isValid(name)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "/a", "a/", "a//b", ".", "..", "a/../b", "a/./b", ".hidden", "a/.tmp", "A", "a b",
        "a\\b", "a:b", "caf\u00e9", "a\nb", "a\u0000"})
    void objectName_invalid_refusedSaying(String name) {
        assertThat(ObjectName.isValid(name)).isFalse();
        assertThatThrownBy(() -> ObjectName.of(name)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid object name");
    }

    @Test
    void objectName_lengthLimits() {
        String segment = "s".repeat(ObjectName.MAX_SEGMENT_LENGTH);
        assertThat(ObjectName.isValid(segment)).isTrue();
        assertThat(ObjectName.isValid(segment + "s")).isFalse();
        String longest = segment + "/" + "b".repeat(ObjectName.MAX_LENGTH - ObjectName.MAX_SEGMENT_LENGTH - 3) + "/c";
        assertThat(longest).hasSize(ObjectName.MAX_LENGTH);
        assertThat(ObjectName.isValid(longest)).isTrue();
        assertThat(ObjectName.isValid(longest + "x")).isFalse();
        assertThatThrownBy(() -> ObjectName.of(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void objectName_prefixes() {
        assertThat(List.of("", "a", "a/", "a/b", "streams/1", "a.", "a-")).allMatch(ObjectName::isValidPrefix);
        assertThat(Arrays.asList("/", "/a", "a//", "a/.", "A", "a b", null)).noneMatch(ObjectName::isValidPrefix);
        assertThat(ObjectName.isValidPrefix("s".repeat(ObjectName.MAX_SEGMENT_LENGTH))).isTrue();
    }

    @Test
    void objectName_ordersByText() {
        assertThat(List.of(ObjectName.of("s/2"), ObjectName.of("s/10"), ObjectName.of("s-1")).stream().sorted()
                .map(ObjectName::value)).containsExactly("s-1", "s/10", "s/2");
    }

    @Test
    void byteRange_checksItself() {
        ByteRange r = ByteRange.of(10, 5);
        assertThat(r.end()).isEqualTo(15);
        assertThat(r.within(15)).isTrue();
        assertThat(r.within(14)).isFalse();
        assertThat(ByteRange.of(7, 0).isEmpty()).isTrue();
        assertThat(ByteRange.of(7, 0).within(7)).isTrue();
        assertThat(ByteRange.of(8, 0).within(7)).isFalse();
        assertThat(r).hasToString("[10, 15)");
        assertThatThrownBy(() -> ByteRange.of(-1, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ByteRange.of(0, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ByteRange.of(Long.MAX_VALUE, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(ByteRange.of(Long.MAX_VALUE - 1, 1).end()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void objectContent_slicesAcrossChunks() {
        ObjectContent c = ObjectContent.of(new byte[] {1, 2, 3}, new byte[0], new byte[] {4, 5}, new byte[] {6});

        assertThat(c.length()).isEqualTo(6);
        assertThat(bytes(c.buffers())).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(bytes(c.buffers(2, 3))).containsExactly(3, 4, 5);
        assertThat(bytes(c.buffers(5, 1))).containsExactly(6);
        assertThat(bytes(c.buffers(6, 0))).isEmpty();
        assertThat(c.buffers()).allMatch(ByteBuffer::isReadOnly);
        assertThatThrownBy(() -> c.buffers(4, 3)).isInstanceOf(IllegalArgumentException.class);
        assertThat(ObjectContent.of().length()).isZero();
        assertThat(ObjectContent.of(List.of(new byte[4], new byte[5])).length()).isEqualTo(9);
        assertThatThrownBy(() -> ObjectContent.of((byte[]) null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void objectContent_buffersAreNewViewsEachTime_soARetryReadsFromTheStart() {
        ObjectContent c = ObjectContent.of(new byte[] {1, 2, 3});
        ByteBuffer first = c.buffers()[0];
        first.get(new byte[3]);

        assertThat(c.buffers()[0].remaining()).isEqualTo(3);
    }

    @Test
    void objectContent_ofAFile_isItsLengthAndNamesTheFile_notInMemory() {
        ObjectContent c = ObjectContent.ofFile(java.nio.file.Path.of("spill.object"), 1234);

        assertThat(c.length()).isEqualTo(1234);
        assertThat(c.file()).contains(java.nio.file.Path.of("spill.object"));
        assertThat(ObjectContent.of(new byte[1]).file()).isEmpty();
        assertThatThrownBy(c::buffers).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> ObjectContent.ofFile(java.nio.file.Path.of("x"), -1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ObjectContent.ofFile(null, 1)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void s3Config_validatesEveryField() {
        Optional<URI> local = Optional.of(URI.create("http://127.0.0.1:9000"));
        long part = ObjectStoreConfig.S3.DEFAULT_PART_BYTES;
        ObjectStoreConfig.S3 ok = new ObjectStoreConfig.S3("my-bucket.1", "nereus/prod", local, "eu-west-1", true,
                Optional.of(new S3Credentials("AKIA", "secret")), part);

        assertThat(ok.toString()).contains("s3://my-bucket.1/nereus/prod", "http://127.0.0.1:9000", "static")
                .doesNotContain("secret");
        for (String bucket : List.of("ab", "Bucket", "-abc", "abc-", "a..b", "a_b", "x".repeat(64))) {
            assertThatThrownBy(() -> new ObjectStoreConfig.S3(bucket, "", local, "us-east-1", true, Optional.empty(),
                    part)).as(bucket).hasMessageContaining("bucket");
        }
        for (String prefix : List.of("/a", "a/", "a//b", "A", "x".repeat(512))) {
            assertThatThrownBy(() -> new ObjectStoreConfig.S3("bucket", prefix, local, "us-east-1", true,
                    Optional.empty(), part)).as(prefix).hasMessageContaining("prefix");
        }
        for (String endpoint : List.of("ftp://host", "host:9000", "http:/path", "http://h/?q=1")) {
            assertThatThrownBy(() -> new ObjectStoreConfig.S3("bucket", "", Optional.of(URI.create(endpoint)),
                    "us-east-1", true, Optional.empty(), part)).as(endpoint).hasMessageContaining("endpoint");
        }
        assertThatThrownBy(() -> new ObjectStoreConfig.S3("bucket", "", local, "Us East", true, Optional.empty(),
                part)).hasMessageContaining("region");
        assertThatThrownBy(() -> new ObjectStoreConfig.S3("bucket", "", local, "us-east-1", true, Optional.empty(),
                ObjectStoreConfig.S3.MIN_PART_BYTES - 1)).hasMessageContaining("part size");
        assertThatThrownBy(() -> new ObjectStoreConfig.Filesystem(Path.of("d"), 0, true)).hasMessageContaining("ioThreads");
    }

    @Test
    void s3Credentials_hideBothParts() {
        S3Credentials c = new S3Credentials("AKIAEXAMPLE", "wJalrXUtnFEMI");

        assertThat(c.toString()).doesNotContain("AKIAEXAMPLE").doesNotContain("wJalrXUtnFEMI").contains("(hidden)");
        assertThatThrownBy(() -> new S3Credentials("a", " ")).isInstanceOf(IllegalArgumentException.class);
    }

    private static byte[] bytes(ByteBuffer[] buffers) {
        int n = Arrays.stream(buffers).mapToInt(ByteBuffer::remaining).sum();
        ByteBuffer all = ByteBuffer.allocate(n);
        for (ByteBuffer b : buffers) {
            all.put(b.duplicate());
        }
        return all.array();
    }
}
