package io.nereus.object;

import io.nereus.error.ErrorCode;
import io.nereus.error.ErrorContext;
import io.nereus.error.Failures;
import io.nereus.error.NereusException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.FileRequestBodyConfiguration;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.core.async.SdkPublisher;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.SdkEventLoopGroup;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3AsyncClientBuilder;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.utils.SdkAutoCloseable;

/**
 * The {@link ObjectStore} on an S3-compatible server, through the AWS SDK for Java v2 ({@link S3AsyncClient} over
 * its Netty HTTP client). The object {@code name} is the key {@code prefix/name} of the bucket.
 *
 * <h2>Never overwriting</h2>
 * A put sends {@code If-None-Match: *}: with a {@code PutObject} up to {@code partBytes}, else with the
 * {@code CompleteMultipartUpload} of an upload in parts of {@code partBytes} ({@link S3Multipart}). The server
 * refuses it (412) when the key exists, atomically, also when two puts race. The SDK retries a request whose
 * response it lost, and a retried put finds the key taken, by itself: so every put carries a random write id as
 * user metadata ({@value #WRITE_ID}), and a refused put reads the existing object's back; its own id means the
 * put succeeded. The server must support conditional writes (AWS S3 does; S3Proxy with its {@code transient-nio2}
 * and {@code filesystem-nio2} backends does; one that answers 501 fails every put with OBJECT_STORE_REFUSED).
 *
 * <h2>Reads and listing</h2>
 * A get is one ranged {@code GetObject} ({@code HeadObject} for an empty range); S3 answers a range that starts
 * inside the object and ends beyond it with the bytes it has, which the store reports as RANGE_NOT_SATISFIABLE
 * like a range starting beyond the end (416). A listing follows {@code ListObjectsV2} pages of up to 1000 keys;
 * keys under the prefix that are not object names are left out. Delete is S3's, which is idempotent.
 *
 * <h2>Lifecycle and threads</h2>
 * {@link #open} builds the client and checks the bucket with {@code HeadBucket}, so a wrong endpoint, bucket or
 * credentials fail at start. Futures complete on the SDK's threads. {@link #close()} closes the client (calls in
 * flight fail), the credentials provider and the client's {@value #EVENT_LOOP_THREADS} Netty event loop threads,
 * which the store owns. Every request has an attempt timeout of
 * {@code ATTEMPT_TIMEOUT} and, with the SDK's retries, a total timeout of {@code CALL_TIMEOUT}.
 */
public final class S3ObjectStore implements ObjectStore {
    /** Where {@link #getBuffer}'s buffers come from: Netty's pooled allocator, as the filesystem store's. */
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;
    /** User metadata key ({@code x-amz-meta-nereus-write-id}) carrying the write id of a put. */
    static final String WRITE_ID = "nereus-write-id";
    static final Duration ATTEMPT_TIMEOUT = Duration.ofMinutes(2);
    static final Duration CALL_TIMEOUT = Duration.ofMinutes(5);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);
    static final int MAX_CONNECTIONS = 64;
    static final int EVENT_LOOP_THREADS = 4;
    static final int LIST_PAGE_KEYS = 1000;

    private final ObjectStoreConfig.S3 config;
    private final S3AsyncClient client;
    private final AwsCredentialsProvider credentials;
    private final SdkEventLoopGroup eventLoop;
    private final String keyPrefix;
    private final AtomicBoolean closed = new AtomicBoolean();

    private S3ObjectStore(ObjectStoreConfig.S3 config, S3AsyncClient client, AwsCredentialsProvider credentials,
            SdkEventLoopGroup eventLoop) {
        this.config = config;
        this.client = client;
        this.credentials = credentials;
        this.eventLoop = eventLoop;
        this.keyPrefix = config.prefix().isEmpty() ? "" : config.prefix() + "/";
    }

    /**
     * Builds the client and checks that the bucket exists and the credentials may use it. Fails with
     * OBJECT_STORE_REFUSED (context {@code bucket}, {@code status}, ...) when the server refuses (no such bucket,
     * access denied) and RETRIABLE_OBJECT_STORE_FAILED when it cannot be reached.
     */
    public static CompletableFuture<S3ObjectStore> open(ObjectStoreConfig.S3 config) {
        if (config == null) {
            return CompletableFuture.failedFuture(new NullPointerException("config"));
        }
        S3ObjectStore store;
        SdkEventLoopGroup eventLoop = null;
        try {
            AwsCredentialsProvider credentials = config.credentials()
                    .<AwsCredentialsProvider>map(c -> StaticCredentialsProvider.create(
                            AwsBasicCredentials.create(c.accessKeyId(), c.secretAccessKey())))
                    .orElseGet(() -> DefaultCredentialsProvider.builder().build());
            eventLoop = SdkEventLoopGroup.builder().numberOfThreads(EVENT_LOOP_THREADS).build();
            S3AsyncClientBuilder builder = S3AsyncClient.builder()
                    .httpClientBuilder(NettyNioAsyncHttpClient.builder().eventLoopGroup(eventLoop)
                            .maxConcurrency(MAX_CONNECTIONS).connectionTimeout(CONNECT_TIMEOUT))
                    .region(Region.of(config.region()))
                    .forcePathStyle(config.pathStyle())
                    .credentialsProvider(credentials)
                    .overrideConfiguration(o -> o.apiCallAttemptTimeout(ATTEMPT_TIMEOUT).apiCallTimeout(CALL_TIMEOUT));
            config.endpoint().ifPresent(builder::endpointOverride);
            store = new S3ObjectStore(config, builder.build(), credentials, eventLoop);
        } catch (RuntimeException e) {
            if (eventLoop != null) {
                eventLoop.eventLoopGroup().shutdownGracefully(0, 0, TimeUnit.SECONDS);
            }
            return CompletableFuture.failedFuture(new NereusException(ErrorCode.OBJECT_STORE_REFUSED,
                    ErrorContext.of("bucket", config.bucket(), "operation", "open", "reason",
                            ObjectErrors.describe(e)), e));
        }
        return safely(() -> store.client.headBucket(b -> b.bucket(config.bucket()))).handle((r, t) -> {
            if (t != null) {
                store.close();
                throw S3Errors.map(t, "open", "bucket", config.bucket());
            }
            return store;
        });
    }

    @Override
    public CompletableFuture<StoredObject> putNew(ObjectName name, ObjectContent content) {
        return putNew(name, content, UUID.randomUUID().toString());
    }

    /** {@link #putNew(ObjectName, ObjectContent)} with the given write id (a test repeats a put with it). */
    CompletableFuture<StoredObject> putNew(ObjectName name, ObjectContent content, String writeId) {
        Optional<RuntimeException> bad = ObjectErrors.badPut(name, content);
        if (bad.isPresent()) {
            return CompletableFuture.failedFuture(bad.get());
        }
        long length = content.length();
        if (S3Multipart.partCount(length, config.partBytes()) > S3Multipart.MAX_PARTS) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("an object of " + length
                    + " bytes needs more than " + S3Multipart.MAX_PARTS + " parts of " + config.partBytes()));
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(ObjectErrors.closed(toString()));
        }
        String key = key(name);
        Map<String, String> metadata = Map.of(WRITE_ID, writeId);
        CompletableFuture<String> etag = length <= config.partBytes()
                ? safely(() -> client.putObject(b -> b.bucket(config.bucket()).key(key).ifNoneMatch("*")
                        .contentLength(length).metadata(metadata), body(content, 0, length))
                        .thenApply(r -> r.eTag()))
                : safely(() -> new S3Multipart(client, config.bucket(), key, content, config.partBytes(), metadata)
                        .run().thenApply(r -> r.eTag()));
        return etag.thenApply(e -> new StoredObject(name, length, e)).exceptionallyCompose(t -> {
            boolean taken = S3Errors.status(t).orElse(0) == 412
                    || S3Errors.errorCode(t).orElse("").equals("NoSuchUpload"); // a completion retried after success
            return taken && !closed.get() ? ownWrite(name, writeId, t) : failed(t, "put", "name", name);
        });
    }

    /**
     * The request body of the bytes {@code [offset, offset + length)} of {@code content}: views of its arrays, or
     * the SDK's bounded reads of its file (read again when the request is retried).
     */
    static AsyncRequestBody body(ObjectContent content, long offset, long length) {
        return content.file().map(f -> AsyncRequestBody.fromFile(FileRequestBodyConfiguration.builder().path(f)
                .position(offset).numBytesToRead(length).build()))
                .orElseGet(() -> AsyncRequestBody.fromByteBuffers(content.buffers(offset, length)));
    }

    /** After a put was refused: the object if it is the one this put wrote (the write id matches), else OBJECT_EXISTS. */
    private CompletableFuture<StoredObject> ownWrite(ObjectName name, String writeId, Throwable refusal) {
        return safely(() -> client.headObject(b -> b.bucket(config.bucket()).key(key(name)))).handle((head, t) -> {
            if (t == null && writeId.equals(head.metadata().get(WRITE_ID))) {
                return new StoredObject(name, head.contentLength(), head.eTag());
            }
            if (t == null || S3Errors.noSuchKey(t)) {
                NereusException exists = ObjectErrors.exists(name);
                exists.addSuppressed(refusal);
                throw exists;
            }
            throw failure(t, "put", "name", name);
        });
    }

    @Override
    public CompletableFuture<byte[]> get(ObjectName name, ByteRange range) {
        return ranged(name, range, () -> new byte[0], AsyncResponseTransformer.toBytes(), r -> r.asByteArrayUnsafe(),
                b -> b.length, b -> { });
    }

    /**
     * As {@link #get}, the response's body written into a pooled direct buffer as it arrives ({@link IntoBuffer})
     * instead of gathered into arrays.
     */
    @Override
    public CompletableFuture<ByteBuf> getBuffer(ObjectName name, ByteRange range) {
        return ranged(name, range, () -> Unpooled.EMPTY_BUFFER, new IntoBuffer(range.length()), b -> b,
                ByteBuf::readableBytes, ByteBuf::release);
    }

    /**
     * A ranged get: its body through {@code transformer}, made the result by {@code result}, whose {@code length}
     * must be the range's ({@code release} frees a result that fails that check). An empty range is a HEAD request
     * (S3 refuses an empty byte range), answered with {@code empty}.
     */
    private <R, T> CompletableFuture<T> ranged(ObjectName name, ByteRange range, Supplier<T> empty,
            AsyncResponseTransformer<GetObjectResponse, R> transformer, Function<R, T> result,
            ToLongFunction<T> length, Consumer<T> release) {
        Optional<RuntimeException> bad = ObjectErrors.badGet(name, range);
        if (bad.isPresent()) {
            return CompletableFuture.failedFuture(bad.get());
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(ObjectErrors.closed(toString()));
        }
        CompletableFuture<T> got;
        if (range.isEmpty()) {
            got = safely(() -> client.headObject(b -> b.bucket(config.bucket()).key(key(name)))).thenApply(head -> {
                if (!range.within(head.contentLength())) {
                    throw ObjectErrors.range(name, range);
                }
                return empty.get();
            });
        } else {
            got = safely(() -> client.getObject(b -> b.bucket(config.bucket()).key(key(name))
                    .range("bytes=" + range.offset() + "-" + (range.end() - 1)), transformer))
                    .thenApply(r -> {
                        T t = result.apply(r);
                        long n = length.applyAsLong(t);
                        if (n == range.length()) {
                            return t;
                        }
                        release.accept(t);
                        if (n < range.length()) {
                            throw ObjectErrors.range(name, range); // the object ends inside the range
                        }
                        throw new NereusException(ErrorCode.OBJECT_STORE_REFUSED, ErrorContext.of("name", name,
                                "operation", "get", "reason", "the server ignored the Range header"));
                    });
        }
        return got.exceptionallyCompose(t -> {
            if (S3Errors.noSuchKey(t)) {
                return CompletableFuture.failedFuture(ObjectErrors.missing(name));
            }
            if (S3Errors.status(t).orElse(0) == 416) {
                return CompletableFuture.failedFuture(ObjectErrors.range(name, range));
            }
            return failed(t, "get", "name", name);
        });
    }

    /**
     * A ranged get's body written into one pooled direct buffer of the range's length as its parts arrive; the
     * result's one reference is the caller's. Each attempt of the client (it retries) has a buffer of its own
     * ({@link Attempt}), freed when the attempt fails.
     */
    private static final class IntoBuffer implements AsyncResponseTransformer<GetObjectResponse, ByteBuf> {
        private final int length;
        private volatile Attempt attempt;

        IntoBuffer(long length) {
            this.length = Math.toIntExact(length);
        }

        @Override
        public CompletableFuture<ByteBuf> prepare() {
            Attempt a = new Attempt();
            attempt = a;
            return a.result;
        }

        @Override
        public void onResponse(GetObjectResponse response) {
        }

        @Override
        public void onStream(SdkPublisher<ByteBuffer> publisher) {
            Attempt a = attempt;
            a.start(length);
            publisher.subscribe(a);
        }

        @Override
        public void exceptionOccurred(Throwable error) {
            attempt.fail(error);
        }
    }

    /**
     * One attempt's body: written into {@link #out} under this monitor, which the attempt's end (complete: handed to
     * the result; failed: released) takes away under it too, so a failure reported from another thread while parts
     * still arrive never frees the buffer under a write.
     */
    private static final class Attempt implements Subscriber<ByteBuffer> {
        final CompletableFuture<ByteBuf> result = new CompletableFuture<>();
        private ByteBuf out;
        private boolean ended;

        synchronized void start(int length) {
            if (!ended) {
                out = ALLOC.directBuffer(length);
            }
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public synchronized void onNext(ByteBuffer part) {
            if (out != null) {
                out.writeBytes(part);
            }
        }

        @Override
        public void onError(Throwable t) {
            fail(t);
        }

        @Override
        public void onComplete() {
            ByteBuf body = take();
            if (body != null && !result.complete(body)) {
                body.release();
            }
        }

        void fail(Throwable t) {
            ByteBuf body = take();
            if (body != null) {
                body.release();
            }
            result.completeExceptionally(t);
        }

        private synchronized ByteBuf take() {
            ended = true;
            ByteBuf body = out;
            out = null;
            return body;
        }
    }

    @Override
    public CompletableFuture<Void> delete(ObjectName name) {
        Optional<RuntimeException> bad = ObjectErrors.badName(name);
        if (bad.isPresent()) {
            return CompletableFuture.failedFuture(bad.get());
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(ObjectErrors.closed(toString()));
        }
        return safely(() -> client.deleteObject(b -> b.bucket(config.bucket()).key(key(name))))
                .<Void>thenApply(r -> null).exceptionallyCompose(t -> failed(t, "delete", "name", name));
    }

    @Override
    public CompletableFuture<List<ObjectInfo>> list(String prefix) {
        Optional<RuntimeException> bad = ObjectErrors.badPrefix(prefix);
        if (bad.isPresent()) {
            return CompletableFuture.failedFuture(bad.get());
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(ObjectErrors.closed(toString()));
        }
        return page(keyPrefix + prefix, null, new ArrayList<>()).thenApply(all -> {
            all.sort(Comparator.comparing(ObjectInfo::name));
            return all;
        }).exceptionallyCompose(t -> failed(t, "list", "prefix", prefix));
    }

    private CompletableFuture<List<ObjectInfo>> page(String keys, String token, List<ObjectInfo> found) {
        return safely(() -> client.listObjectsV2(b -> b.bucket(config.bucket()).prefix(keys).maxKeys(LIST_PAGE_KEYS)
                .continuationToken(token))).thenCompose((ListObjectsV2Response r) -> {
                    for (S3Object o : r.contents()) {
                        String name = o.key().startsWith(keyPrefix) ? o.key().substring(keyPrefix.length()) : "";
                        if (ObjectName.isValid(name)) {
                            found.add(new ObjectInfo(new ObjectName(name), o.size(), o.lastModified()));
                        }
                    }
                    if (Boolean.TRUE.equals(r.isTruncated()) && r.nextContinuationToken() != null) {
                        return page(keys, r.nextContinuationToken(), found);
                    }
                    return CompletableFuture.completedFuture(found);
                });
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            client.close();
            if (credentials instanceof SdkAutoCloseable c) {
                c.close();
            }
            // Ours, not the SDK's (which would wait out a 2 s quiet period): the client has stopped using it.
            eventLoop.eventLoopGroup().shutdownGracefully(0, CLOSE_TIMEOUT.toSeconds(), TimeUnit.SECONDS)
                    .awaitUninterruptibly(CLOSE_TIMEOUT.toMillis());
        }
    }

    /** {@code call()}, or a future failed with what it threw (the SDK may refuse a request before sending it). */
    private static <T> CompletableFuture<T> safely(Supplier<CompletableFuture<T>> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** What a request failed with, as the store reports it: CLOSED once the store is closed. */
    private NereusException failure(Throwable t, String operation, String what, Object target) {
        return closed.get() && !(Failures.unwrap(t) instanceof NereusException) ? ObjectErrors.closed(toString())
                : S3Errors.map(t, operation, what, target);
    }

    private <T> CompletableFuture<T> failed(Throwable t, String operation, String what, Object target) {
        return CompletableFuture.failedFuture(failure(t, operation, what, target));
    }

    /** The S3 key of {@code name}. */
    String key(ObjectName name) {
        return keyPrefix + name.value();
    }

    @Override
    public String toString() {
        return "S3 object store " + config;
    }
}
