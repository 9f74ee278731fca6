package io.nereus.object;

import static io.nereus.testing.StreamTesting.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.nereus.error.ErrorCode;
import io.nereus.error.NereusException;
import io.nereus.testing.S3ProxyServer;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;

/**
 * The {@link ObjectStore} contract on the S3 store against a real S3-compatible server (S3Proxy, started by
 * {@link S3ProxyServer}), plus what only it does. Each test has its own key prefix in the shared bucket.
 */
@ExtendWith(S3ProxyServer.class)
class S3ObjectStoreTest extends ObjectStoreContractTest {
    private static final AtomicInteger TESTS = new AtomicInteger();
    private static S3ProxyServer server;
    private String prefix;

    @BeforeAll
    static void server(S3ProxyServer s3) {
        server = s3;
    }

    @Override
    protected ObjectStore open(TestInfo test) {
        if (test != null) {
            String method = test.getTestMethod().map(m -> m.getName()).orElse("test");
            prefix = "tests/" + TESTS.incrementAndGet() + "-" + method.toLowerCase(Locale.ROOT).replace('_', '-');
        }
        return await(S3ObjectStore.open(server.config(prefix, PART_BYTES)));
    }

    @Test
    void putNew_keyIsPrefixSlashName_andTheVersionIsTheETag() {
        StoredObject stored = await(store.putNew(name("k/v"), ObjectContent.of(bytes(10, 1))));

        HeadObjectResponse head = await(server.client().headObject(b -> b.bucket(S3ProxyServer.BUCKET)
                .key(prefix + "/k/v")));
        assertThat(head.contentLength()).isEqualTo(10);
        assertThat(stored.version()).isEqualTo(head.eTag());
    }

    @Test
    void list_followsPagesBeyondAThousandKeys() {
        int count = S3ObjectStore.LIST_PAGE_KEYS + 7;
        Semaphore inFlight = new Semaphore(64);
        List<CompletableFuture<StoredObject>> puts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            inFlight.acquireUninterruptibly();
            CompletableFuture<StoredObject> put = store.putNew(name(String.format("many/%05d", i)),
                    ObjectContent.of(bytes(i % 7, i)));
            put.whenComplete((r, t) -> inFlight.release());
            puts.add(put);
        }
        puts.forEach(p -> await(p));
        await(store.putNew(name("other/x"), ObjectContent.of(bytes(1, 1))));

        List<ObjectInfo> all = await(store.list("many/"));

        assertThat(all).hasSize(count);
        assertThat(names(all)).isSorted().doesNotHaveDuplicates().allMatch(n -> n.startsWith("many/"));
        assertThat(all.get(count - 1).name()).isEqualTo(name(String.format("many/%05d", count - 1)));
        assertThat(all.get(count - 1).size()).isEqualTo((count - 1) % 7);
    }

    @Test
    void putNew_repeatedWithTheSameWriteId_asTheSdkRetriesAPutWhoseResponseWasLost_succeeds() {
        S3ObjectStore s3 = (S3ObjectStore) store;
        byte[] b = bytes(100, 1);
        StoredObject first = await(s3.putNew(name("retried"), ObjectContent.of(b), "write-1"));

        StoredObject again = await(s3.putNew(name("retried"), ObjectContent.of(b), "write-1"));
        NereusException other = failure(s3.putNew(name("retried"), ObjectContent.of(b), "write-2"));

        assertThat(again).isEqualTo(first);
        assertThat(other.code()).isEqualTo(ErrorCode.OBJECT_EXISTS);
    }

    @Test
    void putNew_largeObjectRefused_leavesNoMultipartUploadBehind() {
        await(store.putNew(name("mpu/taken"), ObjectContent.of(bytes(10, 1))));

        assertThat(failure(store.putNew(name("mpu/taken"), ObjectContent.of(bytes(LARGE_BYTES, 2)))).code())
                .isEqualTo(ErrorCode.OBJECT_EXISTS);

        assertThat(await(server.client().listMultipartUploads(b -> b.bucket(S3ProxyServer.BUCKET)
                .prefix(prefix + "/"))).uploads()).isEmpty();
    }

    @Test
    void list_leavesOutKeysUnderThePrefixThatAreNotObjectNames() {
        await(server.client().putObject(b -> b.bucket(S3ProxyServer.BUCKET).key(prefix + "/odd/UPPER"),
                AsyncRequestBody.fromBytes(bytes(1, 1))));
        await(store.putNew(name("odd/fine"), ObjectContent.of(bytes(2, 2))));

        assertThat(names(await(store.list("")))).containsExactly("odd/fine");
    }

    @Test
    void open_missingBucket_refusedNamingTheBucket() {
        ObjectStoreConfig.S3 c = server.config("x", PART_BYTES);
        ObjectStoreConfig.S3 missing = new ObjectStoreConfig.S3("no-such-bucket", "x", c.endpoint(), c.region(), true,
                c.credentials(), PART_BYTES);

        NereusException e = failure(S3ObjectStore.open(missing));

        assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_STORE_REFUSED);
        assertThat(e.context()).containsEntry("bucket", "no-such-bucket").containsEntry("status", 404);
    }

    @Test
    void open_wrongSecret_refused() {
        ObjectStoreConfig.S3 c = server.config("x", PART_BYTES);
        ObjectStoreConfig.S3 wrong = new ObjectStoreConfig.S3(c.bucket(), "x", c.endpoint(), c.region(), true,
                Optional.of(new S3Credentials(S3ProxyServer.ACCESS_KEY, "not-the-secret")), PART_BYTES);

        NereusException e = failure(S3ObjectStore.open(wrong));

        assertThat(e.code()).isEqualTo(ErrorCode.OBJECT_STORE_REFUSED);
        assertThat(e.context()).containsEntry("status", 403);
    }

    @Test
    void open_unreachableEndpoint_failsRetriable() {
        ObjectStoreConfig.S3 c = server.config("x", PART_BYTES);
        ObjectStoreConfig.S3 nowhere = new ObjectStoreConfig.S3(c.bucket(), "x",
                Optional.of(URI.create("http://127.0.0.1:1")), c.region(), true, c.credentials(), PART_BYTES);

        NereusException e = failure(S3ObjectStore.open(nowhere));

        assertThat(e.code()).isEqualTo(ErrorCode.RETRIABLE_OBJECT_STORE_FAILED);
        assertThat(e.context()).containsEntry("bucket", c.bucket());
    }
}
